/**
 * Media are read when they arrive: GET /v1/media/{id} shows what sharp and ffprobe found, on both storage
 * drivers and through every way in (a PUT to the ticket, from a URL, base64), and a file neither can read
 * is refused with 422 unreadable_media and nothing of it is kept.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { createHarness, type Harness } from "../../support/harness.ts";
import { makeImage, makeVideo } from "../../support/media-files.ts";
import { fakeImage, fakeMp4, makeJpeg } from "../../support/media-fixtures.ts";
import { startS3 } from "../../support/s3.ts";
import type { Config } from "../../../src/config.ts";
import type { FsStorage } from "../../../src/storage/fs.ts";
import { createS3Storage } from "../../../src/storage/s3.ts";

interface Driver {
  name: "fs" | "s3";
  h: Harness;
  base: string;
  token: string;
  /** Every key that holds bytes, wherever the driver keeps them (served files, partials, upload area). */
  storedKeys(): Promise<string[]>;
  stop(): Promise<void>;
}

/** A harness served over real HTTP on 127.0.0.1 with the given storage driver. */
async function startDriver(name: "fs" | "s3", overrides: Partial<Config> = {}): Promise<Driver> {
  const s3 = name === "s3" ? await startS3() : null;
  const h = await createHarness({ ...(s3 && { s3: s3.config }), ...overrides });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h.app.handle(r) });
  const base = `http://127.0.0.1:${server.port}`;
  h.ctx.config.publicUrl = base;
  // The from-URL test's file server is on loopback.
  h.ctx.mediaFetchAllow = (ip) => ip === "127.0.0.1";
  const { token } = await h.profile();
  // A second client on the same bucket, to list every object the app left there.
  const client = s3 ? createS3Storage(s3.config, h.clock).client : null;
  return {
    name,
    h,
    base,
    token,
    async storedKeys() {
      // Files Crier makes from an upload (`~`: an earlier video's poster frame, made in the background,
      // may land at any moment) are not uploads: only what clients sent is compared.
      const uploads = (keys: string[]) => keys.filter((k) => !k.includes("~"));
      if (client && s3) {
        const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
        return uploads((listed.Contents ?? []).map((o) => o.Key!));
      }
      const root = (h.ctx.storage as FsStorage).root;
      const partial = join(root, ".partial");
      return uploads([
        ...readdirSync(root).filter((f) => !f.startsWith(".")),
        ...(existsSync(partial) ? readdirSync(partial) : []),
      ]);
    },
    async stop() {
      server.stop(true);
      await h.close();
      await s3?.stop();
    },
  };
}

async function api(d: Driver, method: string, path: string, body?: unknown) {
  const res = await fetch(d.base + path, {
    method,
    headers: {
      authorization: `Bearer ${d.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Ticket, PUT, then GET /v1/media/{id}: what a client sees of its upload. */
async function upload(d: Driver, filename: string, contentType: string, bytes: Uint8Array<ArrayBuffer>) {
  const ticket = await api(d, "POST", "/v1/media/uploads", { filename, content_type: contentType });
  expect(ticket.status).toBe(201);
  const { media_id, upload: grant } = ticket.body.data;
  const put = await fetch(grant.signedUrl, { method: "PUT", body: bytes, headers: { "content-type": contentType } });
  const putBody = put.headers.get("content-type")?.includes("json") ? ((await put.json()) as any) : null;
  return {
    id: media_id as string,
    put: { status: put.status, body: putBody },
    got: await api(d, "GET", `/v1/media/${media_id}`),
  };
}

for (const name of ["fs", "s3"] as const) {
  describe(`facts read on arrival (${name} driver)`, () => {
    let d: Driver;
    let files: ReturnType<typeof Bun.serve>;
    const served = new Map<string, { type: string; bytes: Uint8Array<ArrayBuffer> }>();

    beforeAll(async () => {
      d = await startDriver(name);
      files = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: (req) => {
          const file = served.get(new URL(req.url).pathname);
          return file
            ? new Response(file.bytes, { headers: { "content-type": file.type } })
            : new Response("no", { status: 404 });
        },
      });
    });
    afterAll(async () => {
      files.stop(true);
      await d.stop();
    });

    test("a phone photo turned by EXIF orientation 6 shows its size as displayed", async () => {
      // Stored 4000 wide and 3000 high; orientation 6 turns it a quarter: a 3000×4000 portrait.
      const jpeg = await makeImage({ width: 4000, height: 3000, orientation: 6 });
      const { put, got } = await upload(d, "portrait.jpg", "image/jpeg", jpeg);
      expect(put.status).toBe(200);
      expect(got.status).toBe(200);
      expect(got.body.data).toMatchObject({
        size: jpeg.length,
        width: 3000,
        height: 4000,
        duration: null,
        facts: {
          kind: "image",
          format: "jpeg",
          width: 3000,
          height: 4000,
          orientation: 6,
          animated: false,
          has_location: false,
        },
      });
    });

    test("a PNG is a png; a photo with GPS EXIF says it has a location", async () => {
      const png = await upload(d, "shot.png", "image/png", await makeImage({ width: 320, height: 200, format: "png" }));
      expect(png.got.status).toBe(200);
      expect(png.got.body.data).toMatchObject({ width: 320, height: 200, facts: { format: "png", width: 320 } });

      const gps = await upload(d, "gps.jpg", "image/jpeg", await makeImage({ width: 64, height: 48, gps: true }));
      expect(gps.got.status).toBe(200);
      expect(gps.got.body.data.facts).toMatchObject({ kind: "image", format: "jpeg", has_location: true });
    });

    test("a 2 s MOV shows its container, codecs, duration and frame rate", async () => {
      const mov = makeVideo({ container: "mov", seconds: 2, width: 320, height: 240, fps: 25 });
      const { got } = await upload(d, "clip.mov", "video/quicktime", mov);
      expect(got.status).toBe(200);
      const facts = got.body.data.facts;
      expect(facts).toMatchObject({
        kind: "video",
        container: "mov,mp4,m4a,3gp,3g2,mj2",
        video_codec: "h264",
        audio_codec: "aac",
        width: 320,
        height: 240,
        rotation: 0,
        frame_rate: 25,
        has_location: false,
      });
      expect(facts.duration).toBeCloseTo(2, 1);
      expect(got.body.data).toMatchObject({ width: 320, height: 240, duration: facts.duration });
    });

    test("a corrupt file is refused with 422 unreadable_media and nothing of it is kept", async () => {
      const before = await d.storedKeys();
      // JPEG and MP4 magic bytes (so the type check passes) and nothing readable after them.
      for (const [filename, type, bytes] of [
        ["broken.jpg", "image/jpeg", fakeImage(3000)],
        ["broken.mp4", "video/mp4", fakeMp4(5000)],
      ] as const) {
        const { id, put, got } = await upload(d, filename, type, bytes);
        // fs refuses at the PUT; with S3 the bytes went to the store and are refused when settled.
        if (name === "fs") {
          expect(put.status).toBe(422);
          expect(put.body.error.code).toBe("unreadable_media");
        }
        expect(got.status).toBe(422);
        expect(got.body.error).toMatchObject({ code: "unreadable_media" });
        expect(got.body.error.message).toContain(type);
        expect(got.body.error.hint).toContain("upload it again");
        // Asking again gives the same answer: the media stays unusable.
        const again = await api(d, "GET", `/v1/media/${id}`);
        expect(again.status).toBe(422);
        expect(again.body.error.code).toBe("unreadable_media");
      }
      expect(await d.storedKeys()).toEqual(before);
    });

    test("upload from a URL and base64 refuse an unreadable file at the request and read a good one", async () => {
      served.set("/broken.jpg", { type: "image/jpeg", bytes: makeJpeg(8, 8, 0).slice(0, 60) });
      served.set("/good.png", { type: "image/png", bytes: await makeImage({ width: 30, height: 20, format: "png" }) });
      const before = await d.storedKeys();
      const url = `http://127.0.0.1:${files.port}`;

      const bad = await api(d, "POST", "/v1/media/from-url", { url: `${url}/broken.jpg` });
      expect(bad.status).toBe(422);
      expect(bad.body.error.code).toBe("unreadable_media");
      const inline = await api(d, "POST", "/v1/media/base64", {
        filename: "broken.jpg",
        content_type: "image/jpeg",
        data: Buffer.from(fakeImage(500)).toString("base64"),
      });
      expect(inline.status).toBe(422);
      expect(inline.body.error.code).toBe("unreadable_media");
      expect(await d.storedKeys()).toEqual(before);

      const good = await api(d, "POST", "/v1/media/from-url", { url: `${url}/good.png` });
      expect(good.status).toBe(201);
      expect(good.body.data).toMatchObject({ width: 30, height: 20, facts: { kind: "image", format: "png" } });
    });
  });
}

describe("a server without ffprobe", () => {
  let d: Driver;
  beforeAll(async () => {
    d = await startDriver("fs", { ffprobePath: "/nonexistent/ffprobe" });
  });
  afterAll(() => d.stop());

  test("keeps videos with their facts unknown, even a file it could not have read, and still reads images", async () => {
    const mov = await upload(d, "clip.mov", "video/quicktime", makeVideo({ container: "mov", seconds: 2 }));
    expect(mov.put.status).toBe(200);
    expect(mov.got.status).toBe(200);
    expect(mov.got.body.data).toMatchObject({ width: null, height: null, duration: null, facts: null });
    // Nothing pretends: without the tool a video is neither read nor refused.
    const opaque = await upload(d, "opaque.mp4", "video/mp4", fakeMp4(5000));
    expect(opaque.got.status).toBe(200);
    expect(opaque.got.body.data.facts).toBeNull();

    const png = await upload(d, "a.png", "image/png", await makeImage({ width: 12, height: 8, format: "png" }));
    expect(png.got.body.data).toMatchObject({ width: 12, height: 8, facts: { format: "png" } });
  });
});
