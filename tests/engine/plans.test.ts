/**
 * The engine's hot statements are prepared or plpgsql, so after a few calls PostgreSQL runs the generic
 * plan it cached for them, planned without the values. A generic plan that scans post_targets costs
 * nothing on a new server and grows with every post ever made: the recorder's batch took 24 ms among
 * 10,000 targets before its rows were found through the primary key. These tests run each statement on its
 * generic plan over a table of published targets and count the scans of the whole table.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql, type SQL } from "drizzle-orm";
import { rowsOf } from "../../src/db/client.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  const p = await h.profile();
  const accountId = await storedBlueskyAccount(h.ctx, p.profileId, "plans");
  // What a server that has been publishing for a while holds: targets published long ago, none claimed now.
  await h.db.rows(sql`
    with p as (
      insert into posts (profile_id, content) select ${p.profileId}::uuid, 'old post ' || i
      from generate_series(1, 5000) as i returning id
    )
    insert into post_targets (post_id, profile_id, account_id, platform, status, published_at)
    select id, ${p.profileId}::uuid, ${accountId}::uuid, 'bluesky', 'published', now() from p`);
  await h.db.rows(sql`analyze post_targets`);
});
afterAll(() => h?.close());

/**
 * How many times `call` scanned the whole of post_targets, with every statement on the generic plan (as
 * PostgreSQL runs a prepared statement, and a plpgsql function's statements, after a few calls).
 */
async function tableScans(call: SQL): Promise<number> {
  return h.db.db.transaction(async (tx) => {
    await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
    const scans = async () =>
      rowsOf<{ n: number }>(
        await tx.execute(sql`select pg_stat_get_xact_numscans('post_targets'::regclass)::int as n`),
      )[0].n;
    const before = await scans();
    await tx.execute(call);
    return (await scans()) - before;
  });
}

/** A result for `id` as the recorder writes it (src/engine/recorder.ts). */
const resultRows = (id: string) =>
  JSON.stringify([{ id, status: "published", held_as: "processing", at: new Date().toISOString() }]);

describe("generic plans of the engine's hot statements", () => {
  test("writing a batch of results finds its targets through the primary key, not a scan of every target", async () => {
    const id = crypto.randomUUID();
    expect(
      await tableScans(sql`select crier_record_results(${resultRows(id)}::jsonb, ${`{${id}}`}::uuid[], 'copy-1')`),
    ).toBe(0);
  });

  test("a claim scans no whole table either", async () => {
    const now = new Date().toISOString();
    expect(
      await tableScans(sql`select * from crier_claim(${now}::timestamptz, ${now}::timestamptz + interval '1 minute',
        'copy-1', '{"bluesky": 16}'::jsonb, 16, '{}'::uuid[], null)`),
    ).toBe(0);
  });

  test("a claim for one post (publish now) reads that post's targets only", async () => {
    // crier_claim always runs on its generic plan (0021): the branch for one post must not scan either.
    const now = new Date().toISOString();
    expect(
      await tableScans(sql`select * from crier_claim(${now}::timestamptz, ${now}::timestamptz + interval '1 minute',
        'copy-1', '{"bluesky": 16}'::jsonb, 16, '{}'::uuid[], ${crypto.randomUUID()}::uuid)`),
    ).toBe(0);
  });
});
