/**
 * Published targets become analytics items (src/engine/analytics-track.ts): every one, a batch of them a
 * statement, and one whose platform post already has another target's item holds none of the rest back.
 * After the first pass, a pass reads only what was published since the one before (a window with
 * some overlap); a full pass within the hour catches what the window could not see.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import {
  type Cursor,
  TRACK_BATCH,
  TRACK_FULL_EVERY_MS,
  TRACK_OVERLAP_MS,
  trackBatchStatement,
  trackPublishedTargets,
} from "../../src/engine/analytics-track.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

let h: EngineHarness;
const ZERO = "00000000-0000-0000-0000-000000000000";
/** Target ids of the published posts, in id order (the order tracking takes them in). */
let targets: string[] = [];

beforeAll(async () => {
  h = await engineHarness();
  const { profileId, token } = await h.profile();
  const account = await h.bluesky(profileId, "analytics-track.test");
  for (let i = 0; i < 7; i++) {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: { content: `tracked ${i}`, targets: [{ account_id: account }] },
    });
    expect(res.status).toBe(201);
  }
  await h.engine.runUntilIdle();
  targets = (
    await h.db.rows<{ id: string }>(sql`select id from post_targets where status = 'published' order by id`)
  ).map((r) => r.id);
  expect(targets).toHaveLength(7);
});
afterAll(() => h?.close());

const tracked = async () =>
  (
    await h.db.rows<{ target_id: string }>(
      sql`select target_id from analytics_items where target_id is not null order by target_id`,
    )
  ).map((r) => r.target_id);

test("every published target gets its item, however many batches it takes", async () => {
  await h.db.rows(sql`delete from analytics_items`);
  await trackPublishedTargets(h.db, h.clock.now(), 2);
  expect(await tracked()).toEqual(targets);
  // Nothing new: nothing made twice.
  await trackPublishedTargets(h.db, h.clock.now(), 2);
  expect(await tracked()).toEqual(targets);
});

test("a target whose platform post already has another target's item holds none of the rest back", async () => {
  await h.db.rows(sql`delete from analytics_items`);
  // The first two targets by id name the same platform post: the second can have no item of its own, and
  // with one target a statement it comes up again and again unless tracking moves past it.
  await h.db.rows(sql`
    update post_targets set platform_post_id = (select platform_post_id from post_targets where id = ${targets[0]}::uuid)
    where id = ${targets[1]}::uuid`);
  await trackPublishedTargets(h.db, h.clock.now(), 1);
  expect(await tracked()).toEqual([targets[0], ...targets.slice(2)]);
});

/** Publishes one more post now and returns its target's id. */
async function publishOne(content: string): Promise<string> {
  const { profileId, token } = await h.profile();
  const account = await h.bluesky(profileId, `${crypto.randomUUID().slice(0, 8)}.test`);
  const res = await h.request("POST", "/v1/posts", { token, body: { content, targets: [{ account_id: account }] } });
  expect(res.status).toBe(201);
  await h.engine.runUntilIdle();
  const [row] = await h.db.rows<{ id: string; status: string }>(
    sql`select t.id, t.status from post_targets t join posts p on p.id = t.post_id where p.content = ${content}`,
  );
  expect(row?.status).toBe("published");
  return row.id;
}

test("two targets of one platform post in the same statement make one item, and the pass goes on", async () => {
  // targets[0] and targets[1] name the same platform post since the test above.
  await h.db.rows(sql`delete from analytics_items`);
  h.clock.advance(TRACK_FULL_EVERY_MS);
  await trackPublishedTargets(h.db, h.clock.now(), TRACK_BATCH);
  expect(await tracked()).toEqual([targets[0], ...targets.slice(2)]);
});

test("a pass after the first finds what was published since the one before", async () => {
  await trackPublishedTargets(h.db, h.clock.now());
  h.clock.advance(15_000);
  const target = await publishOne("published between two passes");
  h.clock.advance(15_000);
  await trackPublishedTargets(h.db, h.clock.now());
  expect(await tracked()).toContain(target);
});

test("a result written late (older than the window) is tracked by the next full pass, within the hour", async () => {
  await trackPublishedTargets(h.db, h.clock.now());
  const target = await publishOne("recorded late");
  // As if its result had been retried through a database outage: written now, stamped minutes ago.
  await h.db.rows(sql`delete from analytics_items where target_id = ${target}::uuid`);
  await h.db.rows(sql`
    update post_targets set updated_at = updated_at - interval '10 minutes' where id = ${target}::uuid`);
  h.clock.advance(TRACK_OVERLAP_MS);
  await trackPublishedTargets(h.db, h.clock.now());
  expect(await tracked()).not.toContain(target);
  h.clock.advance(TRACK_FULL_EVERY_MS);
  await trackPublishedTargets(h.db, h.clock.now());
  expect(await tracked()).toContain(target);
});

/** The plan of one batch's statement, as the database in use (PostgreSQL or PGlite) would run it. */
async function planOf(cursor: Cursor, batchSize = TRACK_BATCH): Promise<string> {
  const rows = await h.db.rows<{ "QUERY PLAN": string }>(
    sql`explain ${trackBatchStatement(h.clock.now(), cursor, batchSize)}`,
  );
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

test("a windowed pass reads the published targets' index in order and looks items up one by one", async () => {
  const plan = await planOf({ at: new Date(h.clock.now().getTime() - 60_000).toISOString(), id: ZERO });
  expect(plan).toContain("post_targets_published_idx");
  expect(plan).toContain("analytics_items_target_idx");
  // Nothing sorted but the batch itself (for its last row): the window is read in the index's order.
  expect(plan).not.toMatch(/Seq Scan on (analytics_items|post_targets)|Sort Key: t\./);
});

test("a windowed pass of many batches tracks every target published in the window", async () => {
  await trackPublishedTargets(h.db, h.clock.now());
  const published: string[] = [];
  for (let i = 0; i < 5; i++) {
    h.clock.advance(1_000);
    published.push(await publishOne(`window batch ${i}`));
  }
  // Two published in the same microsecond: the cursor breaks the tie by id.
  await h.db.rows(sql`
    update post_targets set updated_at = (select updated_at from post_targets where id = ${published[1]}::uuid)
    where id = ${published[2]}::uuid`);
  await h.db.rows(sql`delete from analytics_items where target_id = any(${`{${published.join(",")}}`}::uuid[])`);
  h.clock.advance(5_000);
  await trackPublishedTargets(h.db, h.clock.now(), 2);
  expect(await tracked()).toEqual(expect.arrayContaining(published));
});

test("a full pass longer than a pass's budget carries on in the passes after it", async () => {
  // One item a platform post (an earlier test gave two targets the same one).
  const [{ all }] = await h.db.rows<{ all: number }>(sql`
    select count(distinct (account_id, platform_post_id))::int as all from post_targets where status = 'published'`);
  await h.db.rows(sql`delete from analytics_items`);
  // An hour on: a full pass starts, and may look at one batch of two targets a pass.
  h.clock.advance(TRACK_FULL_EVERY_MS);
  await trackPublishedTargets(h.db, h.clock.now(), 2, 0);
  const first = (await tracked()).length;
  expect(first).toBeLessThan(all);
  let passes = 1;
  while ((await tracked()).length < all && passes < all) {
    h.clock.advance(15_000);
    await trackPublishedTargets(h.db, h.clock.now(), 2, 0);
    passes++;
  }
  expect(await tracked()).toHaveLength(all);
  expect(passes).toBeGreaterThan(1);
});

test("a full pass reads one batch of targets a statement through the primary key, never every target", async () => {
  // Enough targets that reading them all would show in the plan (on a few dozen rows a scan of the table
  // is the cheapest way to any batch).
  const { profileId } = await h.profile();
  await h.db.rows(sql`
    with p as (
      insert into posts (profile_id, content) select ${profileId}::uuid, 'filler ' || i
      from generate_series(1, 3000) as i returning id
    )
    insert into post_targets (post_id, profile_id, platform, status) select id, ${profileId}::uuid, 'bluesky', 'published' from p`);
  await h.db.rows(sql`analyze post_targets`);
  const plan = await planOf({ at: null, id: ZERO }, 100);
  expect(plan).toContain("post_targets_pkey");
  expect(plan).toContain("analytics_items_target_idx");
  expect(plan).not.toMatch(/Seq Scan on (analytics_items|post_targets)|HashSetOp|Sort Key: t\./);
});
