/**
 * GET /v1/media: a profile's uploads as a library, newest first, paged with the shared keyset paging,
 * with each file's facts; another profile's files, pending tickets and unreadable files are not listed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../../support/harness.ts";
import { makeImage, makeVideo } from "../../support/media-files.ts";

describe("GET /v1/media", () => {
  let h: Harness;
  let token = "";
  const ids: string[] = [];
  const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
  const upload = async (tk: string, filename: string, content_type: string, bytes: Uint8Array) => {
    const r = await h.request("POST", "/v1/media/base64", {
      token: tk,
      body: { filename, content_type, data: base64(bytes) },
    });
    expect(r.status).toBe(201);
    return r.body.data.id as string;
  };

  beforeAll(async () => {
    h = await createHarness();
    ({ token } = await h.profile());
    // Three uploads a minute apart (oldest first), so the order is the upload order.
    ids.push(await upload(token, "first.png", "image/png", await makeImage({ width: 40, height: 30, format: "png" })));
    h.clock.advance(60_000);
    ids.push(await upload(token, "clip.mp4", "video/mp4", makeVideo({ width: 160, height: 90, seconds: 1 })));
    h.clock.advance(60_000);
    ids.push(
      await upload(token, "third.jpg", "image/jpeg", await makeImage({ width: 64, height: 48, format: "jpeg" })),
    );
    // A ticket whose bytes never came is not a file anyone can use.
    const ticket = await h.request("POST", "/v1/media/uploads", {
      token,
      body: { filename: "never.jpg", content_type: "image/jpeg" },
    });
    expect(ticket.status).toBe(201);
    // Another profile's upload is never seen.
    const other = await h.profile();
    await upload(other.token, "theirs.png", "image/png", await makeImage({ width: 10, height: 10, format: "png" }));
  });
  afterAll(async () => {
    await h?.close();
  });

  test("lists the profile's uploads newest first, each with its facts", async () => {
    const r = await h.request("GET", "/v1/media", { token });
    expect(r.status).toBe(200);
    expect(r.body.data.map((m: any) => m.id)).toEqual([...ids].reverse());
    expect(r.body.meta).toEqual({ has_more: false, next_after: null, next_after_id: null });
    const [jpeg, video, png] = r.body.data;
    expect(jpeg).toMatchObject({ filename: "third.jpg", content_type: "image/jpeg", width: 64, height: 48 });
    expect(jpeg.facts).toMatchObject({ kind: "image", format: "jpeg", width: 64, height: 48 });
    expect(jpeg.public_url).toContain(jpeg.path);
    expect(Date.parse(jpeg.uploaded_at)).toBeGreaterThan(Date.parse(video.uploaded_at));
    expect(video.facts).toMatchObject({ kind: "video", video_codec: "h264", width: 160, height: 90 });
    expect(video.duration).toBeGreaterThan(0.5);
    expect(png.facts).toMatchObject({ kind: "image", format: "png" });
    // Each item is what GET /v1/media/{id} answers.
    const one = await h.request("GET", `/v1/media/${png.id}`, { token });
    expect(one.body.data).toEqual(png);
  });

  test("pages with meta.next_after and next_after_id, neither skipping nor repeating a file", async () => {
    const first = await h.request("GET", "/v1/media?limit=2", { token });
    expect(first.body.data.map((m: any) => m.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.meta.has_more).toBe(true);
    const { next_after, next_after_id } = first.body.meta;
    const second = await h.request(
      "GET",
      `/v1/media?limit=2&after=${encodeURIComponent(next_after)}&after_id=${next_after_id}`,
      { token },
    );
    expect(second.body.data.map((m: any) => m.id)).toEqual([ids[0]]);
    expect(second.body.meta.has_more).toBe(false);
  });

  test("type=video and type=image narrow the list", async () => {
    const videos = await h.request("GET", "/v1/media?type=video", { token });
    expect(videos.body.data.map((m: any) => m.id)).toEqual([ids[1]]);
    const images = await h.request("GET", "/v1/media?type=image", { token });
    expect(images.body.data.map((m: any) => m.id)).toEqual([ids[2], ids[0]]);
  });

  test("bad paging or type is 400 with the error envelope; a key without media:read is refused", async () => {
    const bad = await h.request("GET", "/v1/media?type=audio", { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBeString();
    expect(bad.body.error.message).toContain("type");
    const limit = await h.request("GET", "/v1/media?limit=0", { token });
    expect(limit.status).toBe(400);
    const writer = await h.profile({ scopes: ["media:write"] });
    const refused = await h.request("GET", "/v1/media", { token: writer.token });
    expect(refused.status).toBe(403);
  });
});
