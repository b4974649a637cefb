import { describe, expect, test } from "bun:test";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { mediaRuleProblems, type OwnFileFacts } from "../../src/platform/host/media-rules.ts";
import type { MediaItem } from "../../src/platform/sdk.ts";
import type { VideoFacts } from "../../src/domain/media-facts.ts";

// The file rules against the plugins' real declarations: where a bound lies, which numbers count, and that
// a rule whose number is unknown says nothing (the platform decides then).

const registry = createRegistry();
const plugin = (p: string) => registry.get(p)!;
const codes = (p: string, media: MediaItem[], mediaFacts?: (OwnFileFacts | null)[]) =>
  mediaRuleProblems({ plugin: plugin(p), media, mediaFacts }).map((x) => x.code);

const image = (width: number, height: number): MediaItem => ({
  url: "https://cdn.example.com/a.jpg",
  type: "image",
  width,
  height,
});
const video = (extra: Partial<MediaItem> = {}): MediaItem => ({
  url: "https://cdn.example.com/v.mp4",
  type: "video",
  ...extra,
});
const videoFacts = (extra: Partial<VideoFacts>): OwnFileFacts => ({
  facts: {
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
    ...extra,
  },
  size: 1000,
  contentType: "video/mp4",
});

describe("aspect ratio bounds", () => {
  test("Instagram's 4:5 and 1.91:1 are inside, written as the usual pixel sizes", () => {
    expect(codes("instagram", [image(1080, 1350)])).toEqual([]);
    expect(codes("instagram", [image(1080, 566)])).toEqual([]);
    expect(codes("instagram", [image(1080, 1080)])).toEqual([]);
  });

  test("just past either bound is refused", () => {
    expect(codes("instagram", [image(1080, 1440)])).toEqual(["invalid_aspect_ratio"]);
    expect(codes("instagram", [image(1080, 540)])).toEqual(["invalid_aspect_ratio"]);
  });

  test("a platform with a video range only leaves images alone", () => {
    expect(codes("twitter", [image(100, 400)])).toEqual([]);
    expect(codes("twitter", [video({ width: 100, height: 400 })])).toEqual(["invalid_aspect_ratio"]);
  });
});

describe("which numbers count", () => {
  test("without width, height or duration nothing is checked", () => {
    expect(codes("instagram", [video()])).toEqual([]);
    expect(codes("tiktok", [video({ duration: 5 })])).toEqual([]);
  });

  test("for Crier's own file the probe's numbers win over the item's", () => {
    const item = video({ width: 1080, height: 1920, duration: 30 });
    expect(codes("instagram", [item], [videoFacts({ duration: 1.5 })])).toEqual(["video_too_short"]);
    expect(codes("instagram", [item], [videoFacts({ frame_rate: 120 })])).toEqual(["invalid_frame_rate"]);
  });

  test("a client cannot state a frame rate: only the file's is checked", () => {
    expect(codes("tiktok", [video({ width: 1080, height: 1920, duration: 10 })], [null])).toEqual([]);
    expect(codes("tiktok", [video()], [videoFacts({ frame_rate: 12 })])).toEqual(["invalid_frame_rate"]);
  });

  test("TikTok's 4096 pixels per side is a bound on video", () => {
    expect(codes("tiktok", [video()], [videoFacts({ width: 4320, height: 7680 })])).toEqual([
      "video_dimensions_too_large",
      "video_dimensions_too_large",
    ]);
  });

  test("an own file without facts (uploaded before probing) falls back to the item's numbers", () => {
    const own: OwnFileFacts = { facts: null, size: 10, contentType: "video/mp4" };
    expect(codes("instagram", [video({ duration: 2 })], [own])).toEqual(["video_too_short"]);
  });
});

test("the message names the file, the number and the bound", () => {
  const [p] = mediaRuleProblems({ plugin: plugin("linkedin"), media: [video({ duration: 1.25 })] });
  expect(p).toEqual({
    code: "video_too_short",
    field: "media[0]",
    message: "media[0] (https://cdn.example.com/v.mp4) lasts 1.25 s; LinkedIn needs at least 3 s.",
    hint: "Send a longer video.",
  });
});
