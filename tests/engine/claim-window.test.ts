/**
 * How far a claim looks (crier_claim step 1): of the window of first due targets, it locks and reads only
 * the accounts it can take, platform by platform, so one platform's backlog at the front of the queue
 * never takes the slots another platform has free.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { claimDue } from "../../src/engine/claim.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

let h: EngineHarness;
/** Bluesky accounts, each with one target, due before any of the Telegram ones. */
const bluesky: string[] = [];
const telegram: string[] = [];

beforeAll(async () => {
  h = await engineHarness();
  const { profileId, token } = await h.profile();
  for (let i = 0; i < 12; i++) bluesky.push(await h.bluesky(profileId, `claim-window-${i}.test`));
  for (let i = 0; i < 4; i++) telegram.push((await h.telegram(profileId, `@claimwindow${i}`)).accountId);
  for (const [i, account] of [...bluesky, ...telegram].entries()) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: `post ${i}`,
        publish_at: new Date(h.clock.now().getTime() + 1000 + i * 100).toISOString(),
        targets: [{ account_id: account }],
      },
    });
    expect(res.status).toBe(201);
  }
  h.clock.advance(60_000);
});
afterAll(() => h?.close());

test("a claim locks only the accounts it takes, not every account of the targets it looked at", async () => {
  const now = h.clock.now();
  const rolledBack = new Error("rolled back");
  let claimed: { account_id: string }[] = [];
  let locks = 0;
  await h.db.db
    .transaction(async (tx) => {
      claimed = await h.db.rows(
        sql`select account_id from crier_claim(${now.toISOString()}::timestamptz,
          ${new Date(now.getTime() + 60_000).toISOString()}::timestamptz, 'window', '{"bluesky": 2}'::jsonb, 2,
          '{}'::uuid[], null)`,
        tx,
      );
      [{ n: locks }] = await h.db.rows<{ n: number }>(
        sql`select count(*)::int as n from pg_locks where locktype = 'advisory' and pid = pg_backend_pid()`,
        tx,
      );
      throw rolledBack;
    })
    .catch((e: unknown) => {
      if (e !== rolledBack) throw e;
    });
  expect(claimed.map((r) => r.account_id).sort()).toEqual(bluesky.slice(0, 2).sort());
  // The window was the first 8 due targets (four times the limit), of 8 accounts: the 6 it could not
  // take are left for other claimers to lock.
  expect(locks).toBe(2);
});

test("one platform's backlog at the front of the queue leaves another platform's free slots to it", async () => {
  const now = h.clock.now();
  const claimed = await claimDue(h.db, {
    now,
    leaseUntil: new Date(now.getTime() + 60_000),
    claimedBy: "window",
    caps: { bluesky: 1, telegram: 3 },
    limit: 4,
    busyAccounts: [],
  });
  expect(claimed.filter((t) => t.platform === "bluesky").map((t) => t.accountId)).toEqual([bluesky[0]]);
  expect(
    claimed
      .filter((t) => t.platform === "telegram")
      .map((t) => t.accountId)
      .sort(),
  ).toEqual(telegram.slice(0, 3).sort());
});

test("a claim for platforms with nothing due reads none of the targets waiting for other platforms", async () => {
  const now = h.clock.now();
  const fetched = await h.db.db.transaction(async (tx) => {
    const count = async () =>
      (
        await h.db.rows<{ n: number }>(
          sql`select coalesce(sum(pg_stat_get_xact_tuples_fetched(indexrelid)), 0)::int as n from pg_index
            where indrelid = 'post_targets'::regclass`,
          tx,
        )
      )[0].n;
    const before = await count();
    const claimed = await h.db.rows(
      sql`select * from crier_claim(${now.toISOString()}::timestamptz,
        ${new Date(now.getTime() + 60_000).toISOString()}::timestamptz, 'window', '{"pinterest": 4, "reddit": 4}'::jsonb,
        8, '{}'::uuid[], null)`,
      tx,
    );
    expect(claimed).toEqual([]);
    return (await count()) - before;
  });
  // Eleven Bluesky targets are still waiting: the claim for two other platforms reads none of them.
  expect(fetched).toBe(0);
});
