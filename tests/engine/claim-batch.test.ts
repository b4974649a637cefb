/**
 * Batches where the platform answers slowly (src/engine/pool.ts claimBatch, src/engine/recorder.ts): a
 * claim waits until a batch of the platform's slots can be filled, and the results of the publishes
 * ride along with the next claim instead of a write each. What a user sees is unchanged: every target
 * published exactly once, never more calls in flight than the cap; what the database sees is a claim per
 * batch, not one per target.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { engineHarness, watchCreateRecord, type EngineHarness } from "../support/engine-kit.ts";

const CAP = 4;
const ACCOUNTS = 12;
const TARGETS = 48;
const CALL_MS = 60;
let h: EngineHarness;
let calls: ReturnType<typeof watchCreateRecord>;

beforeAll(async () => {
  // No fixed claimAhead: the engine sizes its batches as it does in production.
  h = await engineHarness({ env: { CRIER_BLUESKY_CONCURRENCY: String(CAP) } });
  calls = watchCreateRecord(h.emulator, () => Bun.sleep(CALL_MS));
}, 30_000);
afterAll(() => h?.close());

test("a slow platform: claims take a batch at a time, results ride along, each target published once", async () => {
  const profile = await h.profile();
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accounts.push(await h.bluesky(profile.profileId, `batch${i}.test`));
  const publishAt = new Date(h.clock.now().getTime() + 1000).toISOString();
  for (let i = 0; i < TARGETS; i++) {
    const res = await h.request("POST", "/v1/posts", {
      token: profile.token,
      body: { content: `batch ${i}`, publish_at: publishAt, targets: [{ account_id: accounts[i % ACCOUNTS] }] },
    });
    expect(res.status).toBe(201);
  }
  h.clock.advance(1000);
  await h.engine.runUntilIdle();

  const rows = await h.db.rows<{ status: string; n: number }>(
    sql`select status, count(*)::int as n from post_targets group by 1`,
  );
  expect(rows).toEqual([{ status: "published", n: TARGETS }]);
  const texts = h.emulator.posts().map((p) => p.text);
  expect(texts.length).toBe(TARGETS);
  expect(new Set(texts).size).toBe(TARGETS);
  expect(calls.most).toBeLessThanOrEqual(CAP);
  // Claimed as slots freed one at a time, this took about one claim per target; in batches of the cap,
  // about one per CAP targets, plus the claims that find nothing at the end.
  const { claims, claimed } = h.engine.claimStats();
  console.log(`claim batches: ${claimed} targets in ${claims} claims`);
  expect(claimed).toBe(TARGETS);
  expect(claimed / claims).toBeGreaterThanOrEqual(CAP / 2);
}, 60_000);
