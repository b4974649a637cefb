// bench/start: how long until a copy answers its first 200 (GET /healthz), and its idle memory.
//   BENCH_DATABASE_URL=postgres://... npx bun bench/start.ts     (builds dist/crier first when missing)
// Cases: the compiled binary on a new embedded data directory, on the same directory again, on PostgreSQL;
// `npm start` (bun from source) on a new directory (its seed cached) and on PostgreSQL. Each case runs
// BENCH_START_RUNS=3 times and reports the median. Idle RSS is the median of 30 readings taken every 100 ms
// from 3 s after the first 200: single readings now and then caught a transient of 5–20 MB, JavaScriptCore
// compiling a hot PostgreSQL (wasm) function in its optimizing tier in the background; the lowest and
// highest readings are printed beside it. BENCH_SKIP_BINARY=1 or BENCH_SKIP_NPM=1 leaves one mode out.
// Goals: new embedded directory < 1.5 s, existing < 1 s, PostgreSQL < 0.5 s; idle RSS < 150 MB embedded,
// < 100 MB PostgreSQL.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BENCH_SECRET, scratchDatabase } from "./engine-support.ts";
import { figure } from "./figures.ts";
import { migratedSeed } from "../src/db/seed.ts";

const ROOT = resolve(import.meta.dir, "..");
const BINARY = join(ROOT, "dist", "crier");
const RUNS = Number(process.env.BENCH_START_RUNS ?? 3);

if (!existsSync(BINARY) || process.env.BENCH_BUILD) {
  const built = spawnSync(process.execPath, ["scripts/build.ts"], { cwd: ROOT, stdio: "inherit" });
  if (built.status !== 0) throw new Error("build failed");
}

const freePort = () => {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port;
  s.stop(true);
  return port;
};

interface Rss {
  median: number;
  min: number;
  max: number;
  /** At the last reading: anonymous memory (heaps) and file pages (the executable, mapped files), MB. */
  anon: number;
  file: number;
}

function rssMb(pid: number, field = "VmRSS"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024;
}

/** Seconds from spawn to the first 200 of /healthz, and the idle RSS of the serving process. */
async function start(cmd: string[], env: Record<string, string>, measureRss: boolean) {
  const port = freePort();
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      LOG_LEVEL: "warn",
      PORT: String(port),
      HOST: "127.0.0.1",
      SECRET_KEY: BENCH_SECRET,
      ...env,
    },
    stdout: "ignore",
    stderr: "pipe",
  });
  let seconds = NaN;
  while (performance.now() - t0 < 60_000) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) {
      seconds = (performance.now() - t0) / 1000;
      break;
    }
    if (proc.exitCode !== null) throw new Error(`${cmd.join(" ")} exited: ${await new Response(proc.stderr).text()}`);
    await Bun.sleep(5);
  }
  let rss: Rss | undefined;
  if (measureRss) {
    await Bun.sleep(3000);
    const readings: number[] = [];
    for (let i = 0; i < 30; i++, await Bun.sleep(100)) readings.push(rssMb(proc.pid));
    rss = {
      median: median(readings),
      min: Math.min(...readings),
      max: Math.max(...readings),
      anon: rssMb(proc.pid, "RssAnon"),
      file: rssMb(proc.pid, "RssFile"),
    };
  }
  proc.kill("SIGTERM");
  await proc.exited;
  return { seconds, rss };
}

/**
 * Data directories made by the runs, removed only when every case has run. Deleting one between runs made the
 * next run's new directory slow to create: this machine's ext4 has no journal, and its inode allocator then
 * passes over every inode freed in the last minute (longer while its table block is dirty), reading that
 * block for each (`recently_deleted` in `__ext4_new_inode`, seen with perf). Right after a 1,124-file data
 * directory was deleted, creating 1,000 files took 0.7–0.9 s of kernel time instead of 0.05 s. That cost is
 * the bench's own clean-up, not what a user starting Crier meets.
 */
const dataDirs: string[] = [];
function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "crier-bench-start-"));
  dataDirs.push(dir);
  return dir;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function cases(label: string, cmd: string[], pg: { url: string }) {
  const fresh: number[] = [];
  const again: number[] = [];
  const pgRuns: number[] = [];
  let rssEmbedded: Rss | undefined;
  let rssPg: Rss | undefined;
  for (let i = 0; i < RUNS; i++) {
    const dataDir = newDataDir();
    const first = await start(cmd, { DATA_DIR: dataDir }, i === 0);
    fresh.push(first.seconds);
    if (i === 0) rssEmbedded = first.rss;
    again.push((await start(cmd, { DATA_DIR: dataDir }, false)).seconds);
    const onPg = await start(cmd, { DATA_DIR: newDataDir(), DATABASE_URL: pg.url }, i === 0);
    pgRuns.push(onPg.seconds);
    if (i === 0) rssPg = onPg.rss;
  }
  const show = (xs: number[]) => `${median(xs).toFixed(2)} s (runs ${xs.map((x) => x.toFixed(2)).join(", ")})`;
  console.log(`${label}: new embedded directory ${show(fresh)}; existing ${show(again)}; PostgreSQL ${show(pgRuns)}`);
  const showRss = (r: Rss | undefined) =>
    r
      ? `${r.median.toFixed(0)} MB (readings ${r.min.toFixed(0)}–${r.max.toFixed(0)}; at the last, ${r.anon.toFixed(0)} MB anonymous and ${r.file.toFixed(0)} MB of files)`
      : "not measured";
  console.log(`${label}: idle RSS embedded ${showRss(rssEmbedded)}, PostgreSQL ${showRss(rssPg)}`);
  figure(
    `Start (${label}): new embedded directory → first 200`,
    `${median(fresh).toFixed(2)} s`,
    "< 1.5 s",
    median(fresh) < 1.5,
  );
  figure(
    `Start (${label}): existing embedded directory → first 200`,
    `${median(again).toFixed(2)} s`,
    "< 1 s",
    median(again) < 1,
  );
  figure(`Start (${label}): PostgreSQL → first 200`, `${median(pgRuns).toFixed(2)} s`, "< 0.5 s", median(pgRuns) < 0.5);
  const embedded = rssEmbedded?.median ?? NaN;
  const onPg = rssPg?.median ?? NaN;
  figure(`Idle RSS (${label}), embedded`, `${embedded.toFixed(0)} MB`, "< 150 MB", embedded < 150);
  figure(`Idle RSS (${label}), PostgreSQL`, `${onPg.toFixed(0)} MB`, "< 100 MB", onPg < 100);
}

const pg = await scratchDatabase();
console.log(`bench/start: ${RUNS} runs per case, medians`);
if (!process.env.BENCH_SKIP_BINARY) await cases("binary", [BINARY, "serve"], pg);
if (!process.env.BENCH_SKIP_NPM) {
  // From source, the first start after a change of migrations makes the seed and caches it (several seconds,
  // and its memory); the cases time a start that finds it, as every later one does.
  await migratedSeed();
  await cases("npm start", [process.execPath, "src/main.ts", "serve"], pg);
}
await pg.drop();
for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
process.exit(0);
