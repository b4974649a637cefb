import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import { decodeMediaId } from "../../../src/domain/media-ids.ts";
import { media } from "../../../src/db/schema.ts";
import { probeImage, probeVideo } from "../../../src/media/probe.ts";
import { videoTools } from "../../../src/media/tools.ts";
import { maxUploadBytes } from "../../../src/storage/index.ts";
import { createHarness, type Harness } from "../../support/harness.ts";
import { makeImage, makeVideo } from "../../support/media-files.ts";

// What a file is (its duration, aspect ratio, size in pixels, frame rate) is checked at creation against
// each platform's declaration, with the file's own numbers when it is Crier's upload: a refusal names the
// target, the file and the number, and nothing is saved.

let h: Harness;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let token: string;
let profileId: string;
const accounts: Record<string, string> = {};

beforeAll(async () => {
  h = await createHarness();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => h.app.handle(r),
    maxRequestBodySize: maxUploadBytes(h.ctx.config),
  });
  base = `http://127.0.0.1:${server.port}`;
  // The fs driver serves and recognises media under PUBLIC_URL: the port this test server got.
  h.ctx.config.publicUrl = base;
  ({ token, profileId } = await h.profile());
  for (const platform of ["instagram", "twitter", "tiktok"]) {
    const row = await upsertConnectedAccount(h.ctx, {
      profileId,
      platform,
      remoteId: `${platform}-1`,
      username: `${platform}.test`,
      credentials: {},
    });
    accounts[platform] = row.id;
  }
});

afterAll(async () => {
  server.stop(true);
  await h.close();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/**
 * Uploads real bytes through the API and returns the public URL. The media row gets the probe's facts,
 * as the upload itself will once probing on arrival is in (until then the row holds width, height and
 * duration only, which the checks use too).
 */
async function upload(bytes: Uint8Array<ArrayBuffer>, filename: string, content_type: string) {
  const ticket = await api("POST", "/v1/media/uploads", { filename, content_type });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    body: bytes,
    headers: { "content-type": content_type },
  });
  expect(put.status).toBe(200);
  const got = await api("GET", `/v1/media/${ticket.body.data.media_id}`);
  const id = decodeMediaId(ticket.body.data.media_id)!;
  const location = await h.ctx.storage.probeLocation(ticket.body.data.path);
  const facts = content_type.startsWith("video/")
    ? await probeVideo(videoTools(), location)
    : await probeImage(Uint8Array.from(bytes));
  await h.db.db.update(media).set({ facts }).where(eq(media.id, id));
  return { url: got.body.data.public_url as string, size: bytes.length, name: ticket.body.data.path as string };
}

const to = (platform: string, items: unknown[]) => ({
  content: "a post",
  media: items,
  targets: [{ account_id: accounts[platform] }],
});
const postCount = async () => (await api("GET", "/v1/posts?limit=100")).body.data.length as number;

/** POST /v1/posts answers 400 with this code, naming the target and the file; nothing is saved. */
async function refused(body: unknown, code: string, platform: string, file: string) {
  const before = await postCount();
  const res = await api("POST", "/v1/posts", body);
  expect(`${res.status} ${res.body.error?.code}`).toBe(`400 ${code}`);
  const message: string = res.body.error.message;
  expect(message.startsWith(`targets[0] (account ${accounts[platform]}, ${platform}): media[0] (${file})`)).toBe(true);
  expect(res.body.error.hint).toBeTruthy();
  expect(await postCount()).toBe(before);
  return message;
}

describe("a video's duration", () => {
  test("a 2 s video to Instagram is refused, naming the 3 s Instagram needs", async () => {
    const clip = await upload(makeVideo({ width: 720, height: 1280, seconds: 2 }), "clip.mp4", "video/mp4");
    const message = await refused(to("instagram", [{ url: clip.url }]), "video_too_short", "instagram", clip.name);
    expect(message).toMatch(/lasts 2(\.\d+)? s; Instagram needs at least 3 s\.$/);
  });

  test("the file's duration wins over the client's for Crier's own media", async () => {
    const clip = await upload(makeVideo({ width: 720, height: 1280, seconds: 2.4 }), "short.mp4", "video/mp4");
    const message = await refused(
      to("instagram", [{ url: clip.url, duration: 10 }]),
      "video_too_short",
      "instagram",
      clip.name,
    );
    expect(message).toMatch(/lasts 2\.4\d? s;/);
  });

  test("an X video over X's 20 minutes is refused, naming 1200 s", async () => {
    const long = await upload(
      makeVideo({ width: 64, height: 64, seconds: 1210, fps: 1, audio: false }),
      "long.mp4",
      "video/mp4",
    );
    const message = await refused(to("twitter", [{ url: long.url }]), "video_too_long", "twitter", long.name);
    expect(message).toMatch(/lasts 121\d(\.\d+)? s; X \(Twitter\) takes at most 1200 s\.$/);
  });

  test("a file that is not Crier's is checked with the client's numbers, and skipped without them", async () => {
    const url = "https://cdn.example.com/clip.mp4";
    const message = await refused(to("instagram", [{ url, duration: 2 }]), "video_too_short", "instagram", url);
    expect(message).toContain("lasts 2 s; Instagram needs at least 3 s.");
    const accepted = await api("POST", "/v1/posts", to("instagram", [{ url }]));
    expect(accepted.status).toBe(201);
  });
});

describe("aspect ratio, pixels and frame rate", () => {
  test("a 1:4 image to Instagram is refused with the range Instagram takes", async () => {
    const tall = await upload(await makeImage({ width: 400, height: 1600 }), "tall.jpg", "image/jpeg");
    const message = await refused(to("instagram", [{ url: tall.url }]), "invalid_aspect_ratio", "instagram", tall.name);
    expect(message).toContain("is 400×1600 (0.25:1, too tall); Instagram takes images from 4:5 to 1.91:1");
  });

  test("a 1:4 video to X is refused: X takes video from 1:3 to 3:1", async () => {
    const tall = await upload(makeVideo({ width: 160, height: 640, seconds: 1 }), "tall.mp4", "video/mp4");
    const message = await refused(to("twitter", [{ url: tall.url }]), "invalid_aspect_ratio", "twitter", tall.name);
    expect(message).toContain("X (Twitter) takes videos from 1:3 to 3:1");
  });

  test("a 15 fps video to TikTok is refused, naming TikTok's 23 to 60 fps", async () => {
    const slow = await upload(makeVideo({ width: 360, height: 640, seconds: 4, fps: 15 }), "slow.mp4", "video/mp4");
    const message = await refused(to("tiktok", [{ url: slow.url }]), "invalid_frame_rate", "tiktok", slow.name);
    expect(message).toContain("plays at 15 frames per second; TikTok takes 23 to 60 fps.");
  });

  test("a video narrower than TikTok's 360 pixels is refused as too small", async () => {
    const small = await upload(makeVideo({ width: 320, height: 640, seconds: 4 }), "small.mp4", "video/mp4");
    const message = await refused(to("tiktok", [{ url: small.url }]), "media_too_small", "tiktok", small.name);
    expect(message).toContain("is 320 pixels wide; TikTok needs videos at least 360 wide.");
  });
});

describe("the stored post and the other ways in", () => {
  test("GET /v1/posts/{id} shows the file's width, height, duration and size, not the client's", async () => {
    const clip = await upload(makeVideo({ width: 720, height: 1280, seconds: 4 }), "reel.mp4", "video/mp4");
    const created = await api(
      "POST",
      "/v1/posts",
      to("instagram", [{ url: clip.url, width: 1, height: 1, duration: 99, size: 5 }]),
    );
    expect(created.status).toBe(201);
    const got = await api("GET", `/v1/posts/${created.body.data.id}`);
    const [item] = got.body.data.media;
    expect(item).toMatchObject({ url: clip.url, width: 720, height: 1280, size: clip.size });
    expect(item.duration).toBeGreaterThanOrEqual(4);
    expect(item.duration).toBeLessThan(4.2);
  });

  test("POST /v1/posts/validate lists the refusal with the file's numbers", async () => {
    const clip = await upload(makeVideo({ width: 720, height: 1280, seconds: 2 }), "clip.mp4", "video/mp4");
    const res = await api("POST", "/v1/posts/validate", to("instagram", [{ url: clip.url, duration: 30 }]));
    expect(res.status).toBe(200);
    expect(res.body.data.ok).toBe(false);
    const [target] = res.body.data.targets;
    expect(target.problems.map((p: { code: string }) => p.code)).toEqual(["video_too_short"]);
    expect(target.problems[0].field).toBe("media[0]");
    expect(target.media[0].duration).toBeLessThan(2.2);
  });

  test("PATCH to a video that is too short is refused and leaves the post as it was", async () => {
    const good = await upload(makeVideo({ width: 720, height: 1280, seconds: 4 }), "good.mp4", "video/mp4");
    const short = await upload(makeVideo({ width: 720, height: 1280, seconds: 2 }), "short2.mp4", "video/mp4");
    const publish_at = new Date(h.clock.now().getTime() + 86_400_000).toISOString();
    const created = await api("POST", "/v1/posts", { ...to("instagram", [{ url: good.url }]), publish_at });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const patched = await api("PATCH", `/v1/posts/${id}`, { media: [{ url: short.url, duration: 10 }] });
    expect(`${patched.status} ${patched.body.error?.code}`).toBe("400 video_too_short");
    expect(patched.body.error.message).toContain(`media[0] (${short.name}) lasts 2`);
    const after = await api("GET", `/v1/posts/${id}`);
    expect(after.body.data.media[0].url).toBe(good.url);
  });
});
