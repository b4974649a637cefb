/**
 * Instagram and Facebook placements (platform_options.placement: feed, reels, story) end to end: a sandbox
 * profile's posts go through the real engine to the platforms' emulators, which record the flow each
 * placement took; placement rules are refused at creation with a 400 naming the target and the rule.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { connectSandbox, sandboxCluster, type SandboxCluster } from "../support/sandbox-kit.ts";

let cluster: SandboxCluster;
let token: string;
const accounts: Record<string, string> = {};
const files: Record<string, string> = {};

async function upload(filename: string, type: string, bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const ticket = await cluster.request("POST", "/v1/media/uploads", { token, body: { filename, content_type: type } });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": type },
    body: bytes,
  });
  expect(put.status).toBeLessThan(300);
  return (await cluster.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data.public_url;
}

beforeAll(async () => {
  cluster = await sandboxCluster();
  await cluster.start();
  const profile = await createProfile(cluster.db, "sandbox", true);
  ({ token } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] }));
  await connectSandbox(cluster, token, "instagram");
  await connectSandbox(cluster, token, "facebook");
  for (const a of (await cluster.request("GET", "/v1/accounts", { token })).body.data as any[])
    accounts[a.platform] = a.id;
  files.square = await upload(
    "square.jpg",
    "image/jpeg",
    await makeImage({ width: 1080, height: 1080, format: "jpeg" }),
  );
  files.tall = await upload("tall.jpg", "image/jpeg", await makeImage({ width: 1080, height: 1920, format: "jpeg" }));
  // 9:16, 540 × 960 (Facebook's Reels minimum), 30 fps, 4 s: a Reel and a Story on both platforms.
  files.vertical = await upload(
    "vertical.mp4",
    "video/mp4",
    makeVideo({ width: 540, height: 960, seconds: 4, fps: 30 }),
  );
}, 120_000);
afterAll(() => cluster.stop());

/** Creates the post, runs the engine (moving the clock for status checks) and answers the post as read back. */
async function published(target: Record<string, unknown>, content: string, media: { url: string; type: string }[]) {
  const res = await cluster.request("POST", "/v1/posts", { token, body: { content, media, targets: [target] } });
  expect(res.status).toBe(201);
  let post: any;
  for (let i = 0; i < 20; i++) {
    await cluster.settle();
    post = (await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token })).body.data;
    if (post.status !== "processing" && post.status !== "scheduled" && post.status !== "queued") break;
    cluster.clock.advance(60_000);
  }
  expect({ status: post.status, error: post.targets[0].error }).toEqual({ status: "published", error: null });
  return post;
}

/** The delivery the sandbox platform recorded for the post's target (what the emulator received). */
async function delivery(post: any): Promise<any> {
  const list = (await cluster.request("GET", "/v1/sandbox/deliveries", { token })).body.data as any[];
  const found = list.find((d) => d.id === post.targets[0].target_post_id);
  expect(found).toBeDefined();
  return found;
}

test("Instagram: a Story of an image with user tags, the text not sent; the options read back as sent", async () => {
  const options = { placement: "story", user_tags: [{ username: "friend.one", x: 0.5, y: 0.25 }] };
  const post = await published({ account_id: accounts.instagram, platform_options: options }, "story time", [
    { url: files.tall, type: "image" },
  ]);
  expect(post.targets[0].platform_options).toMatchObject(options);
  const d = await delivery(post);
  expect(d.platform).toBe("instagram");
  expect(d.options).toMatchObject({ placement: "story", user_tags: [{ username: "friend.one", x: 0.5, y: 0.25 }] });
  expect(d.media).toEqual([expect.objectContaining({ type: "image" })]);
});

test("Instagram: a video Story", async () => {
  const post = await published({ account_id: accounts.instagram, platform_options: { placement: "story" } }, "", [
    { url: files.vertical, type: "video" },
  ]);
  expect((await delivery(post)).options).toMatchObject({ placement: "story" });
});

test("Instagram: a Reel with its options (share_to_feed, cover frame, collaborators, tags, location)", async () => {
  const options = {
    placement: "reels",
    share_to_feed: false,
    thumb_offset: 1500,
    collaborators: ["co.author", "second_one"],
    user_tags: [{ username: "tagged.friend" }],
    location_id: "110843418940484",
  };
  const post = await published({ account_id: accounts.instagram, platform_options: options }, "a reel", [
    { url: files.vertical, type: "video" },
  ]);
  expect(post.targets[0].platform_options).toMatchObject(options);
  expect((await delivery(post)).options).toEqual({
    placement: "reels",
    share_to_feed: false,
    thumb_offset: 1500,
    collaborators: ["co.author", "second_one"],
    user_tags: [{ username: "tagged.friend" }],
    location_id: "110843418940484",
  });
});

test("Instagram: a feed image with collaborators, placed tags and a location", async () => {
  const post = await published(
    {
      account_id: accounts.instagram,
      platform_options: {
        collaborators: ["co.author"],
        location_id: "42",
        user_tags: [{ username: "a.b", x: 0.1, y: 0.9 }],
      },
    },
    "feed",
    [{ url: files.square, type: "image" }],
  );
  expect((await delivery(post)).options).toEqual({
    placement: "feed",
    collaborators: ["co.author"],
    location_id: "42",
    user_tags: [{ username: "a.b", x: 0.1, y: 0.9 }],
  });
});

test("Facebook: a Reel goes up in three phases (start, the upload host, finish PUBLISHED) with its description", async () => {
  const post = await published(
    { account_id: accounts.facebook, platform_options: { placement: "reels" } },
    "reel text",
    [{ url: files.vertical, type: "video" }],
  );
  const d = await delivery(post);
  expect(d.platform).toBe("facebook");
  expect(d).toMatchObject({ text: "reel text", options: { placement: "reels" } });
  expect(d.media).toEqual([expect.objectContaining({ type: "video" })]);
});

test("Facebook: a photo Story (photo_stories of an unpublished photo) and a video Story (video_stories)", async () => {
  const photo = await published(
    { account_id: accounts.facebook, platform_options: { placement: "story" } },
    "not sent",
    [{ url: files.tall, type: "image" }],
  );
  const pd = await delivery(photo);
  expect(pd).toMatchObject({ text: "", options: { placement: "story" } });
  expect(pd.media).toEqual([expect.objectContaining({ type: "image" })]);
  const video = await published({ account_id: accounts.facebook, platform_options: { placement: "story" } }, "", [
    { url: files.vertical, type: "video" },
  ]);
  expect((await delivery(video)).media).toEqual([expect.objectContaining({ type: "video" })]);
});

test("Facebook: the feed stays the default, recorded as such", async () => {
  const post = await published({ account_id: accounts.facebook }, "plain feed post", []);
  expect((await delivery(post)).options).toMatchObject({ placement: "feed" });
});

/** A create that must be refused: 400, the code, the target named, and no post made. */
async function refused(target: Record<string, unknown>, media: Record<string, unknown>[], content = "text") {
  const before = (await cluster.request("GET", "/v1/posts", { token })).body.data.length;
  const res = await cluster.request("POST", "/v1/posts", { token, body: { content, media, targets: [target] } });
  expect(res.status).toBe(400);
  expect(res.body.error.message).toContain("targets[0]");
  expect((await cluster.request("GET", "/v1/posts", { token })).body.data.length).toBe(before);
  return res.body.error as { code: string; message: string; hint: string };
}

const external = (name: string, extra: Record<string, unknown> = {}) => ({
  url: `https://media.example.com/${name}`,
  type: name.endsWith(".mp4") ? "video" : "image",
  ...extra,
});

test("placement rules are refused at creation, naming the target and the rule", async () => {
  const ig = (platform_options: Record<string, unknown>) => ({ account_id: accounts.instagram, platform_options });
  const fb = (platform_options: Record<string, unknown>) => ({ account_id: accounts.facebook, platform_options });
  // A Story takes one media item; a Reel one video; a Story without media is refused.
  expect((await refused(ig({ placement: "story" }), [external("a.jpg"), external("b.jpg")])).code).toBe(
    "too_many_media",
  );
  expect(await refused(ig({ placement: "reels" }), [external("a.jpg")])).toMatchObject({
    code: "media_required",
    message: expect.stringContaining("Instagram Reels posts need one video"),
  });
  expect(await refused(fb({ placement: "story" }), [])).toMatchObject({
    code: "media_required",
    message: expect.stringContaining("Facebook Stories posts need one image or one video"),
  });
  // Collaborators: at most 3, and not on a Story; user tags placed on images, bare on Reels.
  expect(await refused(ig({ collaborators: ["a", "b", "c", "d"] }), [external("a.jpg")])).toMatchObject({
    code: "invalid_platform_options",
    message: expect.stringContaining("platform_options.collaborators"),
  });
  expect((await refused(ig({ placement: "story", collaborators: ["a"] }), [external("a.jpg")])).code).toBe(
    "option_not_for_placement",
  );
  expect((await refused(ig({ user_tags: [{ username: "a" }] }), [external("a.jpg")])).code).toBe("invalid_user_tags");
  expect((await refused(ig({ user_tags: [{ username: "a", x: 0.5, y: 0.5 }] }), [external("v.mp4")])).code).toBe(
    "invalid_user_tags",
  );
  expect((await refused(ig({ share_to_feed: false }), [external("a.jpg")])).code).toBe("option_not_for_placement");
  // A location is a Page id; an unknown placement is not an option.
  expect((await refused(ig({ location_id: "Paris" }), [external("a.jpg")])).code).toBe("invalid_platform_options");
  expect((await refused(fb({ placement: "carousel" }), [external("a.jpg")])).code).toBe("invalid_platform_options");
  // Durations and shapes of each placement: an Instagram Story video lasts 60 s at most, a Facebook Reel
  // is 9:16 and 90 s at most, a Facebook video Story 60 s.
  const long = { width: 1080, height: 1920, duration: 120 };
  expect((await refused(ig({ placement: "story" }), [external("long.mp4", long)])).code).toBe("video_too_long");
  expect((await refused(fb({ placement: "reels" }), [external("long.mp4", long)])).code).toBe("video_too_long");
  expect(
    (await refused(fb({ placement: "reels" }), [external("wide.mp4", { width: 1920, height: 1080, duration: 10 })]))
      .code,
  ).toBe("invalid_aspect_ratio");
  expect(
    (await refused(fb({ placement: "story" }), [external("s.mp4", { width: 1080, height: 1920, duration: 61 })])).code,
  ).toBe("video_too_long");
  // The same long video is fine as an Instagram Reel (15 minutes) or a Facebook feed video.
  const ok = await cluster.request("POST", "/v1/posts/validate", {
    token,
    body: {
      content: "long",
      media: [external("long.mp4", long)],
      targets: [ig({ placement: "reels" }), { account_id: accounts.facebook }],
    },
  });
  expect(ok.status).toBe(200);
  expect(ok.body.data).toMatchObject({ ok: true, problems: [] });
});

test("with Prefer: handling=lenient a Story keeps its first file and says so", async () => {
  const res = await fetch(`${cluster.url}/v1/posts/validate`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", prefer: "handling=lenient" },
    body: JSON.stringify({
      content: "two files",
      media: [external("a.jpg"), external("b.jpg")],
      targets: [{ account_id: accounts.instagram, platform_options: { placement: "story" } }],
    }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  expect(body.data.ok).toBe(true);
  expect(body.data.targets[0].media).toEqual([expect.objectContaining({ url: "https://media.example.com/a.jpg" })]);
  expect(body.data.targets[0].adjustments).toEqual([expect.objectContaining({ code: "media_dropped" })]);
});
