// Builds the single executable dist/crier: the server, every plugin, the migrations, PGlite's runtime and
// the docs UI assets are embedded, so it runs from any directory with no node_modules.
import { spawnSync } from "node:child_process";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { makeSeed, seedName } from "../src/db/seed.ts";

const outfile = process.env.CRIER_BUILD_OUTFILE ?? "dist/crier";
const started = performance.now();
console.log(`building ${outfile} …`);
// A migrated PGlite data directory rides inside the executable: a new embedded database unpacks it
// instead of running initdb and the migrations at first start (src/db/seed.ts finds it by name).
const seedFile = join(dirname(outfile), seedName());
mkdirSync(dirname(seedFile), { recursive: true });
writeFileSync(seedFile, Buffer.from(await (await makeSeed()).arrayBuffer()));
const result = spawnSync(
  process.execPath,
  ["build", "src/main.ts", seedFile, "--compile", "--minify-syntax", "--outfile", outfile],
  { stdio: "inherit" },
);
if (result.status !== 0) {
  console.error("build failed");
  process.exit(result.status ?? 1);
}
const mb = (statSync(outfile).size / 1024 / 1024).toFixed(0);
console.log(`built ${outfile} (${mb} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
