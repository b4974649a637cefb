import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import plugin, { type BlueskySession } from "../../plugins/bluesky/index.ts";
import { createBlueskyEmulator, type BlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { ConnectError, RefreshError } from "../../src/platform/sdk.ts";
import { job, rig, serveMedia, type Rig } from "./support.ts";
import { fakeImage, fakeMp4 } from "../support/media-fixtures.ts";
import { makeImage } from "../support/media-files.ts";

/** A real PNG (noisy, about 3 KB): the PDS records the type the bytes are, not the one declared. */
const png = await makeImage({ width: 30, height: 30, format: "png", noise: true });

let clock = Date.now();
let r: Rig<BlueskyEmulator>;
const media = serveMedia({
  "a.jpg": { type: "image/jpeg", bytes: fakeImage(2000) },
  "b.png": { type: "image/png", bytes: png },
  "big.jpg": { type: "image/jpeg", bytes: fakeImage(2_000_001) },
  "1.5mb.jpg": { type: "image/jpeg", bytes: fakeImage(1_500_000) },
  "clip.mp4": { type: "video/mp4", bytes: fakeMp4(5000) },
  "noise.mp4": { type: "video/mp4", bytes: new Uint8Array(5000) },
});

beforeAll(() => {
  r = rig(plugin, createBlueskyEmulator({ now: () => clock }), { timeoutMs: 1500, now: () => clock });
});
afterAll(async () => {
  await r.stop();
  await media.stop();
});
beforeEach(() => {
  clock = Date.now();
  r.emulator.reset();
});

const flow = plugin.connect as Extract<NonNullable<typeof plugin.connect>, { verify: unknown }>;

async function connect(handle = "alice.test", password = "abcd-efgh-ijkl-mnop") {
  r.emulator.registerAccount({ handle, password, followers: 42 });
  return flow.verify(r.connectContext(), { handle, app_password: password });
}

async function account(handle = "alice.test") {
  const id = await connect(handle);
  return r.context({
    credentials: id.credentials,
    remoteId: id.remoteId,
    username: id.username,
    metadata: id.metadata,
  });
}

const slice = (text: string, f: { index: { byteStart: number; byteEnd: number } }) =>
  new TextDecoder().decode(new TextEncoder().encode(text).slice(f.index.byteStart, f.index.byteEnd));

describe("connect", () => {
  test("verifies the handle and app password with createSession and keeps only the session", async () => {
    const id = await connect("Alice.test");
    expect(id.remoteId).toStartWith("did:plc:");
    expect(id.username).toBe("alice.test");
    const creds = id.credentials as unknown as BlueskySession;
    expect(creds.accessJwt.split(".")).toHaveLength(3);
    expect(creds.refreshJwt).not.toBe(creds.accessJwt);
    expect(creds.pdsUrl).toBe(r.served.url);
    expect(JSON.stringify(id)).not.toContain("abcd-efgh-ijkl-mnop");
    expect(id.metadata?.followers_count).toBe(42);
  });

  test("a wrong app password is refused with a message for the user", async () => {
    r.emulator.registerAccount({ handle: "bob.test", password: "right-pass-word-1234" });
    const err = await flow.verify(r.connectContext(), { handle: "@bob.test", app_password: "wrong" }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.message).toContain("did not accept");
    const empty = await flow.verify(r.connectContext(), { handle: "bob.test", app_password: "" }).catch((e) => e);
    expect(empty).toBeInstanceOf(ConnectError);
    const notAHandle = await flow
      .verify(r.connectContext(), { handle: "bob smith", app_password: "x" })
      .catch((e) => e);
    expect(notAHandle.message).toContain("for example alice.bsky.social");
  });

  test("the same handle connects to the same DID (reconnecting restores, never duplicates)", async () => {
    const a = await connect("carol.test");
    const b = await connect("carol.test");
    expect(b.remoteId).toBe(a.remoteId);
  });
});

describe("publish", () => {
  test("text with links, mentions and hashtags gets facets at UTF-8 byte offsets", async () => {
    const ctx = await account();
    const bobDid = r.emulator.registerAccount({ handle: "bob.test" });
    const text = "Héllo 👋🏽 @bob.test, see https://example.com/wiki/A_(b). #crier café #日本語! #123 @nobody.test";
    const out = await plugin.publish!(ctx, job({ content: text }));
    expect(out.kind).toBe("published");
    if (out.kind !== "published") return;
    expect(out.url).toBe(`https://bsky.app/profile/alice.test/post/${out.platformPostId.split("/").pop()}`);
    const record = r.emulator.record(out.platformPostId)!;
    expect(record.text).toBe(text);
    const facets = record.facets as {
      index: { byteStart: number; byteEnd: number };
      features: Record<string, string>[];
    }[];
    const seen = facets.map((f) => [
      slice(text, f),
      f.features[0].$type.split("#")[1],
      f.features[0].uri ?? f.features[0].did ?? f.features[0].tag,
    ]);
    expect(seen).toEqual([
      ["@bob.test", "mention", bobDid],
      ["https://example.com/wiki/A_(b)", "link", "https://example.com/wiki/A_(b)"],
      ["#crier", "tag", "crier"],
      ["#日本語", "tag", "日本語"],
    ]);
    // "Héllo 👋🏽 " is 11 UTF-16 units but 16 bytes: a JS index would point at the wrong place.
    expect(facets[0].index.byteStart).toBe(16);
  });

  // 301 graphemes, over 3000 bytes, and images with a video are refused at creation
  // (tests/modules/posts/platform-limits.test.ts, tests/modules/posts/posts.test.ts).
  test("300 graphemes are published", async () => {
    const ctx = await account();
    const ok = await plugin.publish!(ctx, job({ content: "👍🏽".repeat(300) }));
    expect(ok.kind).toBe("published");
    expect(r.emulator.posts()).toHaveLength(1);
  });

  test("images are uploaded as blobs and embedded", async () => {
    const ctx = await account();
    const out = await plugin.publish!(
      ctx,
      job({
        content: "two pictures",
        media: [
          { url: media.url("a.jpg"), type: "image", width: 800, height: 600 },
          { url: media.url("b.png"), type: "image" },
        ],
      }),
    );
    expect(out.kind).toBe("published");
    const [post] = r.emulator.posts();
    expect(post.media).toEqual([
      { type: "image", contentType: "image/jpeg", size: 2000 },
      { type: "image", contentType: "image/png", size: png.length },
    ]);
    const embed = r.emulator.record(post.id)!.embed as any;
    expect(embed.$type).toBe("app.bsky.embed.images");
    expect(embed.images[0].aspectRatio).toEqual({ width: 800, height: 600 });
  });

  // app.bsky.embed.images#image: "May be up to 2 MB, formerly limited to 1 MB" (maxSize 2000000).
  test("an image of 1.5 MB is published: the lexicon allows 2,000,000 bytes", async () => {
    const ctx = await account();
    const out = await plugin.publish!(ctx, job({ media: [{ url: media.url("1.5mb.jpg"), type: "image" }] }));
    expect(out.kind).toBe("published");
    expect(r.emulator.posts()[0].media).toEqual([{ type: "image", contentType: "image/jpeg", size: 1_500_000 }]);
    expect(plugin.mediaRequirements.max_size_bytes.image).toBe(2_000_000);
  });

  test("an image over 2,000,000 bytes is refused and nothing is posted", async () => {
    const ctx = await account();
    expect(await plugin.publish!(ctx, job({ media: [{ url: media.url("big.jpg"), type: "image" }] }))).toMatchObject({
      kind: "permanent",
      code: "media_too_large",
    });
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("a video goes through the video service and its processing job", async () => {
    const ctx = await account();
    const out = await plugin.publish!(
      ctx,
      job({ content: "a clip", media: [{ url: media.url("clip.mp4"), type: "video", width: 1080, height: 1920 }] }),
    );
    expect(out.kind).toBe("published");
    const [post] = r.emulator.posts();
    expect(post.media).toEqual([{ type: "video", contentType: "video/mp4", size: 5000 }]);
    expect((r.emulator.record(post.id)!.embed as any).aspectRatio).toEqual({ width: 1080, height: 1920 });
  });

  test("a video the service cannot process, or an account it refuses, is a permanent failure", async () => {
    const ctx = await account();
    expect(await plugin.publish!(ctx, job({ media: [{ url: media.url("noise.mp4"), type: "video" }] }))).toMatchObject({
      kind: "permanent",
      code: "video_processing_failed",
    });
    r.emulator.refuseVideo(ctx.account.remoteId, "Please verify your email to upload videos");
    const refused = await plugin.publish!(ctx, job({ media: [{ url: media.url("clip.mp4"), type: "video" }] }));
    expect(refused).toMatchObject({ kind: "permanent", code: "video_upload_refused" });
    expect(refused.kind === "permanent" && refused.reason).toContain("verify your email");
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("a thread: replies name the first post as root and the previous one as parent", async () => {
    const ctx = await account();
    const first = await plugin.publish!(ctx, job({ content: "1/3" }));
    if (first.kind !== "published") throw new Error(first.kind);
    const second = await plugin.publish!(
      ctx,
      job({ content: "2/3", replyTo: { platformPostId: first.platformPostId } }),
    );
    if (second.kind !== "published") throw new Error(second.kind);
    const third = await plugin.publish!(
      ctx,
      job({
        content: "3/3",
        replyTo: { platformPostId: second.platformPostId, rootPlatformPostId: first.platformPostId },
      }),
    );
    if (third.kind !== "published") throw new Error(third.kind);
    const reply = r.emulator.record(third.platformPostId)!.reply as any;
    expect(reply.root.uri).toBe(first.platformPostId);
    expect(reply.parent.uri).toBe(second.platformPostId);
    expect(reply.root.cid).toStartWith("bafyrei");
    expect(r.emulator.posts().map((p) => p.replyTo)).toEqual([null, first.platformPostId, second.platformPostId]);
  });
});

describe("failures map to outcomes", () => {
  test("429 on an upload is retryable after the reset time, and nothing is posted", async () => {
    const ctx = await account();
    r.emulator.failNext({ kind: "rate_limit", on: "uploadBlob", retryAfterSeconds: 30 });
    const out = await plugin.publish!(ctx, job({ media: [{ url: media.url("a.jpg"), type: "image" }] }));
    expect(out.kind).toBe("retryable");
    expect(out.kind === "retryable" && out.retryAfterMs).toBeGreaterThan(20_000);
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("5xx on an upload is retryable", async () => {
    const ctx = await account();
    r.emulator.failNext({ kind: "server_error", on: "uploadBlob" });
    expect((await plugin.publish!(ctx, job({ media: [{ url: media.url("a.jpg"), type: "image" }] }))).kind).toBe(
      "retryable",
    );
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("a timeout after createRecord was sent is unknown: the post exists", async () => {
    const ctx = await account();
    r.emulator.failNext({ kind: "timeout", on: "createRecord", delayMs: 4000 });
    const out = await plugin.publish!(ctx, job({ content: "maybe" }));
    expect(out.kind).toBe("unknown");
    expect(r.emulator.posts()).toHaveLength(1);
  });

  test("an expired access token is auth_expired; refresh rotates the tokens and publishing works again", async () => {
    const ctx = await account();
    const before = ctx.credentials as unknown as BlueskySession;
    r.emulator.failNext({ kind: "auth_expired", on: "createRecord" });
    expect((await plugin.publish!(ctx, job({ content: "x" }))).kind).toBe("auth_expired");
    // The token stays expired: the same credentials keep failing until refreshed.
    expect((await plugin.publish!(ctx, job({ content: "x" }))).kind).toBe("auth_expired");
    const fresh = (await plugin.refresh!(ctx)) as unknown as BlueskySession;
    expect(fresh.accessJwt).not.toBe(before.accessJwt);
    expect(fresh.refreshJwt).not.toBe(before.refreshJwt);
    expect(ctx.saved).toHaveLength(1);
    expect((await plugin.publish!(ctx, job({ content: "x" }))).kind).toBe("published");
    // The spent refresh token is revoked: refused for good.
    const stale = r.context({ credentials: { ...before } });
    const refused = await plugin.refresh!(stale).catch((e) => e);
    expect(refused).toBeInstanceOf(RefreshError);
    expect(refused).toMatchObject({ retryable: false });
    expect(refused.message).toContain("revoked");
  });

  test("a refresh that cannot reach Bluesky is retryable, not a reason to reconnect", async () => {
    const ctx = await account();
    r.emulator.failNext({ kind: "server_error", on: "refreshSession" });
    const err = await plugin.refresh!(ctx).catch((e) => e);
    expect(err).toBeInstanceOf(RefreshError);
    expect(err.retryable).toBe(true);
    expect(ctx.saved).toHaveLength(0);
  });

  test("access tokens expire after two hours by the platform's clock", async () => {
    const ctx = await account();
    clock += 2 * 3600_000 + 1000;
    expect((await plugin.publish!(ctx, job({ content: "late" }))).kind).toBe("auth_expired");
    await plugin.refresh!(ctx);
    expect((await plugin.publish!(ctx, job({ content: "late" }))).kind).toBe("published");
  });
});

describe("reading", () => {
  test("fetchRecent returns the account's own posts since a date, oldest first, with media URLs that load", async () => {
    const ctx = await account();
    const p1 = await plugin.publish!(ctx, job({ content: "old" }));
    if (p1.kind !== "published") throw new Error(p1.kind);
    clock += 60_000;
    const since = new Date(clock - 1);
    await plugin.publish!(ctx, job({ content: "with picture", media: [{ url: media.url("a.jpg"), type: "image" }] }));
    clock += 60_000;
    await plugin.publish!(ctx, job({ content: "a reply", replyTo: { platformPostId: p1.platformPostId } }));
    clock += 60_000;
    await plugin.publish!(ctx, job({ content: "video", media: [{ url: media.url("clip.mp4"), type: "video" }] }));

    const recent = await plugin.fetchRecent!(ctx, null);
    expect(recent.map((p) => p.content)).toEqual(["old", "with picture", "video"]);
    const newer = await plugin.fetchRecent!(ctx, since);
    expect(newer.map((p) => [p.content, p.kind])).toEqual([
      ["with picture", "image"],
      ["video", "video"],
    ]);
    const img = await fetch(newer[0].media[0].url);
    expect(img.headers.get("content-type")).toBe("image/jpeg");
    expect((await img.arrayBuffer()).byteLength).toBe(2000);
  });

  test("metrics read likes, reposts, replies and quotes; Bluesky has no views", async () => {
    const ctx = await account();
    const a = await plugin.publish!(ctx, job({ content: "count me" }));
    const b = await plugin.publish!(ctx, job({ content: "me too" }));
    if (a.kind !== "published" || b.kind !== "published") throw new Error("not published");
    await plugin.publish!(ctx, job({ content: "reply", replyTo: { platformPostId: a.platformPostId } }));
    r.emulator.engage(a.platformPostId, { likes: 5, reposts: 2, quotes: 1 });
    const m = await plugin.metrics!(ctx, [a.platformPostId, b.platformPostId]);
    expect(m[a.platformPostId]).toEqual({ views: null, likes: 5, comments: 1, shares: 2, saves: 0, quotes: 1 });
    expect(m[b.platformPostId].likes).toBe(0);
  });
});

describe("emulator", () => {
  test("keeps a bounded amount of media: the oldest blobs lose their bytes, their posts stay", async () => {
    const small = rig(plugin, createBlueskyEmulator({ retainedBlobBytes: 4000 }));
    try {
      small.emulator.registerAccount({ handle: "erin.test", password: "p" });
      const id = await flow.verify(small.connectContext(), { handle: "erin.test", app_password: "p" });
      const ctx = small.context({ credentials: id.credentials, remoteId: id.remoteId, username: id.username });
      const ids: string[] = [];
      for (const name of ["a.jpg", "b.png"]) {
        const out = await plugin.publish!(ctx, job({ media: [{ url: media.url(name), type: "image" }] }));
        if (out.kind !== "published") throw new Error(out.kind);
        ids.push(out.platformPostId);
      }
      const recent = await plugin.fetchRecent!(ctx, null);
      const [first, second] = ids.map((id) => recent.find((p) => p.platformPostId === id)!);
      expect((await fetch(first.media[0].url)).status).toBe(400);
      expect((await fetch(second.media[0].url)).status).toBe(200);
      expect(small.emulator.posts()).toHaveLength(2);
    } finally {
      await small.stop();
    }
  });

  test("a restored snapshot (a sandbox's saved state) keeps feeds, post counts and reply counts", async () => {
    const ctx = await account("restored.test");
    const a = await plugin.publish!(ctx, job({ content: "kept" }));
    if (a.kind !== "published") throw new Error(a.kind);
    await plugin.publish!(ctx, job({ content: "first reply", replyTo: { platformPostId: a.platformPostId } }));
    const saved = r.emulator.state!.snapshot();
    r.emulator.reset();
    expect(await plugin.fetchRecent!(ctx, null).catch(() => "refused")).toBe("refused");
    r.emulator.state!.restore(saved);
    expect((await plugin.fetchRecent!(ctx, null)).map((p) => p.content)).toEqual(["kept"]);
    expect((await plugin.accountStats!(ctx)).followers).toBe(42);
    expect((await plugin.metrics!(ctx, [a.platformPostId]))[a.platformPostId].comments).toBe(1);
    // Written after the restore: counted with what was restored.
    await plugin.publish!(ctx, job({ content: "second reply", replyTo: { platformPostId: a.platformPostId } }));
    expect((await plugin.metrics!(ctx, [a.platformPostId]))[a.platformPostId].comments).toBe(2);
    const profile = await fetch(
      `${r.served.url}/xrpc/app.bsky.actor.getProfile?actor=${encodeURIComponent(a.platformPostId.split("/")[2])}`,
      { headers: { authorization: `Bearer ${(ctx.credentials as unknown as BlueskySession).accessJwt}` } },
    );
    expect((await profile.json()).postsCount).toBe(3);
  });
});

describe("declaration", () => {
  test("options are an open object; the text limit counts graphemes, with a 3000-byte cap beside it", () => {
    expect(plugin.textLimit).toEqual({ max: 300, unit: "graphemes", maxBytes: 3000 });
    expect((plugin.optionsSchema as any).additionalProperties).toBe(true);
    expect(plugin.mediaRequirements.file_constraints).toMatchObject({
      maxFiles: 4,
      maxImageFiles: 4,
      maxVideoFiles: 1,
      allowMixedMedia: false,
    });
  });
});

describe("the AT Protocol's own lexicons check every request", () => {
  const xrpc = async (nsid: string, token: string, body: unknown) =>
    fetch(`${r.served.url}/xrpc/${nsid}`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("a record the lexicon refuses is refused, though it passes the emulator's own rules", async () => {
    const ctx = await account();
    const s = ctx.credentials as unknown as BlueskySession;
    // Date.parse takes a bare date; the lexicon's datetime format does not, and neither does the PDS.
    const res = await xrpc("com.atproto.repo.createRecord", s.accessJwt, {
      repo: s.did,
      collection: "app.bsky.feed.post",
      record: { $type: "app.bsky.feed.post", text: "hi", createdAt: "2026-11-26" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: "InvalidRequest",
      message: expect.stringContaining("Record/createdAt must be an valid atproto datetime"),
    });
    expect(r.emulator.posts()).toHaveLength(0);
  });

  test("an input the lexicon refuses is refused (createRecord's repo is an at-identifier)", async () => {
    const ctx = await account();
    const s = ctx.credentials as unknown as BlueskySession;
    const res = await xrpc("com.atproto.repo.createRecord", s.accessJwt, {
      repo: s.did,
      collection: "app.bsky.feed.post",
      validate: "yes",
      record: { $type: "app.bsky.feed.post", text: "hi", createdAt: new Date().toISOString() },
    });
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain("Input/validate must be a boolean");
  });

  test("query parameters are checked against the lexicon too", async () => {
    const ctx = await account();
    const s = ctx.credentials as unknown as BlueskySession;
    const res = await fetch(
      `${r.served.url}/xrpc/app.bsky.feed.getPosts?uris=${encodeURIComponent("https://bsky.app/profile/x/post/1")}`,
      { headers: { authorization: `Bearer ${s.accessJwt}` } },
    );
    expect(res.status).toBe(400);
    expect((await res.json()).message).toContain("uris/0 must be a valid at-uri");
  });

  test("an image blob over the lexicon's 2,000,000 bytes is refused in the record", async () => {
    const ctx = await account();
    const s = ctx.credentials as unknown as BlueskySession;
    const up = await fetch(`${r.served.url}/xrpc/com.atproto.repo.uploadBlob`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.accessJwt}`, "content-type": "image/jpeg" },
      body: fakeImage(2_000_001),
    });
    const { blob } = await up.json();
    const res = await xrpc("com.atproto.repo.createRecord", s.accessJwt, {
      repo: s.did,
      collection: "app.bsky.feed.post",
      record: {
        $type: "app.bsky.feed.post",
        text: "big",
        createdAt: new Date().toISOString(),
        embed: { $type: "app.bsky.embed.images", images: [{ alt: "", image: blob }] },
      },
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe("BlobTooLarge");
    expect(body.message).toContain("the maximum size is 2000000 bytes");
  });
});
