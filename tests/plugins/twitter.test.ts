/**
 * X specifics beyond the conformance suite: weighted length, token rotation and proactive refresh,
 * duplicate posts, a video X cannot process, rate-limit reset times, and the four-image rule.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { RefreshError, type PluginContext } from "../../src/platform/sdk.ts";
import twitter from "../../plugins/twitter/index.ts";
import { createXEmulator, type XEmulator } from "../../plugins/twitter/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { makeGif } from "../support/media-fixtures.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

let emulator: XEmulator;
let rig: OAuthRig<XEmulator>;
let ctx: PluginContext;

beforeAll(async () => {
  const png = await makeImage({ width: 64, height: 64, format: "png" });
  // Real videos (ffmpeg): one X takes, one shorter than its 0.5 s, one wider than its 3:1.
  const videos: Record<string, Uint8Array<ArrayBuffer>> = {
    "/good.mp4": makeVideo({ width: 320, height: 240, seconds: 1 }),
    "/short.mp4": makeVideo({ width: 320, height: 240, seconds: 0.3 }),
    "/wide.mp4": makeVideo({ width: 640, height: 160, seconds: 1 }),
  };
  ({ rig, emulator, ctx } = await connectOne(createXEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/token",
    media: (req) =>
      videos[new URL(req.url).pathname]
        ? new Response(videos[new URL(req.url).pathname], { headers: { "content-type": "video/mp4" } })
        : new URL(req.url).pathname.endsWith(".png")
          ? new Response(png, { headers: { "content-type": "image/png" } })
          : new URL(req.url).pathname.endsWith(".gif")
            ? new Response(makeGif(2, 2), { headers: { "content-type": "image/gif" } })
            : new Response(new Uint8Array(5000), { headers: { "content-type": "video/mp4" } }), // no ftyp: not a real MP4
    mediaMaxBytes: 10 * 1024 * 1024,
  }));
});
afterAll(() => rig.stop());

const png = () => ({ url: `${rig.mediaUrl}/a.png`, type: "image" as const });

describe("posting", () => {
  test("the same text twice is X's duplicate refusal, for good", async () => {
    expect((await twitter.publish!(ctx, job("same words"))).kind).toBe("published");
    expect(await twitter.publish!(ctx, job("same words"))).toMatchObject({
      kind: "permanent",
      code: "duplicate_content",
    });
  });

  // Over 280 weighted and five images are refused at creation now (tests/modules/posts/platform-limits.test.ts).
  test("140 CJK characters (weighted 280) and four images go in one post", async () => {
    expect((await twitter.publish!(ctx, job("日".repeat(140)))).kind).toBe("published");
    expect(emulator.posts().at(-1)!.text).toBe("日".repeat(140));
    const out = await twitter.publish!(ctx, job("four", { media: [png(), png(), png(), png()] }));
    expect(out.kind).toBe("published");
    expect(emulator.posts().at(-1)!.media).toHaveLength(4);
  });

  test("a video X cannot process fails for good, with no post", async () => {
    const before = emulator.posts().length;
    let out = await twitter.publish!(
      ctx,
      job("bad video", { media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video" }] }),
    );
    for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await twitter.checkStatus!(ctx, out.handle);
    expect(out).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
    expect(emulator.posts().length).toBe(before);
  });

  test("X's processing refuses a video under 0.5 s or wider than 3:1, and takes one within its rules", async () => {
    const video = async (name: string) => {
      let out = await twitter.publish!(ctx, job(name, { media: [{ url: `${rig.mediaUrl}/${name}`, type: "video" }] }));
      for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await twitter.checkStatus!(ctx, out.handle);
      return out;
    };
    expect(await video("short.mp4")).toMatchObject({
      kind: "permanent",
      code: "video_processing_failed",
      reason: expect.stringContaining("under 0.5 s"),
    });
    expect(await video("wide.mp4")).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
    expect((await video("good.mp4")).kind).toBe("published");
  });

  test("a rate limit waits until X's reset time", async () => {
    emulator.failNext({ kind: "rate_limit", retryAfterSeconds: 120 });
    const out = await twitter.publish!(ctx, job("limited"));
    if (out.kind !== "retryable") throw new Error(out.kind);
    expect(out.retryAfterMs).toBeGreaterThan(60_000);
    expect(out.retryAfterMs).toBeLessThanOrEqual(121_000);
  });
});

describe("tokens", () => {
  test("refresh rotates: the new pair works, the old refresh token is refused", async () => {
    const old = String(ctx.credentials.refresh_token);
    await twitter.refresh!(ctx);
    expect(ctx.credentials.refresh_token).not.toBe(old);
    const stale = { ...ctx, credentials: { ...ctx.credentials, refresh_token: old }, saveCredentials: async () => {} };
    const err = await twitter.refresh!(stale).catch((e) => e);
    expect(err).toBeInstanceOf(RefreshError);
    expect((err as RefreshError).retryable).toBe(false);
  });

  test("a token about to expire is refreshed before posting", async () => {
    emulator.expireTokens();
    await ctx.saveCredentials({ ...ctx.credentials, expires_at: new Date(Date.now() + 10_000).toISOString() });
    const out = await twitter.publish!(ctx, job("after a proactive refresh"));
    expect(out.kind).toBe("published");
  });
});

// X's OpenAPI 2.167 (August 2026) and its SDK @xdevplatform/xdk name the Post's fields parameter
// `post.fields` and its references `referenced_posts`; 2.166 still said `tweet.fields`/`referenced_tweets`.
describe("the current contract (OpenAPI 2.167)", () => {
  test("the timeline is read with post.fields, and a quote is known by referenced_posts", async () => {
    const quoted = await twitter.publish!(ctx, job("to be quoted"));
    if (quoted.kind !== "published") throw new Error(quoted.kind);
    const res = await fetch(`${rig.served.url}/2/tweets`, {
      method: "POST",
      headers: { authorization: `Bearer ${ctx.credentials.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "quoting it", quote_tweet_id: quoted.platformPostId }),
    });
    expect(res.status).toBe(201);
    const recent = await twitter.fetchRecent!(ctx, null);
    const quote = recent.find((p) => p.content === "quoting it")!;
    expect(quote.kind).toBe("quote");
    // created_at comes back only because post.fields asked for it.
    expect(Math.abs(quote.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(
      emulator
        .requests()
        .filter((r) => r.path.endsWith("/tweets") && r.method === "GET")
        .at(-1)!.query,
    ).toMatchObject({
      "post.fields": expect.stringContaining("created_at"),
    });
  });

  test("the old parameter name is refused as X refuses an unknown query parameter", async () => {
    const res = await fetch(`${rig.served.url}/2/tweets?ids=1&tweet.fields=public_metrics`, {
      headers: { authorization: `Bearer ${ctx.credentials.access_token}` },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toContain("tweet.fields");
  });

  test("a body property the schema does not declare is refused, as X validates bodies", async () => {
    const res = await fetch(`${rig.served.url}/2/tweets`, {
      method: "POST",
      headers: { authorization: `Bearer ${ctx.credentials.access_token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "x", reply: { in_reply_to_post_id: "1" } }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toBe(
      "$.reply.in_reply_to_post_id: is not defined in the schema and the schema does not allow additional properties",
    );
  });

  test("answers that still say referenced_tweets are read as well", async () => {
    emulator.answerWithLegacyNames(true);
    try {
      const recent = await twitter.fetchRecent!(ctx, null);
      expect(recent.find((p) => p.content === "quoting it")!.kind).toBe("quote");
    } finally {
      emulator.answerWithLegacyNames(false);
    }
  });
});

// docs.x.com/x-api/media: the one-shot upload is for images; GIFs and videos go through the chunked
// upload (initialize, append, finalize) and its status check.
describe("animated GIFs", () => {
  test("a GIF goes through the chunked upload as tweet_gif, waits for processing, then posts", async () => {
    let out = await twitter.publish!(ctx, job("a gif", { media: [{ url: `${rig.mediaUrl}/a.gif`, type: "image" }] }));
    expect(out.kind).toBe("submitted");
    for (let i = 0; out.kind === "submitted" && i < 5; i++) out = await twitter.checkStatus!(ctx, out.handle);
    expect(out.kind).toBe("published");
    expect(emulator.posts().at(-1)!.media).toEqual([
      { type: "gif", contentType: "image/gif", size: makeGif(2, 2).length },
    ]);
    const init = emulator
      .requests()
      .filter((r) => r.path === "/2/media/upload/initialize")
      .at(-1)!;
    expect(init.body).toMatchObject({ media_category: "tweet_gif", media_type: "image/gif" });
  });

  test("the one-shot upload refuses a GIF", async () => {
    const form = new FormData();
    form.set("media", new Blob([makeGif(2, 2)], { type: "image/gif" }), "a.gif");
    form.set("media_category", "tweet_gif");
    const res = await fetch(`${rig.served.url}/2/media/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${ctx.credentials.access_token}` },
      body: form,
    });
    expect(res.status).toBe(400);
    expect((await res.json()).detail).toContain("chunked");
  });
});
