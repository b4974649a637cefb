/** Facebook specifics beyond the conformance suite: one account per Page, attached photos, link posts, Page tokens, metrics. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { MediaError, type MediaAccess, type Outcome, type PluginContext } from "../../src/platform/sdk.ts";
import facebook from "../../plugins/facebook/index.ts";
import { createFacebookEmulator, type FacebookEmulator } from "../../plugins/facebook/emulator.ts";
import { job, oauthRig, type OAuthRig } from "./support.ts";
import { makeMp4, makePng } from "../support/media-fixtures.ts";
import { makeImage } from "../support/media-files.ts";

let emulator: FacebookEmulator;
let rig: OAuthRig<FacebookEmulator>;
let pages: PluginContext[];

beforeAll(async () => {
  emulator = createFacebookEmulator();
  emulator.addPage("Second Page");
  // A real PNG: Facebook judges photos by their bytes.
  const png = makePng(2, 2);
  rig = await oauthRig(emulator, {
    authorizePath: "/v24.0/dialog/oauth",
    tokenPath: "/v24.0/oauth/access_token",
    media: () => new Response(png, { headers: { "content-type": "image/png" } }),
    mediaMaxBytes: 1024 * 1024,
  });
  expect(rig.connectPage.html).toContain("2 Facebook Page accounts are connected");
  const rows = rig.rows;
  expect(rows.map((r) => r.username).sort()).toEqual(["Sandbox Page", "Second Page"]);
  pages = rows.map((row) => rig.context(row));
});
afterAll(() => rig.stop());

const png = () => ({ url: `${rig.mediaUrl}/a.png`, type: "image" as const });

test("each Page posts with its own token", async () => {
  for (const ctx of pages) {
    const out = await facebook.publish!(ctx, job(`hello from ${ctx.account.username}`));
    if (out.kind !== "published") throw new Error(out.kind);
    expect(out.platformPostId).toStartWith(`${ctx.account.remoteId}_`);
  }
});

test("several photos are attached to one feed post", async () => {
  const out = await facebook.publish!(pages[0], job("album", { media: [png(), png(), png()] }));
  expect(out).toMatchObject({ kind: "published" });
  expect(emulator.posts().at(-1)!.media).toHaveLength(3);
});

test("a post that is only a link is a link post", async () => {
  const out = await facebook.publish!(pages[0], job("https://example.com/article"));
  expect(out.kind).toBe("published");
});

test("metrics read reactions, comments, shares and media views", async () => {
  const out = await facebook.publish!(pages[0], job("measured"));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { reactions: 5, comments: 2, shares: 1, views: 80 });
  expect((await facebook.metrics!(pages[0], [out.platformPostId]))[out.platformPostId]).toEqual({
    views: 80,
    likes: 5,
    comments: 2,
    shares: 1,
    saves: null,
  });
});

/** Media that can only be streamed: a plugin that reads the whole file into memory fails on it. */
function streamOnly(bytes: Uint8Array, contentType = "video/mp4"): MediaAccess {
  return {
    open: async () => ({
      contentType,
      size: bytes.length,
      stream: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
      bytes: () => Promise.reject(new Error("the whole file was read into memory")),
    }),
  };
}
test("a photo over the 4 MB of POST /{page-id}/photos is refused with 1366046; a small JPEG is posted", async () => {
  // Real JPEGs (sharp): noisy pixels at high quality make a large file.
  const big = await makeImage({ width: 2500, height: 2500, noise: true, quality: 95 });
  expect(big.length).toBeGreaterThan(4 * 1024 * 1024);
  const photo = (bytes: Uint8Array) => ({
    ...pages[0],
    media: {
      open: async () => ({
        contentType: "image/jpeg",
        size: bytes.length,
        stream: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
        bytes: async () => bytes,
      }),
    } as MediaAccess,
  });
  const jpgJob = job("photo", { media: [{ url: `${rig.mediaUrl}/a.jpg`, type: "image" }] });
  expect(await facebook.publish!(photo(big), jpgJob)).toMatchObject({
    kind: "permanent",
    reason: expect.stringContaining("less than 4 MB"),
  });
  expect((await facebook.publish!(photo(await makeImage({ width: 400, height: 300 })), jpgJob)).kind).toBe("published");
});

const videoJob = (content: string) => job(content, { media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video" }] });

async function settle(ctx: PluginContext, out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await facebook.checkStatus!(ctx, out.handle);
  return out;
}

test("a video goes up through the resumable upload on the Graph host, streamed, and is published by its handle", async () => {
  const mp4 = makeMp4(300 * 1024);
  // The old graph-video host override leads nowhere: every call must go to the one Graph base URL.
  const ctx = {
    ...pages[0],
    media: streamOnly(mp4),
    settings: { ...pages[0].settings, VIDEO_URL: "http://127.0.0.1:9" },
  };
  const out = await settle(ctx, await facebook.publish!(ctx, videoJob("a video")));
  expect(out).toMatchObject({ kind: "published" });
  expect(emulator.videoUploads().at(-1)).toEqual({ via: "resumable", bytes: mp4.length });
});

test("a video Facebook cannot process fails with the reason in processing_phase.errors", async () => {
  const ctx = { ...pages[0], media: streamOnly(new Uint8Array(4096).fill(7)) };
  const out = await settle(ctx, await facebook.publish!(ctx, videoJob("not a video")));
  expect(out).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
  expect((out as { reason: string }).reason).toContain(emulator.processingError);
});

test("metrics of a video ask the Video node only for what it has; one unreadable post does not fail the batch", async () => {
  const ctx = { ...pages[0], media: streamOnly(makeMp4(100 * 1024)) };
  const video = await settle(ctx, await facebook.publish!(ctx, videoJob("measured video")));
  const text = await facebook.publish!(pages[0], job("measured text"));
  if (video.kind !== "published" || text.kind !== "published") throw new Error("not published");
  emulator.engage(video.platformPostId, { reactions: 4, comments: 1, views: 120 });
  emulator.engage(text.platformPostId, { reactions: 2, shares: 3, views: 9 });
  const gone = `${pages[0].account.remoteId}_999999`;
  const m = await facebook.metrics!(pages[0], [video.platformPostId, gone, text.platformPostId]);
  expect(m[video.platformPostId]).toEqual({ views: 120, likes: 4, comments: 1, shares: null, saves: null });
  expect(m[text.platformPostId]).toMatchObject({ likes: 2, shares: 3, views: 9 });
  expect(m[gone]).toBeUndefined();
});

test("connecting asks only for the permissions Crier's requests use (App Review refuses unused ones)", async () => {
  const c = rig.h.ctx;
  const plugin = c.platforms.get("facebook")!;
  if (plugin.connect?.mode !== "oauth_authorization_url") throw new Error("unexpected connect flow");
  const url = new URL(
    plugin.connect.authorizationUrl(
      { http: pages[0].http, settings: pages[0].settings, log: pages[0].log, now: () => new Date() },
      { state: "s", redirectUri: "http://127.0.0.1/cb", codeVerifier: "v" },
    ),
  );
  expect(url.searchParams.get("scope")!.split(",").sort()).toEqual([
    "business_management",
    "pages_manage_engagement",
    "pages_manage_posts",
    "pages_read_engagement",
    "pages_read_user_content",
    "pages_show_list",
    "read_insights",
  ]);
});

/** A user consents to `scope` on the emulator and lists their Pages: the Pages with their tokens. */
async function consent(scope: string): Promise<{ id: string; access_token: string }[]> {
  const base = rig.served.url;
  const page = await fetch(
    `${base}/v24.0/dialog/oauth?client_id=sandbox&redirect_uri=http://127.0.0.1/cb&scope=${scope}`,
    { redirect: "manual" },
  );
  const code = new URL(page.headers.get("location")!).searchParams.get("code")!;
  const user = await fetch(
    `${base}/v24.0/oauth/access_token?client_id=sandbox&client_secret=sandbox&redirect_uri=http://127.0.0.1/cb&code=${code}`,
  ).then((r) => r.json());
  return (await fetch(`${base}/v24.0/me/accounts?access_token=${user.access_token}`).then((r) => r.json())).data;
}

test("the emulator holds a Page token to the permissions its user granted", async () => {
  const base = rig.served.url;
  const [page] = await consent("pages_show_list,pages_read_engagement");
  const headers = { authorization: `Bearer ${page.access_token}` };
  try {
    expect((await fetch(`${base}/v24.0/${page.id}?fields=followers_count`, { headers })).status).toBe(200);
    const post = await fetch(`${base}/v24.0/${page.id}/feed`, {
      method: "POST",
      headers,
      body: new URLSearchParams({ message: "no permission" }),
    });
    expect(post.status).toBe(400);
    expect((await post.json()).error.code).toBe(200);
  } finally {
    // The emulator gives a Page one token: the user grants everything again for the tests after this one.
    await consent(
      "pages_show_list,pages_manage_posts,pages_read_engagement,pages_read_user_content,read_insights,business_management",
    );
  }
});

test("a transfer cut short resumes at Facebook's file_offset within the attempt", async () => {
  const mp4 = makeMp4(200 * 1024);
  const ctx = { ...pages[0], media: streamOnly(mp4) };
  // The byte transfer fails once with a passing error (nothing of the file kept): the plugin asks where
  // Facebook's copy ends and sends the rest, and the video is published from one upload session.
  emulator.failNext({ kind: "server_error" });
  const out = await settle(ctx, await facebook.publish!(ctx, videoJob("resumed")));
  expect(out).toMatchObject({ kind: "published" });
  expect(emulator.videoUploads().at(-1)).toEqual({ via: "resumable", bytes: mp4.length });
});

test("a transfer whose source stalls half-way resumes from the bytes Facebook kept", async () => {
  const mp4 = makeMp4(256 * 1024);
  const half = 128 * 1024;
  let opens = 0;
  // The first read of the file stops after half of it; the second reads it whole.
  const flaky: MediaAccess = {
    open: async () => {
      const first = opens++ === 0;
      return {
        contentType: "video/mp4",
        size: mp4.length,
        stream: () =>
          first
            ? new ReadableStream<Uint8Array>({
                start(c) {
                  c.enqueue(mp4.slice(0, half));
                  setTimeout(() => c.error(new MediaError("the source stalled", true)), 50);
                },
              })
            : new Blob([mp4]).stream(),
        bytes: () => Promise.reject(new Error("the whole file was read into memory")),
      };
    },
  };
  const ctx = { ...pages[0], media: flaky };
  const out = await settle(ctx, await facebook.publish!(ctx, videoJob("resumed half-way")));
  expect(out).toMatchObject({ kind: "published" });
  expect(opens).toBe(2);
  expect(emulator.videoUploads().at(-1)).toEqual({ via: "resumable", bytes: mp4.length });
});

test("a video's media[].thumbnail_url goes with the publishing call as its thumb, the cover's own bytes", async () => {
  const mp4 = makeMp4(64 * 1024);
  const cover = await makeImage({ width: 1280, height: 720, format: "jpeg" });
  const ctx: PluginContext = {
    ...pages[0],
    media: {
      open: async (item) => {
        const bytes = item.type === "image" ? cover : mp4;
        return {
          contentType: item.type === "image" ? "image/jpeg" : "video/mp4",
          size: bytes.length,
          stream: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
          bytes: async () => bytes,
        };
      },
    },
  };
  const withCover = job("covered", {
    media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video", thumbnail_url: `${rig.mediaUrl}/cover.jpg` }],
  });
  const out = await settle(ctx, await facebook.publish!(ctx, withCover));
  expect(out).toMatchObject({ kind: "published" });
  expect(emulator.posts().at(-1)!.options).toEqual({
    placement: "feed",
    thumb: { content_type: "image/jpeg", size: cover.length },
  });
});

test("a cover Facebook cannot take as a thumbnail (not an image) is refused, and no video is published", async () => {
  const before = emulator.posts().length;
  const ctx: PluginContext = {
    ...pages[0],
    media: {
      open: async (item) => {
        const bytes = item.type === "image" ? new Uint8Array(64).fill(1) : makeMp4(8 * 1024);
        return {
          contentType: item.type === "image" ? "image/jpeg" : "video/mp4",
          size: bytes.length,
          stream: () => new Blob([bytes as Uint8Array<ArrayBuffer>]).stream(),
          bytes: async () => bytes,
        };
      },
    },
  };
  const out = await facebook.publish!(
    ctx,
    job("bad cover", {
      media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video", thumbnail_url: `${rig.mediaUrl}/cover.jpg` }],
    }),
  );
  expect(out).toMatchObject({ kind: "permanent" });
  expect((out as { reason: string }).reason).toContain("thumb");
  expect(emulator.posts().length).toBe(before);
});

/** A Page's token, straight from the emulator, for calls the plugin never makes. */
async function pageToken(): Promise<{ id: string; headers: Record<string, string> }> {
  const [page] = await consent(
    "pages_show_list,pages_manage_posts,pages_read_engagement,pages_read_user_content,read_insights,business_management",
  );
  return { id: page.id, headers: { authorization: `Bearer ${page.access_token}` } };
}

test("the emulator refuses Reels and Stories as Facebook does: no bytes, another token, a photo used twice", async () => {
  const base = rig.served.url;
  const { id, headers } = await pageToken();
  const form = (fields: Record<string, string>) => ({ method: "POST", headers, body: new URLSearchParams(fields) });
  // finish before any bytes arrived
  const start = await fetch(`${base}/v24.0/${id}/video_reels`, form({ upload_phase: "start" })).then((r) => r.json());
  expect(start.upload_url).toStartWith(`${base}/video-upload/v24.0/${start.video_id}`);
  const early = await fetch(
    `${base}/v24.0/${id}/video_reels`,
    form({ upload_phase: "finish", video_id: start.video_id, video_state: "PUBLISHED" }),
  );
  expect(early.status).toBe(400);
  // the upload host takes the Page's own token, in the OAuth scheme
  const wrong = await fetch(start.upload_url, {
    method: "POST",
    headers: { authorization: "OAuth not-the-page", offset: "0", file_size: "4" },
    body: new Uint8Array(4),
  });
  expect(wrong.status).toBe(400);
  // a photo that was published, or used for a Story already, cannot become a Story
  const photo = async (published: boolean) => {
    const fd = new FormData();
    fd.set("source", new Blob([makePng(2, 2)], { type: "image/png" }), "photo");
    fd.set("published", String(published));
    return (await fetch(`${base}/v24.0/${id}/photos`, { method: "POST", headers, body: fd }).then((r) => r.json())).id;
  };
  const story = (photoId: string) => fetch(`${base}/v24.0/${id}/photo_stories`, form({ photo_id: photoId }));
  expect((await story(await photo(true))).status).toBe(400);
  const unpublished = await photo(false);
  expect((await story(unpublished)).status).toBe(200);
  expect((await story(unpublished)).status).toBe(400);
});

test("a Reel Facebook cannot take (not 9:16) fails in processing; a video Story out of spec is refused at finish", async () => {
  // The loopback media server answers a small PNG for every path; these calls carry a landscape MP4.
  const landscape = makeMp4(64 * 1024);
  const ctx = { ...pages[0], media: streamOnly(landscape) };
  const reel = await facebook.publish!(ctx, {
    ...job("landscape reel", { media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video" }] }),
    options: { placement: "reels" },
  });
  const settled = await settle(ctx, reel);
  expect(settled).toMatchObject({ kind: "permanent", code: "video_processing_failed" });
  expect(emulator.posts().at(-1)!.options).toEqual({ placement: "reels" });
  const story = await facebook.publish!(ctx, {
    ...job("", { media: [{ url: `${rig.mediaUrl}/v.mp4`, type: "video" }] }),
    options: { placement: "story" },
  });
  expect(story).toMatchObject({ kind: "permanent", reason: expect.stringContaining("cannot be published as a story") });
});

test("a photo Story is an unpublished photo, then photo_stories; its text is not sent", async () => {
  const before = emulator.posts().length;
  const out = await facebook.publish!(pages[0], {
    ...job("caption", { media: [png()] }),
    options: { placement: "story" },
  });
  expect(out).toMatchObject({ kind: "published", url: null });
  expect(emulator.posts()).toHaveLength(before + 1);
  expect(emulator.posts().at(-1)).toMatchObject({
    text: "",
    media: [{ type: "image" }],
    options: { placement: "story" },
  });
});
