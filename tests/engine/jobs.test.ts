import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import type { PeriodicJob } from "../../src/engine/jobs.ts";
import { createHarness, type Harness } from "../support/harness.ts";

// Periodic engine jobs (the seam workflows and analytics run on): two copies share one database, and a
// job runs at most once per period and never twice at once, whichever copy ticks.

let h: Harness;
let a: Engine;
let b: Engine;
let runs: string[] = [];
let gate: Promise<void> | undefined;
let failNext = false;

const job: PeriodicJob = {
  name: "test-counter",
  everyMs: 60_000,
  async run() {
    runs.push(h.clock.now().toISOString());
    await gate;
    if (failNext) {
      failNext = false;
      throw new Error("the job failed");
    }
  },
};

beforeAll(async () => {
  h = await createHarness();
  a = createEngine(h.ctx, { id: "copy-a", jobs: [job], leaseMs: 30_000 });
  b = createEngine(h.ctx, { id: "copy-b", jobs: [job], leaseMs: 30_000 });
});
afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await h?.close();
});

test("a job runs once per period across copies, the first time at once", async () => {
  await a.runUntilIdle();
  await b.runUntilIdle();
  await a.runUntilIdle();
  expect(runs).toHaveLength(1);
  h.clock.advance(59_000);
  await b.runUntilIdle();
  await a.runUntilIdle();
  expect(runs).toHaveLength(1);
  h.clock.advance(1_000);
  await b.runUntilIdle();
  await a.runUntilIdle();
  expect(runs).toHaveLength(2);
});

test("while one copy runs the job the other does not start it, even when its period passed", async () => {
  h.clock.advance(60_000);
  let open!: () => void;
  gate = new Promise((r) => {
    open = r;
  });
  const first = a.runUntilIdle();
  while (runs.length < 3) await Bun.sleep(5);
  h.clock.advance(20_000);
  await b.tick();
  expect(runs).toHaveLength(3);
  open();
  await first;
  gate = undefined;
  // The next period counts from the end of the run.
  h.clock.advance(59_000);
  await b.runUntilIdle();
  expect(runs).toHaveLength(3);
  h.clock.advance(1_000);
  await b.runUntilIdle();
  expect(runs).toHaveLength(4);
});

test("a failed run waits a period like a successful one", async () => {
  h.clock.advance(60_000);
  failNext = true;
  await a.runUntilIdle();
  expect(runs).toHaveLength(5);
  h.clock.advance(30_000);
  await b.runUntilIdle();
  expect(runs).toHaveLength(5);
  h.clock.advance(30_000);
  await b.runUntilIdle();
  expect(runs).toHaveLength(6);
});

test("a copy that died mid-run holds the job until its lease expires, then another copy runs it", async () => {
  h.clock.advance(60_000);
  // As a copy that took the lease and then died leaves it.
  const until = new Date(h.clock.now().getTime() + 30_000).toISOString();
  await h.db.rows(
    sql`update engine_jobs set held_by = 'dead-copy', lease_until = ${until}::timestamptz where name = 'test-counter'`,
  );
  await a.runUntilIdle();
  expect(runs).toHaveLength(6);
  h.clock.advance(30_001);
  await a.runUntilIdle();
  expect(runs).toHaveLength(7);
  const [row] = await h.db.rows<{ held_by: string | null }>(
    sql`select held_by from engine_jobs where name = 'test-counter'`,
  );
  expect(row.held_by).toBeNull();
});

test("a job with a first delay runs first that long after it appears in the database, then once per period", async () => {
  const later: string[] = [];
  const delayed: PeriodicJob = {
    name: "test-delayed",
    everyMs: 60_000,
    firstRunAfterMs: 3_600_000,
    async run() {
      later.push(h.clock.now().toISOString());
    },
  };
  const c = createEngine(h.ctx, { id: "copy-c", jobs: [delayed], leaseMs: 30_000 });
  const d = createEngine(h.ctx, { id: "copy-d", jobs: [delayed], leaseMs: 30_000 });
  try {
    await c.runUntilIdle();
    await d.runUntilIdle();
    expect(later).toHaveLength(0);
    h.clock.advance(3_599_000);
    await d.runUntilIdle();
    expect(later).toHaveLength(0);
    h.clock.advance(1_000);
    await d.runUntilIdle();
    await c.runUntilIdle();
    expect(later).toHaveLength(1);
    h.clock.advance(60_000);
    await c.runUntilIdle();
    expect(later).toHaveLength(2);
  } finally {
    await c.stop();
    await d.stop();
  }
});
