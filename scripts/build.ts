// Builds the single executable dist/crier: the server, every plugin, the migrations, PGlite's runtime and
// the docs UI assets and the dashboard bundle are embedded, so it runs from any directory with no node_modules.
import { spawnSync } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { buildDashboard } from "../src/web/bundle.ts";
import { dirname, join } from "node:path";
import { makeSeed, seedName } from "../src/db/seed.ts";

const outfile = process.env.CRIER_BUILD_OUTFILE ?? "dist/crier";
const started = performance.now();
console.log(`building ${outfile} …`);
// The dashboard is bundled first, then embedded as two files by an entry that registers them and starts
// the command line; from source the server bundles it on first request instead.
const dashboard = await buildDashboard();
mkdirSync("dist/web", { recursive: true });
writeFileSync("dist/web/dashboard.js", dashboard.js);
writeFileSync("dist/web/dashboard.css", dashboard.css);
writeFileSync(
  "dist/entry.ts",
  `import js from "./web/dashboard.js" with { type: "file" };
import css from "./web/dashboard.css" with { type: "file" };
import { embedDashboard } from "../src/web/embedded.ts";
embedDashboard({ js, css });
await import("../src/main.ts");
`,
);
// A migrated PGlite data directory rides inside the executable: a new embedded database unpacks it
// instead of running initdb and the migrations at first start (src/db/seed.ts finds it by name).
const seedFile = join(dirname(outfile), seedName());
mkdirSync(dirname(seedFile), { recursive: true });
writeFileSync(seedFile, Buffer.from(await (await makeSeed()).arrayBuffer()));
const result = spawnSync(
  process.execPath,
  ["build", "dist/entry.ts", seedFile, "--compile", "--minify-syntax", "--outfile", outfile],
  { stdio: "inherit" },
);
if (result.status !== 0) {
  console.error("build failed");
  process.exit(result.status ?? 1);
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(0);
console.log(`built ${outfile} (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
