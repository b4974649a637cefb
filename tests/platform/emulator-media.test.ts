/**
 * The emulators' own reading of media (src/platform/emulator-media.ts), against real files made by sharp
 * and ffmpeg: what each header and container says, independently of Crier's probe.
 */
import { expect, test } from "bun:test";
import { breach, inspectMedia, joinParts } from "../../src/platform/emulator-media.ts";
import { makeImage, makeVideo } from "../support/media-files.ts";

test("images: the type from the signature, the size from JPEG SOF, PNG IHDR, GIF and WebP headers", async () => {
  for (const format of ["jpeg", "png", "gif", "webp"] as const) {
    const bytes = await makeImage({ width: 640, height: 480, format });
    expect(inspectMedia(bytes)).toEqual({
      mime: `image/${format}`,
      bytes: bytes.length,
      width: 640,
      height: 480,
      duration: null,
    });
  }
});

test("MP4 and MOV: brand, duration from mvhd, size from tkhd, codec from stsd, frame rate from stts", () => {
  expect(inspectMedia(makeVideo({ width: 320, height: 240, seconds: 2, fps: 30 }))).toMatchObject({
    mime: "video/mp4",
    width: 320,
    height: 240,
    duration: 2,
    codec: "avc1",
    frameRate: 30,
  });
  expect(inspectMedia(makeVideo({ width: 640, height: 360, seconds: 3, container: "mov" }))).toMatchObject({
    mime: "video/quicktime",
    width: 640,
    height: 360,
    duration: 3,
    frameRate: 25,
  });
  expect(inspectMedia(makeVideo({ width: 320, height: 240, codec: "hevc" })).codec).toBe("hvc1");
});

test("WebM: the EBML DocType, the duration from Segment Info, the size and codec from Tracks", () => {
  const seen = inspectMedia(makeVideo({ width: 320, height: 240, seconds: 2, container: "webm" }));
  expect(seen).toMatchObject({ mime: "video/webm", width: 320, height: 240, codec: "V_VP9" });
  expect(seen.duration).toBeCloseTo(2, 1);
});

test("bytes that are no media have no type; a file cut short keeps what its first bytes say", () => {
  expect(inspectMedia(new Uint8Array(100)).mime).toBeNull();
  const video = makeVideo({ width: 320, height: 240, seconds: 1 });
  const parts = new Map<number, Uint8Array | null>([
    [0, video.subarray(0, 64)],
    [1, null],
  ]);
  expect(inspectMedia(joinParts(parts))).toMatchObject({ mime: "video/mp4", duration: null });
});

test("a rule names the first limit broken; an unknown number breaks nothing", () => {
  const seen = inspectMedia(makeVideo({ width: 640, height: 160, seconds: 1 }));
  expect(breach(seen, { minDuration: 3 })).toEqual({ rule: "minDuration", message: "the video is 1 s, under 3 s" });
  expect(breach(seen, { maxAspect: 3 })?.message).toBe("the aspect ratio 4:1 is wider than 3:1");
  expect(breach(seen, { types: ["video/mp4"], maxAspect: 4, minDuration: 0.5 })).toBeNull();
  expect(breach({ ...seen, duration: null }, { minDuration: 3 })).toBeNull();
});
