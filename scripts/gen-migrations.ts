// Generates a migration from src/db/schema.ts with drizzle-kit, then rewrites migrations/index.ts so every
// SQL file (the numbered migrations and migrations/functions) is embedded in the compiled binary.
// Run: npm run db:generate [-- --name=what_changed]
// After adding a hand-written migration or a function file: bun scripts/gen-migrations.ts --index-only
import { writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { migrationIndex } from "./migration-index.ts";

const args = process.argv.slice(2);
if (!args.includes("--index-only")) {
  const kit = spawnSync("node_modules/.bin/drizzle-kit", ["generate", ...args], { stdio: "inherit" });
  if (kit.status !== 0) process.exit(kit.status ?? 1);
}
const index = migrationIndex();
writeFileSync("migrations/index.ts", index);
console.log(`migrations/index.ts: ${index.match(/^import [mf]\d+ /gm)?.length ?? 0} file(s)`);
