import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { posts } from "../../../src/db/schema.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// POST /v1/posts/validate: the create body, checked by the same code as POST /v1/posts, every problem
// listed and nothing written.

let h: Harness;
let token: string;
let bsky: string;
let telegram: string;
let foreign: string;

const connect = async (profile: string, platform: string, remoteId: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId: profile,
      platform,
      remoteId,
      username: `${remoteId}.test`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId, bot_token: "1:x" },
    })
  ).id;

beforeAll(async () => {
  h = await postsHarness();
  const p = await h.profile();
  token = p.token;
  bsky = await connect(p.profileId, "bluesky", "did:plc:alice");
  telegram = await connect(p.profileId, "telegram", "-100123");
  foreign = await connect((await h.profile()).profileId, "bluesky", "did:plc:mallory");
});
afterAll(() => h.close());

const validate = (body: unknown, t = token) => h.request("POST", "/v1/posts/validate", { token: t, body });
const postCount = async () => (await h.db.db.select({ id: posts.id }).from(posts)).length;

describe("POST /v1/posts/validate", () => {
  test("a bad post: every problem listed per target and for the post, nothing saved", async () => {
    const before = await postCount();
    const res = await validate({
      content: "x".repeat(320),
      publish_at: new Date(h.clock.now().getTime() - 3600_000).toISOString(),
      media: [
        { url: "not a url" },
        { url: "https://cdn.example.com/a.heic" },
        { url: "https://cdn.example.com/b.jpg", size: 50_000_000 },
        ...Array.from({ length: 3 }, (_, i) => ({ url: `https://cdn.example.com/${i}.jpg` })),
      ],
      targets: [
        { account_id: bsky },
        { account_id: foreign },
        { account_id: telegram, platform_options: { nope: 1, disable_notification: "yes" } },
      ],
    });
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d.ok).toBe(false);
    expect(d.problems.map((p: any) => [p.code, p.field])).toEqual([
      ["invalid_media", "media[0].url"],
      ["publish_at_in_past", "publish_at"],
    ]);
    const [b, f, tg] = d.targets;
    expect(b).toMatchObject({ account_id: bsky, platform: "bluesky", ok: false });
    expect(b.text).toEqual({ length: 320, limit: 300, unit: "graphemes" });
    expect(b.media).toHaveLength(6);
    const codes = b.problems.map((p: any) => p.code);
    for (const code of ["content_too_long", "too_many_media", "unsupported_media_format", "media_too_large"])
      expect(codes).toContain(code);
    for (const p of b.problems) expect(Object.keys(p).sort()).toEqual(["code", "field", "hint", "message"]);
    expect(f).toMatchObject({ account_id: foreign, platform: null, ok: false, text: null });
    expect(f.problems.map((p: any) => p.code)).toEqual(["target_account_not_found"]);
    // Telegram counts captions lower than messages: the limit shown is the one that applies to this post.
    expect(tg.text).toEqual({ length: 320, limit: 1024, unit: "utf16" });
    const options = tg.problems.filter((p: any) => p.code === "invalid_platform_options").map((p: any) => p.field);
    expect(options.sort()).toEqual([
      "targets[2].platform_options.disable_notification",
      "targets[2].platform_options.nope",
    ]);
    expect(await postCount()).toBe(before);
  });

  test("a post that validates is accepted by POST /v1/posts, and one that does not gets its first problem", async () => {
    const good = {
      content: "hello",
      media: [{ url: "https://cdn.example.com/a.jpg" }],
      targets: [{ account_id: bsky }],
    };
    const v = await validate(good);
    expect(v.body.data).toMatchObject({ ok: true, problems: [], targets: [{ ok: true, problems: [] }] });
    expect(v.body.data.targets[0].media).toEqual([{ url: "https://cdn.example.com/a.jpg", type: "image" }]);
    const created = await h.request("POST", "/v1/posts", { token, body: good });
    expect(created.status).toBe(201);

    const bad = { content: "y".repeat(301), targets: [{ account_id: bsky }] };
    const first = (await validate(bad)).body.data.targets[0].problems[0];
    const refused = await h.request("POST", "/v1/posts", { token, body: bad });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(first.code);
    expect(refused.body.error.message).toContain(first.message);
  });

  test("schema errors are 400 validation_error as on create; posts:read cannot validate", async () => {
    const res = await validate({ content: "x", targets: [] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("validation_error");
    const reader = await h.profile({ scopes: ["posts:read"] });
    const denied = await validate({ content: "x", targets: [{ account_id: bsky }] }, reader.token);
    expect(denied.status).toBe(403);
    expect(denied.body.error.code).toBe("missing_scope");
  });
});
