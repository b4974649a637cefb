import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { postTargets } from "../../../src/db/schema.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// The upstream cancels by POST /v1/posts/{id}/cancel or DELETE /v1/posts/{id}; a client that cancels
// scheduled posts with DELETE takes a 404 to mean "already gone". What each does to a scheduled post, a
// queued one, and one whose targets are partly published (this harness runs no engine, so a queued post
// stays queued, and a partly published post is set up as the engine leaves one).

let h: Harness;
let token: string;
let alice: string;
let bob: string;

const connect = async (profileId: string, did: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId,
      platform: "bluesky",
      remoteId: did,
      username: `${did}.test`,
      credentials: { did, accessJwt: "a", refreshJwt: "r", handle: did },
    })
  ).id;

beforeAll(async () => {
  h = await postsHarness();
  const p = await h.profile();
  token = p.token;
  alice = await connect(p.profileId, "did:plc:alice");
  bob = await connect(p.profileId, "did:plc:bob");
});
afterAll(() => h.close());

const later = () => new Date(h.clock.now().getTime() + 86_400_000).toISOString();
const create = async (publishAt: string | null) =>
  (
    await h.request("POST", "/v1/posts", {
      token,
      body: { content: "x", publish_at: publishAt, targets: [{ account_id: alice }, { account_id: bob }] },
    })
  ).body.data;
const partlyPublished = async () => {
  const post = await create(later());
  await h.db.db
    .update(postTargets)
    .set({ status: "published", platformPostId: "at://did:plc:alice/app.bsky.feed.post/1", dueAt: null })
    .where(eq(postTargets.id, post.targets[0].target_post_id));
  return post;
};
const cancel = (id: string) => h.request("POST", `/v1/posts/${id}/cancel`, { token });
const del = (id: string) => h.request("DELETE", `/v1/posts/${id}`, { token });
const read = (id: string) => h.request("GET", `/v1/posts/${id}`, { token });

describe("cancel", () => {
  test("a scheduled post: every target cancelled, the record kept", async () => {
    const post = await create(later());
    const res = await cancel(post.id);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("cancelled");
    expect(res.body.data.targets.map((t: any) => t.status)).toEqual(["cancelled", "cancelled"]);
    expect((await cancel(post.id)).body.error.code).toBe("post_not_cancellable");
  });

  test("a queued post: its pending targets cancelled before any is claimed", async () => {
    const post = await create(null);
    expect(post.status).toBe("queued");
    const res = await cancel(post.id);
    expect(res.body.data.status).toBe("cancelled");
  });

  test("a partly published post: the waiting target cancelled, the published one kept as published", async () => {
    const post = await partlyPublished();
    const res = await cancel(post.id);
    expect(res.status).toBe(200);
    expect(res.body.data.targets.map((t: any) => t.status)).toEqual(["published", "cancelled"]);
    expect(res.body.data.status).toBe("published");
  });
});

describe("delete", () => {
  test("a scheduled post: the record is gone, a second delete is 404 (already gone)", async () => {
    const post = await create(later());
    expect((await del(post.id)).body.data.deleted).toBe(true);
    expect((await read(post.id)).status).toBe(404);
    const again = await del(post.id);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("not_found");
  });

  test("a queued post: deleted before it is claimed, nothing left to publish", async () => {
    const post = await create(null);
    expect((await del(post.id)).status).toBe(200);
    const left = await h.db.db.select().from(postTargets).where(eq(postTargets.postId, post.id));
    expect(left).toEqual([]);
  });

  test("a partly published post: the record and its waiting target are gone; the platform keeps what was published", async () => {
    const post = await partlyPublished();
    const res = await del(post.id);
    expect(res.status).toBe(200);
    expect(res.body.data.message).toContain("stays on the platforms");
    expect((await read(post.id)).status).toBe(404);
  });

  test("many scheduled posts deleted in a row, as a client cancelling a batch does", async () => {
    const ids = await Promise.all(Array.from({ length: 20 }, async () => (await create(later())).id));
    for (const id of ids) expect((await del(id)).status).toBe(200);
    for (const id of ids) expect((await del(id)).status).toBe(404);
  });

  test("a post with a target being published is 409 post_processing for both", async () => {
    const post = await create(later());
    await h.db.db
      .update(postTargets)
      .set({ status: "processing" })
      .where(eq(postTargets.id, post.targets[0].target_post_id));
    expect((await del(post.id)).body.error.code).toBe("post_processing");
    const cancelled = await cancel(post.id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.targets.map((t: any) => t.status)).toEqual(["processing", "cancelled"]);
  });
});
