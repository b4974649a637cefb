import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { createHarness, type Harness } from "../../support/harness.ts";
import { makeGif, makeJpeg, makeMp4, makePng, makeWebm } from "../../support/media-fixtures.ts";
import { maxUploadBytes } from "../../../src/storage/index.ts";
import type { FsStorage } from "../../../src/storage/fs.ts";
import { cleanupExpiredUploads } from "../../../src/modules/media/cleanup.ts";

let h: Harness;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let owner: { token: string; profileId: string };

const LIMIT = 64 * 1024;

beforeAll(async () => {
  h = await createHarness({ maxImageBytes: LIMIT, maxGifBytes: LIMIT / 2, maxVideoBytes: 4 * LIMIT });
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => h.app.handle(r),
    maxRequestBodySize: maxUploadBytes(h.ctx.config),
  });
  base = `http://127.0.0.1:${server.port}`;
  // The fs driver signs URLs on PUBLIC_URL: point it at the port the test server got.
  h.ctx.config.publicUrl = base;
  owner = await h.profile();
});

afterAll(async () => {
  server.stop(true);
  await h.close();
});

async function api(method: string, path: string, body?: unknown, token = owner.token) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

async function ticket(filename: string, content_type: string, token = owner.token) {
  const res = await api("POST", "/v1/media/uploads", { filename, content_type }, token);
  expect(res.status).toBe(201);
  return res.body.data as {
    media_id: string;
    path: string;
    content_type: string;
    upload: { signedUrl: string; token: string; path: string };
    max_bytes: number;
  };
}

const put = (url: string, body: BodyInit, contentType: string | null, extra: RequestInit = {}) =>
  fetch(url, { method: "PUT", body, headers: contentType ? { "content-type": contentType } : {}, ...extra });

const mediaRows = async () => Number((await h.db.rows<{ n: number }>(sql`select count(*)::int as n from media`))[0].n);
const storage = () => h.ctx.storage as FsStorage;
const partials = () => readdirSync(join(storage().root, ".partial"));
/**
 * The partial files of one media. A video uploaded by an earlier test may still be having its poster
 * frame written aside in the same folder (seen in CI: med_…~poster.jpg.<suffix>), which is no leftover.
 */
const partialsOf = (mediaId: string) => partials().filter((name) => name.startsWith(mediaId));

describe("the upload flow over real HTTP (fs driver)", () => {
  test("ticket, PUT, resolve, then the public URL serves the same bytes", async () => {
    const png = makePng(3, 2);
    const t = await ticket("Holiday Photo.PNG", "image/png");
    expect(t.media_id).toMatch(/^med_[A-Za-z0-9_-]{22}$/);
    expect(t.path).toBe(`${t.media_id}.png`);
    expect(t.upload.path).toBe(t.path);
    expect(t.upload.signedUrl.startsWith(`${base}/media/${t.path}?token=`)).toBe(true);
    expect(t.max_bytes).toBe(LIMIT);

    const before = await api("GET", `/v1/media/${t.media_id}`);
    expect(before.status).toBe(409);
    expect(before.body.error.code).toBe("media_not_uploaded");
    expect(before.body.error.hint).toContain("signedUrl");

    const up = await put(t.upload.signedUrl, png, "image/png");
    expect(up.status).toBe(200);
    expect(((await up.json()) as any).data).toEqual({ id: t.media_id, path: t.path, size: png.length });

    const got = await api("GET", `/v1/media/${t.media_id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      id: t.media_id,
      path: t.path,
      public_url: `${base}/media/${t.path}`,
      content_type: "image/png",
      size: png.length,
      width: 3,
      height: 2,
      duration: null,
    });

    const file = await fetch(got.body.data.public_url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(file.headers.get("content-length")).toBe(String(png.length));
    expect(file.headers.get("etag")).toBeTruthy();
    expect(file.headers.get("accept-ranges")).toBe("bytes");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(png);
    expect(partials()).toEqual([]);
  });

  test("each accepted type goes through, with its size and facts read from the file", async () => {
    type Case = [string, string, Uint8Array<ArrayBuffer>, Record<string, unknown>];
    const video = (container: string, codec: string) => ({
      width: 64,
      height: 48,
      duration: 0.5,
      facts: { kind: "video", container, video_codec: codec, width: 64, height: 48, duration: 0.5, frame_rate: 10 },
    });
    const cases: Case[] = [
      ["a.jpg", "image/jpeg", makeJpeg(640, 480), { width: 640, height: 480, facts: { format: "jpeg" } }],
      ["a.gif", "image/gif", makeGif(20, 10), { width: 20, height: 10, facts: { format: "gif", animated: false } }],
      ["clip.mp4", "video/mp4", makeMp4(1000), video("mov,mp4,m4a,3gp,3g2,mj2", "h264")],
      ["clip.mov", "video/quicktime", makeMp4(1000), video("mov,mp4,m4a,3gp,3g2,mj2", "h264")],
      ["clip.webm", "video/webm", makeWebm(), video("matroska,webm", "vp9")],
    ];
    for (const [name, type, bytes, expected] of cases) {
      const t = await ticket(name, type);
      expect((await put(t.upload.signedUrl, bytes, type)).status).toBe(200);
      const got = await api("GET", `/v1/media/${t.media_id}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({ content_type: type, size: bytes.length, ...expected });
      const file = await fetch(got.body.data.public_url);
      expect(file.headers.get("content-type")).toBe(type);
      expect(new Uint8Array(await file.arrayBuffer())).toEqual(bytes);
    }
  });

  test("a streamed (chunked) body with no Content-Length is accepted", async () => {
    const bytes = makeMp4(100_000);
    const t = await ticket("stream.mp4", "video/mp4");
    const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 7000) c.enqueue(bytes.slice(i, i + 7000));
        c.close();
      },
    });
    const res = await put(t.upload.signedUrl, stream, "video/mp4", { duplex: "half" } as RequestInit);
    expect(res.status).toBe(200);
    const got = await api("GET", `/v1/media/${t.media_id}`);
    expect(new Uint8Array(await (await fetch(got.body.data.public_url)).arrayBuffer())).toEqual(bytes);
  });
});

describe("creating a ticket", () => {
  const bad: [string, unknown, string, string?][] = [
    ["no filename", { content_type: "image/png" }, "invalid_filename", "filename is required"],
    ["empty filename", { filename: "  ", content_type: "image/png" }, "invalid_filename", "filename is required"],
    ["a path", { filename: "../etc/x.png", content_type: "image/png" }, "invalid_filename"],
    ["a Windows path", { filename: "C:\\pics\\x.png", content_type: "image/png" }, "invalid_filename"],
    ["no extension", { filename: "photo", content_type: "image/png" }, "invalid_filename"],
    ["a trailing dot", { filename: "photo.", content_type: "image/png" }, "invalid_filename"],
    ["a dotfile", { filename: ".png", content_type: "image/png" }, "invalid_filename"],
    ["an extension of another type", { filename: "photo.png", content_type: "image/jpeg" }, "invalid_filename"],
    ["no content_type", { filename: "photo.png" }, "invalid_content_type"],
    [
      "a content_type outside the list",
      { filename: "doc.pdf", content_type: "application/pdf" },
      "invalid_content_type",
    ],
    ["an unknown property", { filename: "photo.png", content_type: "image/png", public: true }, "validation_error"],
  ];
  for (const [what, body, code, message] of bad) {
    test(`with ${what} is a 400 ${code} and creates nothing`, async () => {
      const n = await mediaRows();
      const res = await api("POST", "/v1/media/uploads", body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(code);
      if (message) expect(res.body.error.message).toBe(message);
      expect(res.body.error.hint).toBeTruthy();
      expect(await mediaRows()).toBe(n);
    });
  }

  test("the shorthands image and video take the type from the extension, as the upstream accepts", async () => {
    for (const [filename, shorthand, type] of [
      ["clip.mp4", "video", "video/mp4"],
      ["clip.MOV", "video", "video/quicktime"],
      ["clip.webm", "video", "video/webm"],
      ["photo.png", "image", "image/png"],
      ["photo.jpeg", "image", "image/jpeg"],
      ["loop.gif", "image", "image/gif"],
    ] as const) {
      const res = await api("POST", "/v1/media/uploads", { filename, content_type: shorthand });
      expect(res.status).toBe(201);
      expect(res.body.data.content_type).toBe(type);
      expect(res.body.data.path.endsWith(filename.slice(filename.lastIndexOf(".")).toLowerCase())).toBe(true);
    }
  });

  test("a shorthand whose file name has another kind's extension, or none, is a 400 naming both", async () => {
    for (const [filename, shorthand] of [
      ["photo.png", "video"],
      ["clip.mp4", "image"],
      ["clip", "video"],
      ["notes.txt", "image"],
    ] as const) {
      const n = await mediaRows();
      const res = await api("POST", "/v1/media/uploads", { filename, content_type: shorthand });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_content_type");
      expect(res.body.error.message).toContain(shorthand);
      expect(res.body.error.message).toContain(filename);
      expect(res.body.error.hint).toBeTruthy();
      expect(await mediaRows()).toBe(n);
    }
  });

  test("the extension mismatch names both sides", async () => {
    const res = await api("POST", "/v1/media/uploads", { filename: "photo.png", content_type: "image/jpeg" });
    expect(res.body.error.message).toContain(".png");
    expect(res.body.error.message).toContain("image/jpeg");
  });

  test("needs media:write", async () => {
    const reader = await h.profile({ scopes: ["media:read"] });
    const res = await api("POST", "/v1/media/uploads", { filename: "a.png", content_type: "image/png" }, reader.token);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("missing_scope");
  });
});

describe("resolving a media", () => {
  test("a malformed id is 400 invalid_media_id", async () => {
    for (const id of ["nope", "med_short", "med_AAAAAAAAAAAAAAAAAAAAAB", "123e4567-e89b-12d3-a456-426614174000"]) {
      const res = await api("GET", `/v1/media/${id}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_media_id");
    }
  });

  test("an unknown id is 404", async () => {
    const res = await api("GET", "/v1/media/med_AAAAAAAAAAAAAAAAAAAAAA");
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });

  test("another profile's media is 404, uploaded or not", async () => {
    const t = await ticket("mine.png", "image/png");
    expect((await put(t.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(200);
    const other = await h.profile();
    const res = await api("GET", `/v1/media/${t.media_id}`, undefined, other.token);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    expect((await api("GET", `/v1/media/${t.media_id}`)).status).toBe(200);
  });

  test("needs media:read", async () => {
    const writer = await h.profile({ scopes: ["media:write"] });
    const t = await ticket("w.png", "image/png", writer.token);
    const res = await api("GET", `/v1/media/${t.media_id}`, undefined, writer.token);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("missing_scope");
  });
});

describe("the signed PUT", () => {
  test("refuses a wrong or missing Content-Type and keeps the ticket open", async () => {
    const t = await ticket("x.png", "image/png");
    for (const type of ["image/jpeg", null]) {
      const res = await put(t.upload.signedUrl, makePng(2, 2), type);
      expect(res.status).toBe(415);
      expect(((await res.json()) as any).error.code).toBe("content_type_mismatch");
    }
    expect((await put(t.upload.signedUrl, makePng(2, 2), "image/png; charset=binary")).status).toBe(200);
  });

  test("refuses forged tokens", async () => {
    const t = await ticket("forge.png", "image/png");
    const url = new URL(t.upload.signedUrl);
    const [payload, sig] = t.upload.token.split(".");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const bigger = Buffer.from(JSON.stringify({ ...claims, n: claims.n * 1000 })).toString("base64url");
    const forged = [
      `${bigger}.${sig}`, // a raised size limit under the old signature
      `${payload}.${sig.slice(0, -2)}AA`, // a changed signature
      "garbage",
      "",
    ];
    for (const token of forged) {
      url.searchParams.set("token", token);
      const res = await put(url.toString(), makePng(2, 2), "image/png");
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).error.code).toBe("invalid_upload_token");
    }
    // A genuine token of another ticket does not open this one.
    const other = await ticket("other.png", "image/png");
    url.searchParams.set("token", other.upload.token);
    expect((await put(url.toString(), makePng(2, 2), "image/png")).status).toBe(403);
    expect(existsSync(storage().filePath(t.path))).toBe(false);
    expect((await api("GET", `/v1/media/${t.media_id}`)).body.error.code).toBe("media_not_uploaded");
  });

  test("refuses an expired token", async () => {
    const t = await ticket("late.png", "image/png");
    h.clock.advance(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000);
    try {
      const res = await put(t.upload.signedUrl, makePng(2, 2), "image/png");
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).error.code).toBe("upload_expired");
      const got = await api("GET", `/v1/media/${t.media_id}`);
      expect(got.status).toBe(409);
      expect(got.body.error.message).toContain("expired");
    } finally {
      h.clock.advance(-(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000));
    }
  });

  test("takes one upload per ticket: a second PUT is 409 and changes nothing", async () => {
    const t = await ticket("once.png", "image/png");
    const first = makePng(4, 4);
    expect((await put(t.upload.signedUrl, first, "image/png")).status).toBe(200);
    const again = await put(t.upload.signedUrl, makePng(8, 8), "image/png");
    expect(again.status).toBe(409);
    expect(((await again.json()) as any).error.code).toBe("upload_already_used");
    const got = await api("GET", `/v1/media/${t.media_id}`);
    expect(got.body.data.width).toBe(4);
    expect(new Uint8Array(await (await fetch(got.body.data.public_url)).arrayBuffer())).toEqual(first);
  });

  test("two PUTs racing on one ticket: exactly one wins", async () => {
    const t = await ticket("race.png", "image/png");
    const results = await Promise.all(
      [makePng(5, 5), makePng(6, 6), makePng(7, 7)].map((b) => put(t.upload.signedUrl, b, "image/png")),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect(partialsOf(t.media_id)).toEqual([]);
  });

  test("a body over the limit is 413 and leaves nothing behind (declared length)", async () => {
    const t = await ticket("big.png", "image/png");
    const big = new Uint8Array(LIMIT + 1);
    big.set(makePng(1, 1));
    const res = await put(t.upload.signedUrl, big, "image/png");
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe("payload_too_large");
    expect(existsSync(storage().filePath(t.path))).toBe(false);
    expect(partialsOf(t.media_id)).toEqual([]);
    // The ticket is still open for a file that fits.
    expect((await api("GET", `/v1/media/${t.media_id}`)).body.error.code).toBe("media_not_uploaded");
    expect((await put(t.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(200);
  });

  test("a streamed body that grows over the limit is cut off with 413 and leaves nothing behind", async () => {
    const t = await ticket("big.gif", "image/gif");
    const limit = h.ctx.config.maxGifBytes;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array<ArrayBuffer>>({
      pull(c) {
        if (sent > limit * 3) return c.close();
        const chunk = sent === 0 ? makeGif(1, 1) : new Uint8Array(4096);
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const res = await put(t.upload.signedUrl, stream, "image/gif", { duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(existsSync(storage().filePath(t.path))).toBe(false);
    expect(partialsOf(t.media_id)).toEqual([]);
  });

  test("bytes that are not the declared type make the media invalid: 422 media_type_mismatch, nothing served", async () => {
    const t = await ticket("fake.png", "image/png");
    const res = await put(t.upload.signedUrl, makeJpeg(10, 10), "image/png");
    expect(res.status).toBe(422);
    expect(((await res.json()) as any).error.code).toBe("media_type_mismatch");
    const got = await api("GET", `/v1/media/${t.media_id}`);
    expect(got.status).toBe(422);
    expect(got.body.error.code).toBe("media_type_mismatch");
    expect(got.body.error.hint).toBeTruthy();
    expect((await fetch(`${base}/media/${t.path}`)).status).toBe(404);
    expect(partialsOf(t.media_id)).toEqual([]);
    // The ticket is spent.
    expect((await put(t.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(409);
  });

  test("an empty body is not an image either", async () => {
    const t = await ticket("empty.png", "image/png");
    expect((await put(t.upload.signedUrl, new Uint8Array(0), "image/png")).status).toBe(422);
  });
});

describe("public files", () => {
  let url: string;
  let bytes: Uint8Array<ArrayBuffer>;
  beforeAll(async () => {
    bytes = makeMp4(5000);
    const t = await ticket("range.mp4", "video/mp4");
    expect((await put(t.upload.signedUrl, bytes, "video/mp4")).status).toBe(200);
    url = (await api("GET", `/v1/media/${t.media_id}`)).body.data.public_url;
  });

  const get = (headers: Record<string, string>, method = "GET") => fetch(url, { method, headers });

  test("a byte range is 206 with Content-Range and exactly those bytes", async () => {
    const res = await get({ range: "bytes=10-19" });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toBe(`bytes 10-19/${bytes.length}`);
    expect(res.headers.get("content-length")).toBe("10");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes.slice(10, 20));
  });

  test("open-ended and suffix ranges", async () => {
    const tail = await get({ range: `bytes=${bytes.length - 100}-` });
    expect(tail.status).toBe(206);
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.slice(-100));
    const suffix = await get({ range: "bytes=-5" });
    expect(suffix.headers.get("content-range")).toBe(`bytes ${bytes.length - 5}-${bytes.length - 1}/${bytes.length}`);
    expect(new Uint8Array(await suffix.arrayBuffer())).toEqual(bytes.slice(-5));
    const past = await get({ range: `bytes=0-${bytes.length + 1000}` });
    expect(past.status).toBe(206);
    expect(past.headers.get("content-length")).toBe(String(bytes.length));
  });

  test("a range past the end is 416", async () => {
    const res = await get({ range: `bytes=${bytes.length}-` });
    expect(res.status).toBe(416);
    expect(res.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
  });

  test("If-Range with a stale ETag gets the whole file", async () => {
    const res = await get({ range: "bytes=0-9", "if-range": '"stale"' });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBe(bytes.length);
  });

  test("HEAD gives the headers without a body", async () => {
    const res = await get({}, "HEAD");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(bytes.length));
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  test("If-None-Match with the ETag is 304", async () => {
    const etag = (await get({}, "HEAD")).headers.get("etag")!;
    const res = await get({ "if-none-match": etag });
    expect(res.status).toBe(304);
  });

  test("unknown and malformed paths are 404 in the error envelope", async () => {
    for (const path of [
      "/media/med_AAAAAAAAAAAAAAAAAAAAAA.png",
      "/media/..%2Fsecret.key",
      "/media/secret.key",
      "/media/.partial",
    ]) {
      const res = await fetch(base + path);
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.code).toBe("not_found");
    }
  });

  test("our own public URL opens straight from storage; anything else is not ours", async () => {
    const opened = await h.ctx.storage.openByPublicUrl(url);
    expect(opened).toMatchObject({ contentType: "video/mp4", size: bytes.length });
    expect(new Uint8Array(await new Response(opened!.stream()).arrayBuffer())).toEqual(bytes);
    for (const other of [
      url.replace("127.0.0.1", "127.0.0.2"),
      `${base}/media/../secret.key`,
      `${base}/media/med_AAAAAAAAAAAAAAAAAAAAAA.png`,
      "http://example.invalid/x.png",
    ]) {
      expect(await h.ctx.storage.openByPublicUrl(other)).toBeNull();
    }
  });
});

describe("cleanup", () => {
  test("removes expired tickets that never got bytes and dead partial files, nothing else", async () => {
    const expired = await ticket("never.png", "image/png");
    const done = await ticket("done.png", "image/png");
    expect((await put(done.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(200);
    const dead = join(storage().root, ".partial", `${expired.path}.deadbeef.part`);
    writeFileSync(dead, "half an upload");
    const old = new Date(Date.now() - 3 * 3600_000);
    utimesSync(dead, old, old);

    h.clock.advance(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000);
    const fresh = await ticket("fresh.png", "image/png");
    try {
      const result = await cleanupExpiredUploads(h.ctx);
      expect(result.removedTickets).toBeGreaterThanOrEqual(1);
      expect(result.removedPartials).toBe(1);
      expect(existsSync(dead)).toBe(false);
      expect((await api("GET", `/v1/media/${expired.media_id}`)).status).toBe(404);
      expect((await api("GET", `/v1/media/${done.media_id}`)).status).toBe(200);
      expect((await api("GET", `/v1/media/${fresh.media_id}`)).body.error.code).toBe("media_not_uploaded");
      // A second run finds nothing more to do.
      expect(await cleanupExpiredUploads(h.ctx)).toEqual({ removedTickets: 0, removedPartials: 0, settled: 0 });
    } finally {
      h.clock.advance(-(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000));
    }
  });
});
