// npm run bench: every benchmark in turn on a scratch PostgreSQL database that this script creates and
// drops, then one table of figure, goal and whether it was met.
//   BENCH_DATABASE_URL=postgres://... npm run bench     (default postgres://postgres@127.0.0.1:5432/postgres)
// Each benchmark reads its own BENCH_* settings (bench/README.md); BENCH_ONLY=api,start runs a subset.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { FIGURE_PREFIX, type Figure } from "./figures.ts";

// Each entry is a script under bench/ and, where it differs, the database it runs on: webhooks runs on the
// embedded PGlite too, where the database shares the sender's thread.
const BENCHES: { name: string; embedded?: boolean }[] = [
  { name: "api" },
  { name: "dispatch" },
  { name: "scale" },
  { name: "start" },
  { name: "growth" },
  { name: "webhooks" },
  { name: "webhooks", embedded: true },
];
const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const base = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

// The benchmarks create their own databases through this one and drop them; this one is dropped last, so
// nothing is left behind even when a benchmark fails half-way.
const name = `crier_bench_run_${randomBytes(4).toString("hex")}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;

const figures: (Figure & { bench: string })[] = [];
const failed: string[] = [];
try {
  for (const { name: bench, embedded } of BENCHES.filter((b) => !only || only.includes(b.name))) {
    console.log(`\n=== bench/${bench}.ts${embedded ? " (embedded PGlite)" : ""}`);
    const child = Bun.spawn([process.execPath, `bench/${bench}.ts`], {
      env: { ...process.env, BENCH_DATABASE_URL: embedded ? "" : url.toString() },
      stdout: "pipe",
      stderr: "inherit",
    });
    const decoder = new TextDecoder();
    let pending = "";
    const reader = child.stdout.getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      pending += decoder.decode(r.value, { stream: true });
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith(FIGURE_PREFIX)) figures.push({ bench, ...JSON.parse(line.slice(FIGURE_PREFIX.length)) });
        else console.log(line);
      }
    }
    if ((await child.exited) !== 0) failed.push(bench);
  }
} finally {
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
}

const rows = [
  ["figure", "value", "goal", "met"],
  ...figures.map((f) => [f.figure, f.value, f.goal, f.met ? "yes" : "NO"]),
];
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
console.log(`\n${line(rows[0])}\n|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
for (const r of rows.slice(1)) console.log(line(r));
console.log(`\n${figures.filter((f) => f.met).length} of ${figures.length} goals met.`);
if (failed.length) {
  console.log(`Benchmarks that failed: ${failed.join(", ")}`);
  process.exit(1);
}
