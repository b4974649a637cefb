/**
 * A slow platform whose due targets belong to fewer accounts than it has slots (the tail of a big drain,
 * or a few accounts with long queues): every claim comes up short, and each ended publish frees one
 * account. Claiming again at every end took one or two targets per claim; the engine waits for several of
 * the platform's publishes to end (src/engine/pool.ts dryFor), so a claim takes several targets. What a user
 * sees is unchanged: every target published once, in each account's order.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { engineHarness, watchCreateRecord, type EngineHarness } from "../support/engine-kit.ts";

const CAP = 32;
const ACCOUNTS = 8;
const PER_ACCOUNT = 6;
const CALL_MS = 60;
let h: EngineHarness;

beforeAll(async () => {
  h = await engineHarness({ env: { CRIER_BLUESKY_CONCURRENCY: String(CAP) } });
  watchCreateRecord(h.emulator, () => Bun.sleep(CALL_MS));
}, 30_000);
afterAll(() => h?.close());

test("fewer accounts than slots on a slow platform: claims take several targets, not one per ended publish", async () => {
  const profile = await h.profile();
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accounts.push(await h.bluesky(profile.profileId, `tail${i}.test`));
  const start = h.clock.now().getTime();
  for (let n = 0; n < PER_ACCOUNT; n++)
    for (const [i, account] of accounts.entries()) {
      const res = await h.request("POST", "/v1/posts", {
        token: profile.token,
        body: {
          content: `tail ${i}-${n}`,
          publish_at: new Date(start + 1000 + n * 10).toISOString(),
          targets: [{ account_id: account }],
        },
      });
      expect(res.status).toBe(201);
    }
  h.clock.advance(2000);
  await h.engine.runUntilIdle();

  const rows = await h.db.rows<{ status: string; n: number }>(
    sql`select status, count(*)::int as n from post_targets group by 1`,
  );
  expect(rows).toEqual([{ status: "published", n: ACCOUNTS * PER_ACCOUNT }]);
  const texts = h.emulator.posts().map((p) => p.text);
  expect(new Set(texts).size).toBe(ACCOUNTS * PER_ACCOUNT);
  // Each account's posts went out in their order.
  for (let i = 0; i < ACCOUNTS; i++)
    expect(texts.filter((t) => t.startsWith(`tail ${i}-`))).toEqual(
      Array.from({ length: PER_ACCOUNT }, (_, n) => `tail ${i}-${n}`),
    );
  const { claims, claimed } = h.engine.claimStats();
  console.log(`tail: ${claimed} targets in ${claims} claims`);
  expect(claimed).toBe(ACCOUNTS * PER_ACCOUNT);
  expect(claimed / claims).toBeGreaterThanOrEqual(ACCOUNTS / 2);
}, 60_000);
