/**
 * Claiming ahead (src/engine/pool.ts): when a platform answers about as fast as a claim comes back, a copy
 * claims a few targets beyond its free slots, so a slot that frees starts its next publish at once. The
 * platform's cap still bounds the calls in flight, every target is published once, and stop() publishes
 * what was claimed ahead instead of leaving it to its lease.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { claimAhead, claimBatch } from "../../src/engine/pool.ts";
import { engineHarness, watchCreateRecord, type EngineHarness } from "../support/engine-kit.ts";
import { until } from "../support/until.ts";

describe("claimAhead", () => {
  test("nothing ahead until both a claim and a call were timed", () => {
    expect(claimAhead(16, 0, 2)).toBe(0);
    expect(claimAhead(16, 3, 0)).toBe(0);
  });
  test("calls far slower than a claim (real platforms): nothing ahead", () => {
    expect(claimAhead(16, 3, 100)).toBe(0);
    expect(claimAhead(4, 2, 1500)).toBe(0);
  });
  test("about as many as end while a claim is on its way, never more than the cap", () => {
    expect(claimAhead(16, 3, 12)).toBe(4);
    expect(claimAhead(16, 3, 2)).toBe(16);
    expect(claimAhead(2, 3, 1)).toBe(2);
  });
});

describe("claimBatch", () => {
  test("calls as quick as a claim, or not measured yet: claim whatever freed", () => {
    expect(claimBatch(16, 0, 100)).toBe(1);
    expect(claimBatch(16, 3, 0)).toBe(1);
    expect(claimBatch(16, 3, 4)).toBe(1);
  });
  test("calls far slower than a claim: wait for twice the cap", () => {
    expect(claimBatch(16, 3, 100)).toBe(32);
    expect(claimBatch(1, 2, 1500)).toBe(2);
  });
});

const CAP = 2;
const AHEAD = 2;
let h: EngineHarness;
let accounts: string[];
let token: string;
/** createRecord calls the emulator is answering right now and the most seen at once; a gate that holds them. */
let calls: ReturnType<typeof watchCreateRecord>;
let gate: Promise<void> | null = null;

beforeAll(async () => {
  // Two ahead, as the estimate gives when calls end about as fast as claims come back (fixed here: on a
  // loaded machine the timings that make the estimate vary).
  h = await engineHarness({ env: { CRIER_BLUESKY_CONCURRENCY: String(CAP) }, engine: { claimAhead: AHEAD } });
  calls = watchCreateRecord(h.emulator, () => gate);
  const profile = await h.profile();
  token = profile.token;
  accounts = [];
  for (let i = 0; i < 8; i++) accounts.push(await h.bluesky(profile.profileId, `ahead${i}.test`));
});
afterAll(() => h?.close());

/** One target per account, due in a second; then the clock moves on so the next tick claims them together. */
async function postAll(prefix: string) {
  const publishAt = new Date(h.clock.now().getTime() + 1000).toISOString();
  for (const [i, account] of accounts.entries()) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: { content: `${prefix}${i}`, publish_at: publishAt, targets: [{ account_id: account }] },
    });
    expect(res.status).toBe(201);
  }
  h.clock.advance(1000);
}

const statuses = async (prefix: string) =>
  (
    await h.db.rows<{ status: string }>(
      sql`select t.status from post_targets t join posts p on p.id = t.post_id where p.content like ${prefix + "%"}`,
    )
  ).map((r) => r.status);

test("quick answers: the cap bounds the calls, claims run ahead of it, and stop() publishes what they took", async () => {
  // Quick answers first.
  for (let round = 0; round < 3; round++) {
    await postAll(`warm ${round}-`);
    await h.engine.runUntilIdle();
  }
  expect(calls.most).toBeLessThanOrEqual(CAP);

  // Now the platform holds every answer: the claim fills the two slots, and takes targets ahead of them.
  let release!: () => void;
  gate = new Promise((r) => (release = r));
  await postAll("held ");
  const ticked = h.engine.tick();
  await until("both slots calling", () => (calls.now === CAP ? true : undefined), 5, 5);
  await ticked;
  const claimed = (await statuses("held ")).filter((s) => s === "processing").length;
  console.log(`claim ahead: ${claimed} of 8 targets claimed with ${CAP} slots`);
  expect(claimed).toBe(CAP + AHEAD);
  expect(calls.now).toBe(CAP);

  // Stopping: no new claims, but what was claimed (in flight or waiting for a slot) is published.
  const stopped = h.engine.stop();
  release();
  await stopped;
  const held = await statuses("held ");
  expect(held.filter((s) => s === "published").length).toBe(claimed);
  expect(held.filter((s) => s === "processing")).toEqual([]);
  expect(calls.most).toBe(CAP);
  const texts = h.emulator.posts().map((p) => p.text);
  expect(texts.length).toBe(new Set(texts).size);
});
