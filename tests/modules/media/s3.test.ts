import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, createHmac } from "node:crypto";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { createHarness, TestClock, type Harness } from "../../support/harness.ts";
import { startS3 } from "../../support/s3.ts";
import { makeJpeg, makePng } from "../../support/media-fixtures.ts";
import { createS3Storage, type S3Storage } from "../../../src/storage/s3.ts";
import { cleanupExpiredUploads } from "../../../src/modules/media/cleanup.ts";
import type { StoreIntake } from "../../../src/storage/storage.ts";

let s3: Awaited<ReturnType<typeof startS3>>;
let h: Harness;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let owner: { token: string; profileId: string };
const LIMIT = 64 * 1024;

beforeAll(async () => {
  s3 = await startS3();
  h = await createHarness({ s3: s3.config, maxImageBytes: LIMIT });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h.app.handle(r) });
  base = `http://127.0.0.1:${server.port}`;
  owner = await h.profile();
});

afterAll(async () => {
  server.stop(true);
  await h.close();
  await s3.stop();
});

/** The API over real HTTP, like a client would call it. */
async function api(method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function ticket(filename: string, content_type: string, token = owner.token) {
  const res = await api("POST", "/v1/media/uploads", token, { filename, content_type });
  expect(res.status).toBe(201);
  return res.body.data as {
    media_id: string;
    path: string;
    upload: { signedUrl: string; token: string; path: string };
    expires_at: string;
  };
}

const put = (url: string, body: Uint8Array<ArrayBuffer>, contentType: string) =>
  fetch(url, { method: "PUT", body, headers: { "content-type": contentType } });

// The upload area of the storage the app uses (createStorage loads the s3 driver on its first call).
const incoming = () => h.ctx.storage.intake as StoreIntake;

const resolve = (id: string, token = owner.token) => api("GET", `/v1/media/${id}`, token);

describe("the upload flow against an S3-compatible store", () => {
  test("ticket, presigned PUT, resolve, then the public URL serves the same bytes", async () => {
    const png = makePng(5, 3);
    const t = await ticket("photo.png", "image/png");
    // Bytes go to the upload area; only a checked copy is served.
    expect(t.upload.path).toBe(`incoming/${t.path}`);
    expect(t.upload.signedUrl.startsWith(`${s3.endpoint}/${s3.bucket}/incoming/${t.path}?`)).toBe(true);
    expect(t.upload.token).toBe(new URL(t.upload.signedUrl).searchParams.get("X-Amz-Signature")!);

    const before = await resolve(t.media_id);
    expect(before.status).toBe(409);
    expect(before.body.error.code).toBe("media_not_uploaded");

    expect((await put(t.upload.signedUrl, png, "image/png")).status).toBe(200);
    const got = await resolve(t.media_id);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      id: t.media_id,
      path: t.path,
      content_type: "image/png",
      size: png.length,
      width: 5,
      height: 3,
    });
    // Without S3_PUBLIC_URL the public URL is a presigned GET of seven days.
    const pub = new URL(got.body.data.public_url);
    expect(pub.searchParams.get("X-Amz-Expires")).toBe(String(7 * 24 * 3600));
    const file = await fetch(got.body.data.public_url);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(png);

    const opened = await h.ctx.storage.openByPublicUrl(got.body.data.public_url);
    expect(opened).toMatchObject({ key: t.path, contentType: "image/png", size: png.length });
    expect(new Uint8Array(await new Response(opened!.stream()).arrayBuffer())).toEqual(png);
    expect(await h.ctx.storage.openByPublicUrl(`http://127.0.0.1:1/${s3.bucket}/${t.path}`)).toBeNull();
    expect(await h.ctx.storage.openByPublicUrl(`${s3.endpoint}/${s3.bucket}/secret.txt`)).toBeNull();
  });

  test("another profile's media is 404", async () => {
    const t = await ticket("mine.png", "image/png");
    expect((await put(t.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(200);
    const other = await h.profile();
    const res = await resolve(t.media_id, other.token);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
    // ... and looking did not settle it for the owner either way.
    expect((await resolve(t.media_id)).status).toBe(200);
  });

  test("bytes that are not the declared type: 422 media_type_mismatch and the object is deleted", async () => {
    const t = await ticket("fake.png", "image/png");
    expect((await put(t.upload.signedUrl, makeJpeg(8, 8), "image/png")).status).toBe(200);
    const got = await resolve(t.media_id);
    expect(got.status).toBe(422);
    expect(got.body.error.code).toBe("media_type_mismatch");
    expect(await incoming().stat(t.path)).toBeNull();
    expect(await h.ctx.storage.stat(t.path)).toBeNull();
    expect((await resolve(t.media_id)).status).toBe(422);
  });

  test("an object over the limit: 413, deleted, and the ticket stays open for a smaller file", async () => {
    const t = await ticket("big.png", "image/png");
    const big = new Uint8Array(LIMIT + 1);
    big.set(makePng(1, 1));
    expect((await put(t.upload.signedUrl, big, "image/png")).status).toBe(200);
    const got = await resolve(t.media_id);
    expect(got.status).toBe(413);
    expect(got.body.error.code).toBe("payload_too_large");
    expect(await incoming().stat(t.path)).toBeNull();
    expect(await h.ctx.storage.stat(t.path)).toBeNull();
    expect((await resolve(t.media_id)).body.error.code).toBe("media_not_uploaded");
    expect((await put(t.upload.signedUrl, makePng(2, 2), "image/png")).status).toBe(200);
    expect((await resolve(t.media_id)).status).toBe(200);
  });

  test("a second PUT with a spent presigned URL never replaces the served bytes, and cleanup drops it", async () => {
    const t = await ticket("first.png", "image/png");
    const first = makePng(3, 3);
    expect((await put(t.upload.signedUrl, first, "image/png")).status).toBe(200);
    const got = await resolve(t.media_id);
    expect(got.status).toBe(200);
    expect(await incoming().stat(t.path)).toBeNull();
    // The store cannot refuse it (a presigned URL is not one-shot) ...
    expect((await put(t.upload.signedUrl, makeJpeg(9, 9), "image/png")).status).toBe(200);
    // ... but it lands in the upload area only.
    const again = await resolve(t.media_id);
    expect(again.body.data).toMatchObject({ width: 3, height: 3, size: first.length });
    expect(new Uint8Array(await (await fetch(again.body.data.public_url)).arrayBuffer())).toEqual(first);
    expect(await incoming().stat(t.path)).not.toBeNull();
    const result = await cleanupExpiredUploads(h.ctx);
    expect(result.removedPartials).toBeGreaterThanOrEqual(1);
    expect(await incoming().stat(t.path)).toBeNull();
    expect((await resolve(t.media_id)).status).toBe(200);
  });

  test("an uploaded media whose object disappeared is no longer handed out", async () => {
    const t = await ticket("gone.png", "image/png");
    expect((await put(t.upload.signedUrl, makePng(1, 1), "image/png")).status).toBe(200);
    expect((await resolve(t.media_id)).status).toBe(200);
    await h.ctx.storage.remove(t.path);
    const res = await resolve(t.media_id);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("media_not_uploaded");
  });

  test("cleanup removes expired empty tickets and settles expired ones whose object arrived", async () => {
    const empty = await ticket("never.png", "image/png");
    const arrived = await ticket("quiet.png", "image/png");
    expect((await put(arrived.upload.signedUrl, makePng(2, 2), "image/png")).status).toBe(200);
    h.clock.advance(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000);
    try {
      const result = await cleanupExpiredUploads(h.ctx);
      expect(result.settled).toBeGreaterThanOrEqual(1);
      expect(result.removedTickets).toBeGreaterThanOrEqual(1);
      expect((await resolve(empty.media_id)).status).toBe(404);
      expect((await resolve(arrived.media_id)).status).toBe(200);
    } finally {
      h.clock.advance(-(h.ctx.config.uploadTicketTtlSeconds * 1000 + 1000));
    }
  });

  test("with S3_PUBLIC_URL the public URL is that base plus the path, and is recognised as ours", async () => {
    const storage = createS3Storage({ ...s3.config, publicUrl: `${s3.endpoint}/${s3.bucket}` }, h.clock);
    const key = "med_AAAAAAAAAAAAAAAAAAAAAA.png";
    await storage.client.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: makePng(1, 1), ContentType: "image/png" }),
    );
    const url = await storage.publicUrl(key);
    expect(url).toBe(`${s3.endpoint}/${s3.bucket}/${key}`);
    expect(await storage.keyForPublicUrl(url)).toBe(key);
    expect((await storage.openByPublicUrl(url))?.size).toBe(makePng(1, 1).length);
  });
});

/** An independent SigV4 check of a presigned URL: recomputes the signature for the given method and headers. */
function sigV4Matches(url: URL, method: string, headers: Record<string, string>, secret: string) {
  const q = url.searchParams;
  const signedHeaders = q.get("X-Amz-SignedHeaders")!.split(";");
  const canonicalQuery = [...q.entries()]
    .filter(([k]) => k !== "X-Amz-Signature")
    .map(([k, v]) => [encodeURIComponent(k), encodeURIComponent(v)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const all: Record<string, string> = { host: url.host, ...headers };
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${all[name]}\n`).join("");
  const canonical = [
    method,
    url.pathname,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders.join(";"),
    "UNSIGNED-PAYLOAD",
  ].join("\n");
  const date = q.get("X-Amz-Date")!;
  const scope = q.get("X-Amz-Credential")!.split("/").slice(1).join("/");
  const toSign = ["AWS4-HMAC-SHA256", date, scope, createHash("sha256").update(canonical).digest("hex")].join("\n");
  const [day, region, service] = scope.split("/");
  let key: Buffer = createHmac("sha256", `AWS4${secret}`).update(day).digest();
  for (const part of [region, service, "aws4_request"]) key = createHmac("sha256", key).update(part).digest();
  return createHmac("sha256", key).update(toSign).digest("hex") === q.get("X-Amz-Signature");
}

describe("the presigned PUT URL", () => {
  test("is a PUT bound to the content type, expiring with the ticket, with no checksum of an empty body", async () => {
    const clock = new TestClock(new Date("2026-03-01T10:00:00.000Z"));
    const storage: S3Storage = createS3Storage(
      { ...s3.config, endpoint: "https://objects.example.test", bucket: "media", forcePathStyle: true },
      clock,
    );
    const key = "med_BBBBBBBBBBBBBBBBBBBBBA.mp4";
    const { signedUrl } = await storage.signUpload({
      mediaId: "med_BBBBBBBBBBBBBBBBBBBBBA",
      key,
      contentType: "video/mp4",
      maxBytes: 1000,
      expiresAt: new Date(clock.now().getTime() + 2 * 3600_000),
    });
    const url = new URL(signedUrl);
    expect(url.origin + url.pathname).toBe(`https://objects.example.test/media/incoming/${key}`);
    const q = url.searchParams;
    expect(q.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(q.get("X-Amz-Date")).toBe("20260301T100000Z");
    expect(q.get("X-Amz-Expires")).toBe("7200");
    expect(q.get("X-Amz-SignedHeaders")!.split(";")).toContain("content-type");
    expect(q.get("X-Amz-Credential")).toBe("S3RVER/20260301/us-east-1/s3/aws4_request");
    // No checksum parameters: a CRC of an empty body would make real stores reject the actual upload.
    for (const name of q.keys()) expect(name.toLowerCase()).not.toContain("checksum");
    expect(q.get("x-id")).toBe("PutObject");

    expect(sigV4Matches(url, "PUT", { "content-type": "video/mp4" }, "S3RVER")).toBe(true);
    expect(sigV4Matches(url, "PUT", { "content-type": "image/png" }, "S3RVER")).toBe(false);
    expect(sigV4Matches(url, "GET", { "content-type": "video/mp4" }, "S3RVER")).toBe(false);
  });
});
