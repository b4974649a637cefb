/**
 * Poster frames: a video uploaded through either storage driver gets a JPEG still of itself, made in
 * the background, served at GET /v1/media/{id}'s poster_url, of the video's shape and at most 1280 px.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";
import { startS3 } from "../support/s3.ts";
import { until } from "../support/until.ts";
import { sharp } from "../../src/media/tools.ts";
import { posterTime } from "../../src/media/poster.ts";
import { maxUploadBytes } from "../../src/storage/index.ts";

interface Served {
  h: Harness;
  base: string;
  token: string;
  stop(): Promise<void>;
}

async function serve(s3?: Awaited<ReturnType<typeof startS3>>): Promise<Served> {
  const h = await createHarness({ maxVideoBytes: 50 * 1024 * 1024, ...(s3 && { s3: s3.config }) });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => h.app.handle(r),
    maxRequestBodySize: maxUploadBytes(h.ctx.config),
  });
  const base = `http://127.0.0.1:${server.port}`;
  h.ctx.config.publicUrl = base;
  const { token } = await h.profile();
  return {
    h,
    base,
    token,
    async stop() {
      server.stop(true);
      await h.close();
    },
  };
}

async function api(s: Served, method: string, path: string, body?: unknown) {
  const res = await fetch(s.base + path, {
    method,
    headers: { authorization: `Bearer ${s.token}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Uploads bytes through a ticket and its signed URL, as a client does; the media as GET answers it once settled. */
async function upload(s: Served, filename: string, contentType: string, bytes: Uint8Array<ArrayBuffer>) {
  const t = await api(s, "POST", "/v1/media/uploads", { filename, content_type: contentType });
  expect(t.status).toBe(201);
  const put = await fetch(t.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": contentType },
    body: bytes,
  });
  expect(put.ok).toBe(true);
  const got = await api(s, "GET", `/v1/media/${t.body.data.media_id}`);
  expect(got.status).toBe(200);
  return got.body.data as { id: string; poster_url: string | null; public_url: string };
}

const posterOf = (s: Served, id: string) =>
  until(`the poster of ${id}`, async () => {
    const got = await api(s, "GET", `/v1/media/${id}`);
    return (got.body.data.poster_url as string | null) ?? undefined;
  });

async function checkPoster(url: string, width: number, height: number) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toStartWith("image/jpeg");
  const meta = await (await sharp())(Buffer.from(await res.arrayBuffer())).metadata();
  expect(meta.format).toBe("jpeg");
  expect(meta.width).toBe(width);
  expect(meta.height).toBe(height);
}

describe("poster frames (fs)", () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve();
  });
  afterAll(() => s.stop());

  test("a landscape video gets a JPEG poster of its shape, at most 1280 px wide", async () => {
    const video = await upload(s, "clip.mp4", "video/mp4", makeVideo({ width: 1920, height: 1080, seconds: 2 }));
    const url = await posterOf(s, video.id);
    expect(url).toContain("~poster.jpg");
    await checkPoster(url, 1280, 720);
  });

  test("a small portrait video keeps its size", async () => {
    const video = await upload(
      s,
      "tall.mov",
      "video/quicktime",
      makeVideo({ width: 360, height: 640, container: "mov" }),
    );
    await checkPoster(await posterOf(s, video.id), 360, 640);
  });

  test("an image has no poster", async () => {
    const image = await upload(s, "photo.jpg", "image/jpeg", await makeImage({ width: 64, height: 48 }));
    expect(image.poster_url).toBeNull();
  });

  test("a poster is taken a second in, or at a tenth of a shorter video", () => {
    expect(posterTime(30)).toBe(1);
    expect(posterTime(2)).toBeCloseTo(0.2);
    expect(posterTime(null)).toBe(0);
  });
});

describe("poster frames (s3)", () => {
  let s3: Awaited<ReturnType<typeof startS3>>;
  let s: Served;
  beforeAll(async () => {
    s3 = await startS3();
    s = await serve(s3);
  });
  afterAll(async () => {
    await s.stop();
    await s3.stop();
  });

  test("a video uploaded to the bucket gets its poster, read by ffmpeg from a presigned URL", async () => {
    const video = await upload(s, "clip.mp4", "video/mp4", makeVideo({ width: 640, height: 480, seconds: 2 }));
    await checkPoster(await posterOf(s, video.id), 640, 480);
  });
});
