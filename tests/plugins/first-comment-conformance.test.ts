/**
 * First comments on every platform that declares one (firstComment), end to end: a sandbox profile
 * connects through the API and the browser page, a post with first_comment goes through POST /v1/posts
 * and the real engine, and the platform's emulator receives the comment exactly once, after the post, on
 * the published post. The post's API shape says so; a second engine run posts nothing more; what the
 * platform cannot take is a 400 at creation.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import type { EmulatedPost, Emulator } from "../../src/platform/sdk.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";
import { makeJpeg, makePng } from "../support/media-fixtures.ts";
import { makeVideo } from "../support/media-files.ts";

const registry = createRegistry();
const withComments = registry.list().filter((p) => p.firstComment && registry.hasEmulator(p.platform));

/** platform_options a platform requires on every target (Reddit: the subreddit). */
const REQUIRED_OPTIONS: Record<string, Record<string, unknown>> = { reddit: { subreddit: "crier" } };

const PNG = makePng(1, 1);
const JPEG = makeJpeg(1, 1, 0);
const MP4 = makeVideo({ width: 540, height: 960, seconds: 6, fps: 30 });
let mediaServer: ReturnType<typeof Bun.serve>;
let mediaBase: string;
beforeAll(() => {
  mediaServer = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/image.png") return new Response(PNG, { headers: { "content-type": "image/png" } });
      if (path === "/image.jpg") return new Response(JPEG, { headers: { "content-type": "image/jpeg" } });
      if (path === "/video.mp4") return new Response(MP4, { headers: { "content-type": "video/mp4" } });
      return new Response("missing", { status: 404 });
    },
  });
  mediaBase = `http://127.0.0.1:${mediaServer.port}`;
});
afterAll(() => mediaServer.stop(true));

/** Everything the emulator received: posts, and comments where the platform's comments are not posts. */
const received = (e: Emulator): EmulatedPost[] => [...e.posts(), ...(e.comments?.() ?? [])];

test("the five reply and comment platforms of this change declare a first comment", () => {
  const names: string[] = withComments.map((p) => p.platform);
  for (const p of ["twitter", "threads", "bluesky", "nostr", "reddit"]) expect(names).toContain(p);
  for (const p of withComments) {
    const d = registry.describe(p.platform)!;
    expect(d.capabilities.first_comment).toBe(true);
    expect(d.media_requirements.first_comment).toMatchObject({ max_length: p.firstComment!.textLimit.max });
  }
});

describe.each(withComments.map((p) => [p.platform, p] as const))("%s first comment", (platform) => {
  const describe_ = registry.describe(platform)!;
  let h: ListeningHarness;
  let token: string;
  let emulator: Emulator;
  let engine: Engine;
  let accountId: string;

  beforeAll(async () => {
    h = await listeningHarness({}, {}, { emulatorMediaAddress: () => true });
    let profileId: string;
    ({ token, profileId } = await h.profile({ sandbox: true }));
    emulator = h.ctx.platforms.emulatorFor(platform, profileId)!;
    const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
    expect(res.status).toBe(201);
    // An OAuth flow that asks something first (Mastodon: the server) starts on Crier's page.
    const page = res.body.data.authorization_url
      ? await followAuthorization(res.body.data.authorization_url)
      : await submitHostedForm(res.body.data.hosted_url);
    expect(page.html).toContain("Account connected");
    const list = await h.request("GET", "/v1/accounts", { token });
    accountId = list.body.data[0].id;
    expect(list.body.data[0].capabilities.first_comment).toBe(true);
    engine = createEngine(h.ctx, { random: () => 0.5, allowMediaAddress: () => true });
    h.ctx.dispatch = engine;
  });
  afterAll(async () => {
    await engine.stop();
    await h.stop();
  });

  /** The smallest post the platform takes: text, with the one media item it requires, if any. */
  function body(content: string, target: Record<string, unknown>) {
    const required = describe_.media_requirements.required_media;
    const formats = describe_.media_requirements.supported_formats;
    const media = !required
      ? []
      : required.acceptedTypes.includes("image") && describe_.capabilities.images
        ? [{ url: formats.includes("image/png") ? `${mediaBase}/image.png` : `${mediaBase}/image.jpg`, type: "image" }]
        : [{ url: `${mediaBase}/video.mp4`, type: "video" }];
    return {
      content,
      media,
      targets: [{ account_id: accountId, platform_options: REQUIRED_OPTIONS[platform], ...target }],
    };
  }

  /** Runs the engine until the post is settled (platforms that process media are polled as time passes). */
  async function settle(postId: string) {
    for (let i = 0; i < 30; i++) {
      await engine.runUntilIdle();
      const post = (await h.request("GET", `/v1/posts/${postId}`, { token })).body.data;
      const t = post.targets[0];
      if (t.status !== "submitted" && !["waiting", "pending", "processing"].includes(t.first_comment?.status))
        return post;
      h.clock.advance(15_000);
    }
    throw new Error("the post did not settle");
  }

  test("the comment reaches the platform once, after the post, on the published post", async () => {
    const text = `first comment on ${platform} ${crypto.randomUUID().slice(0, 8)}`;
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: body(`a post with a first comment on ${platform}`, { first_comment: text }),
    });
    expect(created.status).toBe(201);
    expect(created.body.data.targets[0].first_comment).toEqual({
      text,
      status: expect.stringMatching(/^(waiting|pending|processing|published)$/),
      platform_comment_id: null,
      platform_comment_url: null,
      error: null,
      error_code: null,
    });
    const post = await settle(created.body.data.id);
    const target = post.targets[0];
    expect(target.status).toBe("published");
    expect(target.first_comment).toMatchObject({ text, status: "published", error: null, error_code: null });
    expect(target.first_comment.platform_comment_id).toBeTruthy();

    const comments = received(emulator).filter((p) => p.text.includes(text));
    expect(comments).toHaveLength(1);
    expect(comments[0].replyTo).toBe(target.platform_post_id);
    const parent = emulator.posts().find((p) => p.id === target.platform_post_id);
    expect(parent).toBeDefined();
    expect(comments[0].createdAt.getTime()).toBeGreaterThanOrEqual(parent!.createdAt.getTime());
    if (emulator.posts().includes(comments[0]))
      expect(emulator.posts().indexOf(comments[0])).toBeGreaterThan(emulator.posts().indexOf(parent!));

    // The targets route shows the same; nothing more goes out however often the engine runs.
    const one = await h.request("GET", `/v1/posts/${post.id}/targets/${target.target_post_id}`, { token });
    expect(one.body.data.first_comment).toEqual(target.first_comment);
    h.clock.advance(3_600_000);
    await engine.runUntilIdle();
    expect(received(emulator).filter((p) => p.text.includes(text))).toHaveLength(1);
  });

  test("a post without first_comment shows first_comment null and sends no comment", async () => {
    const before = received(emulator).length;
    const created = await h.request("POST", "/v1/posts", { token, body: body(`no comment ${platform}`, {}) });
    expect(created.status).toBe(201);
    const post = await settle(created.body.data.id);
    expect(post.targets[0]).toMatchObject({ status: "published", first_comment: null });
    expect(received(emulator).length).toBe(before + 1);
  });

  test("a comment longer than the platform's limit, or empty, is a 400 naming the target; nothing is stored", async () => {
    const rule = describe_.media_requirements.first_comment!;
    const count = async () => (await h.request("GET", "/v1/posts", { token })).body.data.length;
    const before = await count();
    // One unit past the limit in every unit Crier counts ("a" is one character, grapheme, byte and weight).
    const long = await h.request("POST", "/v1/posts", {
      token,
      body: body("too long", { first_comment: "a".repeat(rule.max_length + 1) }),
    });
    expect(long.status).toBe(400);
    expect(long.body.error.code).toBe("first_comment_too_long");
    expect(long.body.error.message).toContain("targets[0]");
    const exact = await h.request("POST", "/v1/posts/validate", {
      token,
      body: body("exactly", { first_comment: "a".repeat(rule.max_length) }),
    });
    expect(exact.body.data.ok).toBe(true);
    const empty = await h.request("POST", "/v1/posts", { token, body: body("empty", { first_comment: "  " }) });
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe("first_comment_empty");
    expect(await count()).toBe(before);
  });
});
