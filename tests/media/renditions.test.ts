/**
 * Converted copies on both storage drivers: made once per media and output however many publishes ask
 * at once, stored beside the original under a derived key, served from there; a file that cannot be
 * converted is recorded as failed and stays failed; removing a media's renditions removes their files.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { PLUGINS } from "../../plugins/index.ts";
import { prepareJobMedia } from "../../src/media/prepare.ts";
import { removeRenditionFiles } from "../../src/media/renditions.ts";
import { sharp } from "../../src/media/tools.ts";
import { exifHasGps } from "../../src/media/probe.ts";
import { createHarness, type Harness } from "../support/harness.ts";
import { startS3 } from "../support/s3.ts";
import { makeImage } from "../support/media-files.ts";

for (const driver of ["fs", "s3"] as const) {
  describe(`renditions on ${driver} storage`, () => {
    let h: Harness;
    let token: string;
    let profileId: string;
    let s3: Awaited<ReturnType<typeof startS3>> | undefined;

    beforeAll(async () => {
      if (driver === "s3") s3 = await startS3();
      h = await createHarness(s3 ? { s3: s3.config } : {});
      ({ token, profileId } = await h.profile());
    });
    afterAll(async () => {
      await h.close();
      await s3?.stop();
    });

    async function upload(filename: string, contentType: string, bytes: Uint8Array<ArrayBuffer>) {
      const t = await h.request("POST", "/v1/media/uploads", { token, body: { filename, content_type: contentType } });
      expect(t.status).toBe(201);
      const signed = t.body.data.upload.signedUrl as string;
      const put =
        driver === "s3"
          ? await fetch(signed, { method: "PUT", headers: { "content-type": contentType }, body: bytes })
          : await h.app.handle(
              new Request(`http://localhost${new URL(signed).pathname}${new URL(signed).search}`, {
                method: "PUT",
                headers: { "content-type": contentType },
                body: bytes,
              }),
            );
      expect(put.status).toBeLessThan(300);
      const got = await h.request("GET", `/v1/media/${t.body.data.media_id}`, { token });
      expect(got.status).toBe(200);
      return {
        id: t.body.data.media_id as string,
        path: got.body.data.path as string,
        url: got.body.data.public_url as string,
      };
    }

    const renditionRows = (path: string) =>
      h.db.rows<{ variant: string; status: string; path: string | null; error: string | null }>(
        sql`SELECT r.variant, r.status, r.path, r.error FROM media_renditions r JOIN media m ON m.id = r.media_id WHERE m.path = ${path}`,
      );

    test("five publishes at once of one PNG to Instagram: one conversion, one stored JPEG, all five get it", async () => {
      const png = await upload(
        "photo.png",
        "image/png",
        await makeImage({ width: 2000, height: 1500, format: "png", gps: true }),
      );
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          prepareJobMedia(h.ctx, profileId, PLUGINS.instagram, [{ url: png.url, type: "image" }]),
        ),
      );
      const urls = new Set<string>();
      for (const r of results) {
        expect(r.kind, JSON.stringify(r)).toBe("ready");
        if (r.kind !== "ready") continue;
        expect(r.media[0]).toMatchObject({ mime_type: "image/jpeg", width: 1440, height: 1080 });
        urls.add(r.media[0].url);
      }
      const rows = await renditionRows(png.path);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "ready", path: `${png.path.split(".")[0]}~${rows[0].variant}.jpg` });
      expect(await h.ctx.storage.keyForPublicUrl([...urls][0])).toBe(rows[0].path);
      const served = await fetch([...urls][0]).catch(() => null);
      const bytes =
        served && served.ok
          ? new Uint8Array(await served.arrayBuffer())
          : new Uint8Array(await new Response((await h.ctx.storage.open(rows[0].path!))!.stream()).arrayBuffer());
      const meta = await (await sharp())(bytes).metadata();
      expect(meta).toMatchObject({ format: "jpeg", width: 1440, height: 1080 });
      expect(exifHasGps(meta.exif)).toBe(false);
      // The original is left as it was uploaded.
      expect((await h.ctx.storage.stat(png.path))?.size).toBeGreaterThan(0);
      // Gone with its media: the file first, then the rows cascade.
      expect(
        await removeRenditionFiles(h.ctx, [
          (await h.db.rows<{ id: string }>(sql`SELECT id FROM media WHERE path = ${png.path}`))[0].id,
        ]),
      ).toBe(1);
      expect(await h.ctx.storage.stat(rows[0].path!)).toBeNull();
    }, 60_000);

    test("a file that cannot be converted fails once, for good, naming the file", async () => {
      const png = await makeImage({ width: 500, height: 500, format: "png", noise: true });
      const cut = await upload("cut.png", "image/png", png.slice(0, Math.floor(png.length / 3)));
      const first = await prepareJobMedia(h.ctx, profileId, PLUGINS.instagram, [{ url: cut.url, type: "image" }]);
      expect(first).toMatchObject({ kind: "failed", code: "media_conversion_failed" });
      expect((first as { reason: string }).reason).toContain("cut.png");
      const rows = await renditionRows(cut.path);
      expect(rows).toMatchObject([{ status: "failed", path: null }]);
      expect(rows[0].error).toContain("cut.png");
      // Asked again (a retry, another platform with the same output): the recorded failure, no new attempt.
      const again = await prepareJobMedia(h.ctx, profileId, PLUGINS.instagram, [{ url: cut.url, type: "image" }]);
      expect(again).toEqual(first);
    }, 60_000);

    test("media on other hosts and files that need nothing pass through untouched, with the probe's numbers on own ones", async () => {
      const jpeg = await upload("plain.jpg", "image/jpeg", await makeImage({ width: 640, height: 480 }));
      const r = await prepareJobMedia(h.ctx, profileId, PLUGINS.bluesky, [
        { url: jpeg.url, type: "image" },
        { url: "https://example.com/a.jpg", type: "image", width: 5 },
      ]);
      expect(r).toEqual({
        kind: "ready",
        media: [
          { url: jpeg.url, type: "image", mime_type: "image/jpeg", size: expect.any(Number), width: 640, height: 480 },
          { url: "https://example.com/a.jpg", type: "image", width: 5 },
        ],
      });
      expect(await renditionRows(jpeg.path)).toEqual([]);
    });
  });
}
