// One copy of the engine for bench/dispatch.ts, in its own process like a `crier serve` copy.
// Env: BENCH_DB_URL, CRIER_BLUESKY_API_URL, COPY_ID, MODE (drain | ticks), BENCH_UNTIL (optional). Prints
// "ready", waits for "go"; in drain mode, "stop" (the parent saw every target answered) ends it early.
import { sql } from "drizzle-orm";
import { createEngine, startEngine } from "../src/engine/scheduler.ts";
import { benchContext } from "./engine-support.ts";

const poolSize = Number(process.env.BENCH_POOL_SIZE ?? 10);
const ctx = benchContext(
  process.env.BENCH_DB_URL!,
  // Platform settings, and PUBLISH_CONCURRENCY where a regime raises the copy's slots (bench/scale).
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => k.startsWith("CRIER_") || k === "PUBLISH_CONCURRENCY"),
  ) as Record<string, string>,
  poolSize,
);
// Every connection of the pool is open before "ready", as a serving copy's are long before a burst: a
// new PostgreSQL backend's start (≈ 10 ms of its CPU, and its catalog caches filled again) is the
// process's, not the publishes'. Counted in the drain, four copies' forty connections weighed on their
// 20,000 targets four times as much as one copy's ten (bench/scale (d)).
await Promise.all(Array.from({ length: poolSize }, () => ctx.db.rows(sql`select pg_sleep(0.02)`)));
await warmClaims();

/**
 * Each connection has also run the engine's claim once, as a serving copy's have at their first ticks: a
 * backend compiles crier_record_and_claim, crier_claim and crier_record_results and plans their statements
 * on its first call (a fresh backend's first claim took 22–25 ms on a 2-core machine, its second 9–11 ms).
 * Counted in the drain, four copies' forty first calls weighed on (d)'s 20,000 targets four times as much
 * as one copy's ten. Every connection is held in a transaction of its own, the claims run one at a time (concurrent
 * ones would find each other's accounts locked and skip the second statement), and each is rolled back.
 */
async function warmClaims() {
  const now = new Date();
  const call = sql`select count(*) from crier_record_and_claim('[]'::jsonb, '{}'::uuid[], ${now.toISOString()}::timestamptz,
    ${new Date(now.getTime() + 60_000).toISOString()}::timestamptz, 'warm-up', '{"bluesky": 1}'::jsonb, 1, '{}'::uuid[], null)`;
  let turn = Promise.resolve();
  const rolledBack = new Error("rolled back");
  await Promise.all(
    Array.from({ length: poolSize }, () =>
      ctx.db.db
        .transaction(async (tx) => {
          await tx.execute(sql`select 1`);
          const mine = turn.then(() => tx.execute(call));
          turn = mine.then(() => {});
          await mine;
          throw rolledBack;
        })
        .catch((e: unknown) => {
          if (e !== rolledBack) throw e;
        }),
    ),
  );
}
/** A serving copy's tick (src/engine/scheduler.ts ticks every second). */
const TICK_MS = 1000;
/**
 * Whether anything is still to publish (1) or not (0). An existence check, which stops at the first such
 * target: a copy that finished first asks once a tick until the others are done, on the bench database
 * whose CPU is counted. When it asked every 50 ms, a count of every remaining target (3.5 ms and 1,235
 * buffer pages a call in bench/dispatch) weighed up to a quarter of two copies' PostgreSQL CPU per target in (b).
 */
const waiting = async () =>
  (
    await ctx.db.rows<{ n: number }>(
      // BENCH_UNTIL bounds the run to targets due by then (bench/growth has a million more due later).
      sql`select (exists (select 1 from post_targets where status in ('pending', 'scheduled', 'processing')
        and due_at <= ${process.env.BENCH_UNTIL ?? "infinity"}::timestamptz))::int as n`,
    )
  )[0].n;

let pubN = 0,
  pubMs = 0;
if (process.env.BENCH_VERBOSE) {
  const pl = ctx.platforms.get("bluesky")!;
  const orig = pl.publish!;
  (pl as { publish: typeof orig }).publish = async (c, j) => {
    const t = performance.now();
    try {
      return await orig(c, j);
    } finally {
      pubN++;
      pubMs += performance.now() - t;
    }
  };
}
console.log("ready");
// "go" on stdin starts the run; "stop" may follow.
let stopAsked = false;
let onStop = () => {};
const stopped = new Promise<void>((resolve) => (onStop = resolve));
await new Promise<void>((resolve) => {
  let buf = "";
  process.stdin.on("data", (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split("\n");
    if (lines.includes("go")) resolve();
    if (lines.includes("stop")) {
      stopAsked = true;
      onStop();
      process.stdin.pause();
    }
  });
});
if (process.env.MODE === "ticks") {
  // As `crier serve` runs it: croner ticks every second plus wake-ups for the next due target.
  const engine = startEngine(ctx, { id: process.env.COPY_ID });
  while ((await waiting()) > 0) await Bun.sleep(200);
  await engine.stop();
} else {
  const engine = createEngine(ctx, { id: process.env.COPY_ID });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  // runUntilIdle returns when this copy finds nothing to claim; another copy may still hold the last
  // accounts, and claims their next targets itself as each publish ends. This copy looks again at its next
  // tick, a second later, as a serving copy does, unless the parent says every target was answered. It
  // looked every 50 ms before: each look is a tick's chores and two claims that find nothing. In bench/
  // dispatch (b) with two copies those looks made 40 empty claims and half the drain's 730 statements (13
  // and 380 since); the drain cost PostgreSQL 1.10 × the instant drain's CPU per target (0.89 × since).
  let rounds = 0,
    firstIdleMs = 0;
  for (;;) {
    await engine.runUntilIdle();
    if (++rounds === 1) firstIdleMs = performance.now() - t0;
    if (stopAsked || (await waiting()) === 0) break;
    await Promise.race([Bun.sleep(TICK_MS), stopped]);
    if (stopAsked) break;
  }
  const { claims, claimed, empty } = engine.claimStats();
  const cpu = process.cpuUsage(cpu0);
  const doneMs = Math.round(performance.now() - t0);
  console.log(
    `claims ${JSON.stringify({ claims, claimed, empty, cpuMs: (cpu.user + cpu.system) / 1000, rounds, firstIdleMs: Math.round(firstIdleMs), doneMs })}`,
  );
  if (process.env.BENCH_VERBOSE)
    console.error(
      `${process.env.COPY_ID}: drained in ${(performance.now() - t0).toFixed(0)} ms, plugin publish ${(pubMs / pubN).toFixed(1)} ms avg, CPU ${((process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000 / claimed).toFixed(3)} ms per target`,
    );
  await engine.stop();
}
await ctx.db.close();
console.log("done");
process.exit(0);
