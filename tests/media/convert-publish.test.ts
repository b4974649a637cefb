/**
 * Media that fits each platform, end to end through the sandbox (real HTTP, the real plugins talking to
 * their emulators, real files made by sharp and ffmpeg): what each emulator receives or pulls is read back
 * and checked: its format, its bytes, and that no location is left in it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { sharp } from "../../src/media/tools.ts";
import { exifHasGps, runFfprobe } from "../../src/media/probe.ts";
import { videoTools } from "../../src/media/tools.ts";
import { connectSandbox, sandboxCluster, type Copy, type SandboxCluster } from "../support/sandbox-kit.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { prepareUpcomingMedia } from "../../src/engine/media-prepare.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Every platform a sandbox publishes images to without options of its own. */
const IMAGE_PLATFORMS = ["bluesky", "telegram", "twitter", "threads", "facebook", "linkedin", "instagram", "farcaster"];

let cluster: SandboxCluster;
let copy: Copy;
let token: string;
const accountOf = new Map<string, string>();

/** What each platform's emulator was sent: request bodies, and the URLs in them and in their queries. */
const received = new Map<string, { body: Uint8Array; url: string }[]>();

function record(c: Copy) {
  const registry = c.ctx.platforms;
  const original = registry.emulatorFor.bind(registry);
  const wrapped = new WeakSet<object>();
  registry.emulatorFor = (platform, profileId) => {
    const emu = original(platform, profileId);
    if (emu && !wrapped.has(emu)) {
      wrapped.add(emu);
      const handle = emu.handle.bind(emu);
      emu.handle = async (req: Request, path: string) => {
        const body = new Uint8Array(await req.clone().arrayBuffer());
        received.set(platform, [...(received.get(platform) ?? []), { body, url: req.url }]);
        return handle(req, path);
      };
    }
    return emu;
  };
}

async function upload(
  filename: string,
  contentType: string,
  bytes: Uint8Array<ArrayBuffer>,
): Promise<{ id: string; url: string }> {
  const ticket = await cluster.request("POST", "/v1/media/uploads", {
    token,
    body: { filename, content_type: contentType },
  });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": contentType },
    body: bytes,
  });
  expect(put.status).toBeLessThan(300);
  const got = await cluster.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  return { id: ticket.body.data.media_id, url: got.body.data.public_url };
}

async function publish(
  platforms: string[],
  media: { url: string; type?: string; thumbnail_url?: string }[],
  options: Record<string, unknown> = {},
) {
  received.clear();
  const res = await cluster.request("POST", "/v1/posts", {
    token,
    body: {
      content: "media test",
      media,
      targets: platforms.map((p) => ({ account_id: accountOf.get(p), platform_options: options[p] })),
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await cluster.settle();
  let post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token });
  // Platforms that process media first (Instagram's containers, LinkedIn's videos) are polled later.
  for (let i = 0; i < 10 && post.body.data.targets.some((t: { status: string }) => t.status === "submitted"); i++) {
    cluster.clock.advance(60_000);
    await cluster.settle();
    post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token });
  }
  return post.body.data as {
    id: string;
    targets: { platform: string; status: string; error: string | null; error_code: string | null }[];
  };
}

const notPublished = (post: Awaited<ReturnType<typeof publish>>) =>
  post.targets.filter((t) => t.status !== "published").map((t) => `${t.platform}: ${t.status} ${t.error}`);

/**
 * The files a platform got: bytes sent inline (raw, in a multipart part, or base64 in JSON), and the files
 * behind any of Crier's URLs it was given to pull (fetched here as the platform fetches them).
 */
async function filesSentTo(platform: string): Promise<{ bytes: Uint8Array; contentType: string | null }[]> {
  const files: { bytes: Uint8Array; contentType: string | null }[] = [];
  const urls = new Set<string>();
  for (const r of received.get(platform) ?? []) {
    // Form and query values are percent-encoded: decoded so the URLs in them can be read.
    const text = (new TextDecoder("latin1").decode(r.body) + " " + r.url).replace(/%([0-9A-Fa-f]{2})/g, (_, h) =>
      String.fromCharCode(parseInt(h, 16)),
    );
    for (const m of text.matchAll(/https?:\/\/127\.0\.0\.1:\d+\/[^\s"'&<>\\]+/g)) urls.add(m[0]);
    // Raw or multipart image and video bytes.
    const jpeg = findAll(r.body, [0xff, 0xd8, 0xff]);
    for (const at of jpeg) files.push({ bytes: r.body.subarray(at), contentType: "image/jpeg" });
    const ftyp = findAll(r.body, [0x66, 0x74, 0x79, 0x70]); // "ftyp" 4 bytes into an MP4 or MOV
    for (const at of ftyp) if (at >= 4) files.push({ bytes: r.body.subarray(at - 4), contentType: "video" });
    for (const m of text.matchAll(/[A-Za-z0-9+/]{4000,}={0,2}/g)) {
      const bytes = Uint8Array.from(Buffer.from(m[0], "base64"));
      if (bytes[0] === 0xff && bytes[1] === 0xd8) files.push({ bytes, contentType: "image/jpeg" });
    }
  }
  for (const url of urls) {
    if (!url.includes("/media/") || url.includes("/sandbox/")) continue;
    const res = await fetch(url);
    if (res.ok)
      files.push({ bytes: new Uint8Array(await res.arrayBuffer()), contentType: res.headers.get("content-type") });
  }
  return files;
}

function findAll(hay: Uint8Array, needle: number[]): number[] {
  const found: number[] = [];
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    found.push(i);
    if (found.length > 8) break;
  }
  return found;
}

async function imageMeta(bytes: Uint8Array) {
  const lib = await sharp();
  return lib(bytes).metadata();
}

const XMP_LOCATION = /GPSLatitude|GPSLongitude|LocationCreated|LocationShown/;

beforeAll(async () => {
  cluster = await sandboxCluster();
  copy = await cluster.start();
  record(copy);
  const profile = await createProfile(cluster.db, "media", true);
  ({ token } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] }));
  for (const p of IMAGE_PLATFORMS) await connectSandbox(cluster, token, p);
  const list = await cluster.request("GET", "/v1/accounts?limit=100", { token });
  for (const a of list.body.data) accountOf.set(a.platform, a.id);
}, 120_000);

afterAll(() => cluster.stop());

describe("conversions a platform needs", () => {
  test("a PNG to Instagram is accepted at creation and goes out as a JPEG; a PNG URL elsewhere is still refused", async () => {
    const png = await upload("square.png", "image/png", await makeImage({ width: 1080, height: 1080, format: "png" }));
    const post = await publish(["instagram"], [{ url: png.url, type: "image" }]);
    expect(notPublished(post)).toEqual([]);
    const files = await filesSentTo("instagram");
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      expect(f.contentType).toBe("image/jpeg");
      expect((await imageMeta(f.bytes)).format).toBe("jpeg");
    }
    // Not Crier's own file: nothing can convert it, so the check at creation refuses it, naming the number.
    const external = await cluster.request("POST", "/v1/posts", {
      token,
      body: {
        content: "x",
        media: [{ url: "https://example.com/photo.png", type: "image" }],
        targets: [{ account_id: accountOf.get("instagram") }],
      },
    });
    expect(external.status).toBe(400);
    expect(external.body.error.code).toBe("unsupported_media_format");
    expect(external.body.error.message).toContain("image/png");
  }, 60_000);

  test("a 3000×4000 photo of about 3 MB to Bluesky goes out under Bluesky's 2,000,000 bytes", async () => {
    const big = await makeImage({ width: 3000, height: 4000, noise: true, quality: 30 });
    expect(big.length).toBeGreaterThan(2_500_000);
    const photo = await upload("big.jpg", "image/jpeg", big);
    const post = await publish(["bluesky"], [{ url: photo.url, type: "image" }]);
    expect(notPublished(post)).toEqual([]);
    const files = (await filesSentTo("bluesky")).filter((f) => f.bytes.length > 10_000);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      expect(f.bytes.length).toBeLessThanOrEqual(2_000_000);
      const meta = await imageMeta(f.bytes);
      expect(meta.format).toBe("jpeg");
      // Same shape, fewer pixels or bytes: still a 3:4 portrait.
      expect(Math.abs(meta.width! / meta.height! - 0.75)).toBeLessThan(0.01);
    }
  }, 120_000);

  test("a MOV to LinkedIn (MP4 only; TikTok takes MOV as it is) goes out as an H.264 MP4 with faststart", async () => {
    const mov = await upload(
      "clip.mov",
      "video/quicktime",
      makeVideo({ container: "mov", codec: "hevc", seconds: 4, width: 640, height: 360 }),
    );
    const post = await publish(["linkedin"], [{ url: mov.url, type: "video" }]);
    expect(notPublished(post)).toEqual([]);
    const videos = (await filesSentTo("linkedin")).filter((f) => f.contentType !== "image/jpeg");
    expect(videos.length).toBeGreaterThan(0);
    const dir = mkdtempSync(join(tmpdir(), "crier-received-"));
    const file = join(dir, "received.mp4");
    writeFileSync(file, videos[0].bytes);
    const probed = await runFfprobe(videoTools(), file);
    expect(probed.format?.format_name).toContain("mp4");
    expect(probed.streams?.find((s) => s.codec_type === "video")?.codec_name).toBe("h264");
    expect(probed.streams?.find((s) => s.codec_type === "audio")?.codec_name).toBe("aac");
    // faststart: the index (moov) comes before the picture data (mdat).
    const head = new TextDecoder("latin1").decode(videos[0].bytes.subarray(0, 4096));
    expect(head.indexOf("moov")).toBeGreaterThan(-1);
  }, 120_000);

  test("a conversion that fails is a permanent error on the target naming the file and why", async () => {
    const png = await makeImage({ width: 600, height: 600, format: "png", noise: true });
    // The header is whole (the upload and its probe read it), the picture data is cut short.
    const cut = await upload("broken.png", "image/png", png.slice(0, Math.floor(png.length / 2)));
    const post = await publish(["instagram"], [{ url: cut.url, type: "image" }]);
    const target = post.targets[0];
    expect(target.status).toBe("failed");
    expect(target.error_code).toBe("media_conversion_failed");
    expect(target.error).toContain("broken.png");
    expect(target.error).toContain("Instagram");
    expect(received.get("instagram")?.some((r) => r.url.includes("/media"))).toBeFalsy();
  }, 60_000);
});

describe("ahead of publishing", () => {
  test("a scheduled post's media is converted before it falls due, and the publish uses that copy", async () => {
    const png = await upload("later.png", "image/png", await makeImage({ width: 900, height: 900, format: "png" }));
    const due = new Date(cluster.clock.now().getTime() + 5 * 60_000);
    const res = await cluster.request("POST", "/v1/posts", {
      token,
      body: {
        content: "later",
        media: [{ url: png.url, type: "image" }],
        publish_at: due.toISOString(),
        targets: [{ account_id: accountOf.get("instagram") }],
      },
    });
    expect(res.status).toBe(201);
    const rows = () =>
      cluster.db.rows<{ status: string; updated_at: string }>(
        sql`SELECT r.status, r.updated_at::text FROM media_renditions r JOIN media m ON m.id = r.media_id WHERE m.path LIKE ${`${png.id}.%`}`,
      );
    expect(await rows()).toEqual([]);
    expect(await prepareUpcomingMedia(copy.ctx)).toBeGreaterThan(0);
    const ready = await rows();
    expect(ready).toMatchObject([{ status: "ready" }]);
    received.clear();
    cluster.clock.set(new Date(due.getTime() + 1000));
    await cluster.settle();
    for (let i = 0; i < 5; i++) {
      cluster.clock.advance(60_000);
      await cluster.settle();
    }
    const post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token });
    expect(post.body.data.status).toBe("published");
    // Still the one copy made ahead (not made again), and that is what Instagram pulled.
    expect(await rows()).toEqual(ready);
    const files = await filesSentTo("instagram");
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(f.contentType).toBe("image/jpeg");
  }, 60_000);
});

describe("location metadata", () => {
  test("a phone photo's GPS position reaches no platform, and one stripped copy serves them all", async () => {
    // Turned upright it is 1000×1200 (5:6), inside every platform's aspect ratio range (Instagram: 4:5 at the narrowest).
    const gps = await makeImage({ width: 1200, height: 1000, gps: true, orientation: 6 });
    expect(exifHasGps((await imageMeta(gps)).exif)).toBe(true);
    const photo = await upload("phone.jpg", "image/jpeg", gps);
    const post = await publish(IMAGE_PLATFORMS, [{ url: photo.url, type: "image" }]);
    expect(notPublished(post)).toEqual([]);
    for (const platform of IMAGE_PLATFORMS) {
      const files = (await filesSentTo(platform)).filter((f) => f.contentType?.startsWith("image/"));
      expect({ platform, files: files.length > 0 }).toEqual({ platform, files: true });
      for (const f of files) {
        const meta = await imageMeta(f.bytes);
        expect({ platform, gps: exifHasGps(meta.exif) }).toEqual({ platform, gps: false });
        expect({ platform, xmp: XMP_LOCATION.test(meta.xmp?.toString("utf8") ?? "") }).toEqual({
          platform,
          xmp: false,
        });
        // The camera's turn is applied to the pixels: 1200×1000 stored, shown 1000×1200.
        expect({ platform, portrait: meta.height! > meta.width! }).toEqual({ platform, portrait: true });
      }
    }
    // Eight platforms, one converted copy.
    const rows = await cluster.db.rows<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM media_renditions r JOIN media m ON m.id = r.media_id WHERE m.path LIKE ${`${photo.id}.%`}`,
    );
    expect(Number(rows[0].n)).toBe(1);
  }, 120_000);

  test("KEEP_MEDIA_METADATA=true sends the photo as it was uploaded", async () => {
    const keeping = await cluster.start({ keepMediaMetadata: true });
    record(keeping);
    await cluster.stopCopy(copy);
    try {
      const photo = await upload("kept.jpg", "image/jpeg", await makeImage({ width: 800, height: 600, gps: true }));
      const post = await publish(["bluesky", "instagram"], [{ url: photo.url, type: "image" }]);
      expect(notPublished(post)).toEqual([]);
      for (const platform of ["bluesky", "instagram"]) {
        const files = (await filesSentTo(platform)).filter((f) => f.contentType?.startsWith("image/"));
        expect(files.length).toBeGreaterThan(0);
        for (const f of files) expect(exifHasGps((await imageMeta(f.bytes)).exif)).toBe(true);
      }
    } finally {
      copy = await cluster.start();
      record(copy);
      await cluster.stopCopy(keeping);
    }
  }, 60_000);
});

describe("a cover as TikTok's first frame", () => {
  /** The mean colour of a received video's first frame. */
  async function firstFrameColour(video: Uint8Array): Promise<{ r: number; g: number; b: number }> {
    const dir = mkdtempSync(join(tmpdir(), "crier-cover-"));
    writeFileSync(join(dir, "in.mp4"), video);
    const ffmpeg = videoTools().ffmpeg!;
    const r = Bun.spawnSync([ffmpeg, "-v", "error", "-i", join(dir, "in.mp4"), "-frames:v", "1", join(dir, "f.png")]);
    expect(r.exitCode).toBe(0);
    const { channels } = await (await sharp())(join(dir, "f.png")).stats();
    return { r: channels[0].mean, g: channels[1].mean, b: channels[2].mean };
  }

  async function redCover() {
    const lib = await sharp();
    const png = await lib({ create: { width: 360, height: 640, channels: 3, background: { r: 230, g: 20, b: 20 } } })
      .png()
      .toBuffer();
    return upload("cover.png", "image/png", Uint8Array.from(png));
  }

  test("media[].thumbnail_url goes in front of the video as its first frame; video_cover_timestamp_ms wins over it", async () => {
    if (!accountOf.has("tiktok")) {
      await connectSandbox(cluster, token, "tiktok");
      const list = await cluster.request("GET", "/v1/accounts?limit=100", { token });
      for (const a of list.body.data) accountOf.set(a.platform, a.id);
    }
    const cover = await redCover();
    const clip = await upload("clip.mp4", "video/mp4", makeVideo({ width: 360, height: 640, seconds: 4, fps: 30 }));
    const item = { url: clip.url, type: "video", thumbnail_url: cover.url };

    const covered = await publish(["tiktok"], [item]);
    expect(notPublished(covered)).toEqual([]);
    const sent = (await filesSentTo("tiktok")).filter((f) => f.contentType !== "image/jpeg");
    expect(sent.length).toBeGreaterThan(0);
    const first = await firstFrameColour(sent[0].bytes);
    // The cover is red; the test pattern's first frame is not.
    expect(first.r).toBeGreaterThan(180);
    expect(first.g).toBeLessThan(80);
    expect(first.b).toBeLessThan(80);

    // A cover frame picked by time: the video goes as it was uploaded.
    const timed = await publish(["tiktok"], [item], { tiktok: { video_cover_timestamp_ms: 1000 } });
    expect(notPublished(timed)).toEqual([]);
    const plain = (await filesSentTo("tiktok")).filter((f) => f.contentType !== "image/jpeg");
    expect(plain.length).toBeGreaterThan(0);
    const original = await firstFrameColour(plain[0].bytes);
    expect(original.r < 180 || original.g > 80 || original.b > 80).toBe(true);
  }, 180_000);
});

describe("a cover in the format the platform's cover takes", () => {
  test("an uploaded PNG cover of an Instagram Reel goes out as a JPEG copy, which Instagram takes", async () => {
    const lib = await sharp();
    const png = await lib({ create: { width: 360, height: 640, channels: 3, background: { r: 20, g: 120, b: 220 } } })
      .png()
      .toBuffer();
    const cover = await upload("cover.png", "image/png", Uint8Array.from(png));
    const clip = await upload("reel.mp4", "video/mp4", makeVideo({ width: 360, height: 640, seconds: 4, fps: 30 }));
    const post = await publish(["instagram"], [{ url: clip.url, type: "video", thumbnail_url: cover.url }]);
    // Instagram's Reels covers are JPEG only: its emulator fails the container for a PNG.
    expect(notPublished(post)).toEqual([]);
    const sentCovers = (received.get("instagram") ?? [])
      .map((r) => new URLSearchParams(new TextDecoder().decode(r.body)).get("cover_url"))
      .filter((u): u is string => !!u);
    expect(sentCovers.length).toBe(1);
    expect(sentCovers[0]).not.toBe(cover.url);
    const res = await fetch(sentCovers[0]);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    expect((await imageMeta(new Uint8Array(await res.arrayBuffer()))).format).toBe("jpeg");
  }, 120_000);
});
