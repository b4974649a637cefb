/**
 * Published targets become analytics items (src/engine/analytics-track.ts): every one, a batch of them a
 * statement, and one whose platform post already has another target's item holds none of the rest back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { trackPublishedTargets } from "../../src/engine/analytics-track.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

let h: EngineHarness;
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
