// Builds the single executable dist/crier: the server, every plugin, the migrations, PGlite's runtime and
// the docs UI assets and the dashboard bundle are embedded, so it runs from any directory with no node_modules.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
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
// sharp's native addon is embedded by the bundler (a static require); the libvips library it links
// against is not, so it is embedded as a file and registered before sharp loads (src/media/tools.ts).
const libvips = libvipsFile();
writeFileSync(
  "dist/entry.ts",
  `import js from "./web/dashboard.js" with { type: "file" };
import css from "./web/dashboard.css" with { type: "file" };
import libvips from ${JSON.stringify(`../${libvips}`)} with { type: "file" };
import { embedDashboard } from "../src/web/embedded.ts";
import { embedLibvips } from "../src/media/tools.ts";
embedDashboard({ js, css });
embedLibvips(libvips);
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

/** node_modules/@img/sharp-libvips-<platform>/lib/libvips-cpp.so.<version>, as npm installed it for this machine. */
function libvipsFile(): string {
  const img = "node_modules/@img";
  // This machine's glibc build first (linux-x64), then any other npm put there (linuxmusl-x64 on Alpine).
  const exact = `sharp-libvips-${process.platform}-${process.arch}`;
  const packages = readdirSync(img)
    .filter((d) => d.startsWith("sharp-libvips-") && d.endsWith(`-${process.arch}`))
    .sort((a, b) => Number(b === exact) - Number(a === exact));
  for (const pkg of packages) {
    const lib = join(img, pkg, "lib");
    const file = readdirSync(lib).find((f) => /^libvips-cpp\.so\.\d/.test(f));
    if (file) return join(lib, file);
  }
  console.error(
    `build failed: no libvips-cpp.so.* under ${img}/sharp-libvips-*/lib (npm ci installs sharp's for this platform)`,
  );
  process.exit(1);
}
