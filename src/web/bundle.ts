import { createHash } from "node:crypto";
import { join } from "node:path";
import { embeddedDashboard } from "./embedded.ts";

export interface DashboardBundle {
  js: string;
  css: string;
  /** A hash of both, in the asset URLs so a browser never mixes an old script with a new page. */
  version: string;
}

const ENTRY = join(import.meta.dir, "main.tsx");
const STYLES = join(import.meta.dir, "styles.css");

/** Bundles the dashboard from src/web with Bun's bundler: one script, one stylesheet, nothing fetched from elsewhere. */
export async function buildDashboard(): Promise<{ js: string; css: string }> {
  const result = await Bun.build({ entrypoints: [ENTRY], target: "browser", minify: true, format: "esm" });
  if (!result.success) throw new AggregateError(result.logs, "the dashboard does not build");
  const script = result.outputs.find((o) => o.kind === "entry-point");
  if (!script) throw new Error("the dashboard build produced no script");
  return { js: await script.text(), css: await Bun.file(STYLES).text() };
}

let loading: Promise<DashboardBundle> | undefined;

/** The embedded bundle in the executable; from source, built once on first use and kept. */
export function dashboardBundle(): Promise<DashboardBundle> {
  loading ??= (async () => {
    const files = embeddedDashboard();
    const { js, css } = files
      ? { js: await Bun.file(files.js).text(), css: await Bun.file(files.css).text() }
      : await buildDashboard();
    const version = createHash("sha256").update(js).update(css).digest("hex").slice(0, 12);
    return { js, css, version };
  })();
  // A failed build is not cached: fixing the source and reloading the page tries again.
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
