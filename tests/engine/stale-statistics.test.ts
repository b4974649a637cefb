/**
 * The periodic statements that run on every tick of every copy keep to their own small indexes when the
 * planner's statistics predate a burst: taken while the targets were still scheduled, as on a server whose
 * autovacuum has not analysed post_targets since (or runs without it). Read through (status, due_at)
 * instead, each tick read every published target to find nothing.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { rowsOf } from "../../src/db/client.ts";
import { claimCommentsStatement } from "../../src/engine/first-comment-sql.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const TARGETS = 3000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile();
  const accountId = await storedBlueskyAccount(h.ctx, p.profileId, "stale-statistics");
  await h.db.rows(sql`
    with p as (
      insert into posts (profile_id, content) select ${p.profileId}::uuid, 'burst post ' || i
      from generate_series(1, ${TARGETS}) as i returning id
    )
    insert into post_targets (post_id, profile_id, account_id, platform, status, due_at)
    select id, ${p.profileId}::uuid, ${accountId}::uuid, 'bluesky', 'scheduled', now() from p`);
  await h.db.rows(sql`analyze post_targets`);
  // The burst is published; the statistics still say every target is scheduled.
  await h.db.rows(sql`
    update post_targets set status = 'published', platform_post_id = 'at://did:plc:stale/' || id, published_at = now()`);
});
afterAll(() => h?.close());

/** Buffer pages `statement` read, run under EXPLAIN ANALYZE in a transaction that is rolled back. */
async function pagesRead(statement: SQL): Promise<number> {
  let pages = -1;
  await h.db.db
    .transaction(async (tx) => {
      const [row] = rowsOf<{ "QUERY PLAN": [{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }] }>(
        await tx.execute(sql`explain (analyze, buffers, format json) ${statement}`),
      );
      const plan = row["QUERY PLAN"][0].Plan;
      pages = plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
      tx.rollback();
    })
    .catch(() => {});
  return pages;
}

test("leasing due first comments reads only first comments, not every published target", async () => {
  const now = new Date(Date.now() + 60_000);
  const statement = claimCommentsStatement({ now, leaseUntil: now, claimedBy: "copy-1", limit: 8 });
  const pages = await pagesRead(statement);
  expect(pages).toBeGreaterThanOrEqual(0);
  expect(pages).toBeLessThan(10);
});
