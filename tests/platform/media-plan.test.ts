/**
 * What a media item needs before it leaves for a platform, decided from the platform's real declaration:
 * taken as it is, converted (own media only), or refused with the platform's numbers. And the
 * declaration as accounts show it: video conversions only where ffmpeg is found.
 */
import { describe, expect, test } from "bun:test";
import { PLUGINS } from "../../plugins/index.ts";
import { planMedia, variantKey, type OutputSpec } from "../../src/platform/host/media-plan.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { targetProblems } from "../../src/platform/host/content-check.ts";
import type { ImageFacts, VideoFacts } from "../../src/domain/media-facts.ts";

const req = (p: string) => PLUGINS[p].mediaRequirements;
const photo = (over: Partial<ImageFacts> = {}): ImageFacts => ({
  kind: "image",
  format: "jpeg",
  width: 1200,
  height: 900,
  orientation: 1,
  animated: false,
  has_location: false,
  ...over,
});
const clip = (over: Partial<VideoFacts> = {}): VideoFacts => ({
  kind: "video",
  container: "mov,mp4,m4a,3gp,3g2,mj2",
  video_codec: "h264",
  audio_codec: "aac",
  duration: 10,
  width: 1080,
  height: 1920,
  rotation: 0,
  frame_rate: 30,
  has_location: false,
  ...over,
});
const on = { ffmpeg: true, keepMetadata: false };

describe("planMedia", () => {
  test("a PNG to Instagram: converted to JPEG when it is Crier's, refused with the formats when it is a URL", () => {
    const own = planMedia(
      req("instagram"),
      { type: "image", mime: "image/png", size: 500_000, facts: photo({ format: "png" }), own: true },
      on,
    );
    expect(own).toMatchObject({ kind: "convert", output: { contentType: "image/jpeg", stripMetadata: true } });
    const url = planMedia(req("instagram"), { type: "image", mime: "image/png", facts: null, own: false }, on);
    expect(url).toMatchObject({ kind: "refuse", code: "unsupported_media_format" });
    expect((url as { message: string }).message).toContain("image/png");
  });

  test("a 3 MB photo to Bluesky is recompressed under 2,000,000 bytes; the same URL is refused with both numbers", () => {
    const own = planMedia(
      req("bluesky"),
      { type: "image", mime: "image/jpeg", size: 3_000_000, facts: photo(), own: true },
      on,
    );
    expect(own).toMatchObject({ kind: "convert", output: { contentType: "image/jpeg", maxBytes: 2_000_000 } });
    const url = planMedia(
      req("bluesky"),
      { type: "image", mime: "image/jpeg", size: 3_000_000, facts: null, own: false },
      on,
    );
    expect(url).toMatchObject({ kind: "refuse", code: "media_too_large" });
    expect((url as { message: string }).message).toContain("3000000");
    expect((url as { message: string }).message).toContain("2000000");
  });

  test("a photo wider than 1440 px to Instagram is scaled down; one that fits goes as it is", () => {
    const wide = planMedia(
      req("instagram"),
      { type: "image", mime: "image/jpeg", size: 1, facts: photo({ width: 4000, height: 3000 }), own: true },
      on,
    );
    expect(wide).toMatchObject({ kind: "convert", output: { maxWidth: 1440 } });
    expect(
      planMedia(req("instagram"), { type: "image", mime: "image/jpeg", size: 1, facts: photo(), own: true }, on),
    ).toEqual({ kind: "as_is" });
  });

  test("a MOV to LinkedIn (MP4 only) is converted with ffmpeg and refused without it", () => {
    const item = { type: "video" as const, mime: "video/quicktime", size: 1_000_000, facts: clip(), own: true };
    expect(planMedia(req("linkedin"), item, on)).toMatchObject({
      kind: "convert",
      output: { contentType: "video/mp4" },
    });
    const without = planMedia(req("linkedin"), item, { ffmpeg: false, keepMetadata: false });
    expect(without).toMatchObject({ kind: "refuse", code: "unsupported_media_format" });
    expect((without as { hint: string }).hint).toContain("ffmpeg");
    // TikTok takes MOV as it is (its media transfer guide lists MP4, WebM and MOV).
    expect(planMedia(req("tiktok"), item, on)).toEqual({ kind: "as_is" });
  });

  test("location: stripped by default, kept with KEEP_MEDIA_METADATA, never touched on other hosts' files", () => {
    const item = {
      type: "image" as const,
      mime: "image/jpeg",
      size: 100_000,
      facts: photo({ has_location: true }),
      own: true,
    };
    expect(planMedia(req("bluesky"), item, on)).toEqual({
      kind: "convert",
      output: { contentType: "image/jpeg", stripMetadata: true },
      reasons: ["location metadata"],
    });
    expect(planMedia(req("bluesky"), item, { ffmpeg: true, keepMetadata: true })).toEqual({ kind: "as_is" });
    expect(planMedia(req("bluesky"), { ...item, own: false }, on)).toEqual({ kind: "as_is" });
    // A video's tags are rewritten by ffmpeg: without it the video goes as it is.
    const video = {
      type: "video" as const,
      mime: "video/mp4",
      size: 1,
      facts: clip({ has_location: true }),
      own: true,
    };
    expect(planMedia(req("bluesky"), video, on)).toMatchObject({
      kind: "convert",
      output: { contentType: "video/mp4" },
    });
    expect(planMedia(req("bluesky"), video, { ffmpeg: false, keepMetadata: false })).toEqual({ kind: "as_is" });
  });

  test("variantKey is short, stable and tells outputs apart", () => {
    const a: OutputSpec = { contentType: "image/jpeg", maxWidth: 1440, maxBytes: 8_000_000, stripMetadata: true };
    expect(variantKey(a)).toMatch(/^[a-z0-9-]{1,48}$/);
    expect(variantKey({ ...a })).toBe(variantKey(a));
    expect(variantKey({ ...a, maxBytes: 2_000_000 })).not.toBe(variantKey(a));
    expect(variantKey({ ...a, stripMetadata: false })).not.toBe(variantKey(a));
    const huge: OutputSpec = {
      ...a,
      maxWidth: 99999,
      maxHeight: 99999,
      maxPixels: 999_999_999,
      maxBytes: 99_999_999_999,
    };
    expect(variantKey(huge)).toMatch(/^[a-z0-9-]{1,48}$/);
  });
});

describe("declarations", () => {
  test("every platform declares conversions only into a format it supports", () => {
    for (const [platform, plugin] of Object.entries(PLUGINS)) {
      const r = plugin.mediaRequirements;
      for (const [from, to] of Object.entries(r.convertible_formats)) {
        expect({ platform, from, supported: r.supported_formats.includes(from) }).toEqual({
          platform,
          from,
          supported: false,
        });
        expect({ platform, to, supported: r.supported_formats.includes(to) }).toEqual({
          platform,
          to,
          supported: true,
        });
      }
    }
  });

  test("without ffmpeg, accounts show no video conversions; image ones stay", () => {
    const without = createRegistry(undefined, undefined, { ffmpeg: false });
    const withIt = createRegistry(undefined, undefined, { ffmpeg: true });
    expect(withIt.describe("linkedin")!.media_requirements.convertible_formats).toEqual({
      "image/webp": "image/jpeg",
      "video/quicktime": "video/mp4",
      "video/webm": "video/mp4",
    });
    expect(without.describe("linkedin")!.media_requirements.convertible_formats).toEqual({
      "image/webp": "image/jpeg",
    });
    expect(without.describe("instagram")!.media_requirements.convertible_formats).toEqual({
      "image/png": "image/jpeg",
      "image/webp": "image/jpeg",
    });
  });
});

describe("the check at creation", () => {
  const check = (
    platform: string,
    media: { url: string; type: "image" | "video" }[],
    own: ({ facts: ImageFacts | VideoFacts | null; size: number; contentType: string } | null)[],
    ffmpeg = true,
  ) =>
    targetProblems({
      label: "targets[0]",
      accountId: "a",
      plugin: PLUGINS[platform],
      content: "hello",
      media,
      options: {},
      mediaFacts: own,
      ffmpeg,
    }).filter((p) => p.field.startsWith("media"));

  test("own media pass where they will be converted; the same file by URL does not", () => {
    const png = { url: "https://crier.example/media/med_x.png", type: "image" as const };
    expect(
      check("instagram", [png], [{ facts: photo({ format: "png" }), size: 400_000, contentType: "image/png" }]),
    ).toEqual([]);
    expect(check("instagram", [png], [null]).map((p) => p.code)).toEqual(["unsupported_media_format"]);
    const big = { url: "https://crier.example/media/med_x.jpg", type: "image" as const };
    expect(check("bluesky", [big], [{ facts: null, size: 3_000_000, contentType: "image/jpeg" }])).toEqual([]);
    expect(check("bluesky", [{ ...big }], [null])).toEqual([]); // the client gave no size: nothing to judge
  });

  test("a MOV to LinkedIn passes only where ffmpeg can convert it", () => {
    const mov = { url: "https://crier.example/media/med_x.mov", type: "video" as const };
    const own = [{ facts: clip(), size: 1_000_000, contentType: "video/quicktime" }];
    expect(check("linkedin", [mov], own, true)).toEqual([]);
    const refused = check("linkedin", [mov], own, false);
    expect(refused.map((p) => p.code)).toEqual(["unsupported_media_format"]);
    expect(refused[0].message).toContain("media[0] is video/quicktime");
  });
});
