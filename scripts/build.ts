// Builds the single executable dist/crier: the server, every plugin, the migrations, PGlite's runtime and
// the docs UI assets are embedded, so it runs from any directory with no node_modules.
import { spawnSync } from "node:child_process";
import { statSync } from "node:fs";

const outfile = process.env.CRIER_BUILD_OUTFILE ?? "dist/crier";
const started = performance.now();
console.log(`building ${outfile} …`);
const result = spawnSync(
  process.execPath,
  ["build", "src/main.ts", "--compile", "--minify-syntax", "--outfile", outfile],
  { stdio: "inherit" },
);
if (result.status !== 0) {
  console.error("build failed");
  process.exit(result.status ?? 1);
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(0);
console.log(`built ${outfile} (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
