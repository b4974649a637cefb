/** Instagram specifics beyond the conformance suite: caption rules, JPEG only, Reels, carousels, insights. */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Outcome, PluginContext } from "../../src/platform/sdk.ts";
import instagram from "../../plugins/instagram/index.ts";
import { createInstagramEmulator, type InstagramEmulator } from "../../plugins/instagram/emulator.ts";
import { job, connectOne, type OAuthRig } from "./support.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

let emulator: InstagramEmulator;
let rig: OAuthRig<InstagramEmulator>;
let ctx: PluginContext;

const covers: Record<string, Uint8Array<ArrayBuffer>> = {};

beforeAll(async () => {
  covers["/cover.jpg"] = await makeImage({ width: 1080, height: 1920, format: "jpeg" });
  covers["/cover.png"] = await makeImage({ width: 1080, height: 1920, format: "png" });
  // Real files (sharp, ffmpeg), as Instagram reads what it downloads: a square JPEG, a PNG, a JPEG wider
  // than 1.91:1, a 4 s Reel, and a 2 s clip (Reels take 3 s at least).
  const files: Record<string, Uint8Array<ArrayBuffer>> = {
    "/a.png": await makeImage({ width: 400, height: 400, format: "png" }),
    "/wide.jpg": await makeImage({ width: 1000, height: 400 }),
    "/short.mp4": makeVideo({ width: 360, height: 640, seconds: 2 }),
  };
  const jpg = await makeImage({ width: 400, height: 400 });
  const reel = makeVideo({ width: 360, height: 640, seconds: 4 });
  ({ rig, emulator, ctx } = await connectOne(createInstagramEmulator(), {
    authorizePath: "/oauth/authorize",
    tokenPath: "/oauth/access_token",
    media: (req) => {
      const p = new URL(req.url).pathname;
      if (covers[p])
        return new Response(covers[p], {
          headers: { "content-type": p.endsWith(".png") ? "image/png" : "image/jpeg" },
        });
      const type = p.endsWith(".jpg") ? "image/jpeg" : p.endsWith(".png") ? "image/png" : "video/mp4";
      const bytes = files[p] ?? (type === "video/mp4" ? reel : jpg);
      return new Response(bytes, { headers: { "content-type": type } });
    },
    username: "sandbox.insta",
  }));
});
afterAll(() => rig.stop());

const url = (f: string) => `${rig.mediaUrl}/${f}`;
const post = (content: string, items: { f: string; type: "image" | "video" }[]) =>
  job(content, { media: items.map((i) => ({ url: url(i.f), type: i.type })) });
async function settle(out: Outcome): Promise<Outcome> {
  for (let i = 0; out.kind === "submitted" && i < 10; i++) out = await instagram.checkStatus!(ctx, out.handle);
  return out;
}

// Captions over 2,200 characters, 30 hashtags or 20 mentions are refused at creation
// (tests/modules/posts/platform-limits.test.ts).

// The error-codes page: a PNG is refused when the container is created (code 36001, subcode 2207005).
test("a PNG is refused by Instagram for good", async () => {
  expect(await settle(await instagram.publish!(ctx, post("png", [{ f: "a.png", type: "image" }])))).toMatchObject({
    kind: "permanent",
    code: "2207005",
  });
});

test("Instagram reads what it downloads: an image wider than 1.91:1 and a 2 s Reel are refused", async () => {
  expect(await settle(await instagram.publish!(ctx, post("wide", [{ f: "wide.jpg", type: "image" }])))).toMatchObject({
    kind: "permanent",
    code: "2207009",
    reason: expect.stringContaining("aspect ratio (1000/400)"),
  });
  expect(await settle(await instagram.publish!(ctx, post("short", [{ f: "short.mp4", type: "video" }])))).toMatchObject(
    {
      kind: "permanent",
      code: "error",
      reason: expect.stringMatching(/under 3 s.*2207026/),
    },
  );
});

test("a video is a Reel with a reel permalink; a mixed carousel is one post", async () => {
  const reel = await settle(await instagram.publish!(ctx, post("reel", [{ f: "v.mp4", type: "video" }])));
  if (reel.kind !== "published") throw new Error(reel.kind);
  expect(reel.url).toStartWith("https://www.instagram.com/reel/");
  const album = await settle(
    await instagram.publish!(
      ctx,
      post("album", [
        { f: "a.jpg", type: "image" },
        { f: "v.mp4", type: "video" },
      ]),
    ),
  );
  if (album.kind !== "published") throw new Error(album.kind);
  expect(
    emulator
      .posts()
      .at(-1)!
      .media.map((m) => m.type),
  ).toEqual(["image", "video"]);
});

test("trial_reel makes a Reel a Trial Reel (trial_params); images and carousels publish as usual", async () => {
  const trial = await settle(
    await instagram.publish!(ctx, { ...post("trial", [{ f: "t.mp4", type: "video" }]), options: { trial_reel: true } }),
  );
  expect(trial.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({
    placement: "reels",
    share_to_feed: true,
    trial_params: { graduation_strategy: "MANUAL" },
  });
  const auto = await settle(
    await instagram.publish!(ctx, {
      ...post("trial auto", [{ f: "t.mp4", type: "video" }]),
      options: { trial_reel: true, trial_graduation: "SS_PERFORMANCE" },
    }),
  );
  expect(auto.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({
    placement: "reels",
    share_to_feed: true,
    trial_params: { graduation_strategy: "SS_PERFORMANCE" },
  });
  // Instagram refuses trial_params outside REELS containers: an image goes out as an ordinary post.
  const photo = await settle(
    await instagram.publish!(ctx, {
      ...post("trial photo", [{ f: "p.jpg", type: "image" }]),
      options: { trial_reel: true },
    }),
  );
  expect(photo.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({ placement: "feed" });
  const plain = await settle(await instagram.publish!(ctx, post("plain reel", [{ f: "r.mp4", type: "video" }])));
  expect(plain.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({ placement: "reels", share_to_feed: true });
});

test("insights become views, likes, comments, shares and saves", async () => {
  const out = await settle(await instagram.publish!(ctx, post("measured", [{ f: "a.jpg", type: "image" }])));
  if (out.kind !== "published") throw new Error(out.kind);
  emulator.engage(out.platformPostId, { views: 100, likes: 10, comments: 3, shares: 2, saved: 5 });
  expect((await instagram.metrics!(ctx, [out.platformPostId]))[out.platformPostId]).toEqual({
    views: 100,
    likes: 10,
    comments: 3,
    shares: 2,
    saves: 5,
  });
});

test("connecting asks only for the permissions Crier's requests use (App Review refuses unused ones)", () => {
  if (instagram.connect?.mode !== "oauth_authorization_url") throw new Error("unexpected connect flow");
  const url = new URL(
    instagram.connect.authorizationUrl(
      { http: ctx.http, settings: ctx.settings, log: ctx.log, now: () => new Date() },
      { state: "s", redirectUri: "http://127.0.0.1/cb", codeVerifier: "v" },
    ),
  );
  expect(url.searchParams.get("scope")!.split(",").sort()).toEqual([
    "instagram_business_basic",
    "instagram_business_content_publish",
    "instagram_business_manage_comments",
    "instagram_business_manage_insights",
  ]);
});

test("the emulator holds a token to the permissions its user granted", async () => {
  const base = rig.served.url;
  const consent = await fetch(
    `${base}/oauth/authorize?client_id=sandbox&redirect_uri=http://127.0.0.1/cb&scope=instagram_business_basic`,
    { redirect: "manual" },
  );
  const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
  const short = await fetch(`${base}/oauth/access_token`, {
    method: "POST",
    body: new URLSearchParams({
      client_id: "sandbox",
      client_secret: "sandbox",
      code,
      redirect_uri: "http://127.0.0.1/cb",
    }),
  }).then((r) => r.json());
  const long = await fetch(
    `${base}/access_token?grant_type=ig_exchange_token&client_secret=sandbox&access_token=${short.access_token}`,
  ).then((r) => r.json());
  const headers = { authorization: `Bearer ${long.access_token}` };
  expect((await fetch(`${base}/v23.0/me?fields=username`, { headers })).status).toBe(200);
  const publish = await fetch(`${base}/v23.0/me/media`, {
    method: "POST",
    headers,
    body: new URLSearchParams({ image_url: url("a.jpg") }),
  });
  expect(publish.status).toBe(400);
  expect((await publish.json()).error.code).toBe(10);
});

test("Meta's transient errors are retried, its refusals are not", () => {
  const answer = (status: number, error: Record<string, unknown>) =>
    instagram.classifyResponse!({ status, body: { error }, headers: new Headers(), creates: false, idempotent: false });
  // From Instagram's error-code table: "Instagram server error. Try again." and a media download timeout.
  expect(answer(400, { message: "Instagram server error", code: -1, error_subcode: 2207001 })?.kind).toBe("retryable");
  expect(
    answer(400, { message: "It takes too long to download the media", code: -2, error_subcode: 2207003 })?.kind,
  ).toBe("retryable");
  expect(answer(400, { message: "Please retry", code: 36000, is_transient: true })?.kind).toBe("retryable");
  expect(
    answer(400, { message: "The image size is too large.", code: 36000, error_subcode: 2207004, is_transient: false })
      ?.kind,
  ).toBe("permanent");
  expect(answer(400, { message: "Session has expired", code: 190, error_subcode: 463 })?.kind).toBe("auth_expired");
});

test("a passing error on the publishing call itself is an unknown outcome, never retried into a duplicate", () => {
  const out = instagram.classifyResponse!({
    status: 400,
    body: { error: { message: "Instagram server error", code: -1, error_subcode: 2207001 } },
    headers: new Headers(),
    creates: true,
    idempotent: false,
  });
  expect(out?.kind).toBe("unknown");
});

test("a Reel's media[].thumbnail_url reaches Instagram as cover_url, which Instagram downloads as the cover", async () => {
  const reel = job("cover", { media: [{ url: url("reel.mp4"), type: "video", thumbnail_url: url("cover.jpg") }] });
  expect(await settle(await instagram.publish!(ctx, reel))).toMatchObject({ kind: "published" });
  expect(emulator.posts().at(-1)!.options).toMatchObject({
    cover: { content_type: "image/jpeg", size: covers["/cover.jpg"].byteLength },
  });
});

test("a cover Instagram cannot use (a PNG: Reels covers are JPEG) fails the Reel for good", async () => {
  const reel = job("png cover", { media: [{ url: url("reel.mp4"), type: "video", thumbnail_url: url("cover.png") }] });
  const out = await settle(await instagram.publish!(ctx, reel));
  expect(out).toMatchObject({ kind: "permanent" });
  expect((out as { reason: string }).reason).toContain("cover image must be a JPEG");
});

test("a Story is a STORIES container without caption; a Reel carries share_to_feed, tags, collaborators and location", async () => {
  const story = await settle(
    await instagram.publish!(ctx, {
      ...post("not shown on a story", [{ f: "s.jpg", type: "image" }]),
      options: { placement: "story", user_tags: [{ username: "a.friend" }] },
    }),
  );
  expect(story.kind).toBe("published");
  expect(emulator.posts().at(-1)).toMatchObject({
    text: "",
    media: [{ type: "image" }],
    options: { placement: "story", user_tags: [{ username: "a.friend" }] },
  });
  const reel = await settle(
    await instagram.publish!(ctx, {
      ...post("reel", [{ f: "r.mp4", type: "video" }]),
      options: {
        placement: "reels",
        share_to_feed: false,
        collaborators: ["x.y"],
        location_id: "123",
        user_tags: [{ username: "z" }],
      },
    }),
  );
  expect(reel.kind).toBe("published");
  expect(emulator.posts().at(-1)!.options).toEqual({
    placement: "reels",
    share_to_feed: false,
    collaborators: ["x.y"],
    location_id: "123",
    user_tags: [{ username: "z" }],
  });
});

test("the emulator refuses container parameters where Instagram does", async () => {
  const create = (fields: Record<string, string>) =>
    fetch(`${rig.served.url}/v23.0/me/media`, {
      method: "POST",
      headers: { authorization: `Bearer ${String(ctx.credentials.access_token)}` },
      body: new URLSearchParams(fields),
    });
  const image = { image_url: url("p.jpg") };
  const reel = { media_type: "REELS", video_url: url("r.mp4") };
  const refusals: Record<string, string>[] = [
    { ...image, collaborators: JSON.stringify(["a", "b", "c", "d"]) },
    { media_type: "STORIES", ...image, collaborators: JSON.stringify(["a"]) },
    { media_type: "STORIES", ...image, location_id: "123" },
    { media_type: "STORIES", image_url: url("p.jpg"), video_url: url("r.mp4") },
    { ...image, share_to_feed: "true" },
    { ...image, user_tags: JSON.stringify([{ username: "a" }]) },
    { ...reel, user_tags: JSON.stringify([{ username: "a", x: 0.5, y: 0.5 }]) },
    { ...image, location_id: "Paris" },
  ];
  for (const fields of refusals) {
    const res = await create(fields);
    expect({ fields, status: res.status }).toEqual({ fields, status: 400 });
  }
  expect(
    (await create({ ...reel, share_to_feed: "false", user_tags: JSON.stringify([{ username: "a" }]) })).status,
  ).toBe(200);
});
