import { expect, test } from "bun:test";
import { PLUGINS } from "../../plugins/index.ts";
import { fitTarget } from "../../src/platform/host/fit.ts";
import { graphemeCount } from "../../src/platform/text.ts";
import type { MediaItem } from "../../src/platform/sdk.ts";

const plugin = (id: string) => PLUGINS[id];
const img = (i: number): MediaItem => ({ url: `https://cdn.example.com/${i}.jpg`, type: "image" });
const vid = (i: number): MediaItem => ({ url: `https://cdn.example.com/${i}.mp4`, type: "video" });

test("text is cut in the platform's unit without splitting an emoji, and ends with an ellipsis", () => {
  const content = "👩‍👩‍👧‍👦".repeat(400);
  const fitted = fitTarget({ plugin: plugin("bluesky"), content, media: [] });
  expect(graphemeCount(fitted.content)).toBeLessThanOrEqual(300);
  expect(fitted.content.endsWith("👩‍👩‍👧‍👦…")).toBe(true);
});

test("one long word is cut hard rather than dropped whole", () => {
  const fitted = fitTarget({ plugin: plugin("bluesky"), content: "a".repeat(500), media: [] });
  expect(fitted.content).toBe("a".repeat(299) + "…");
});

test("a post that fits is left alone, with no adjustment", () => {
  const fitted = fitTarget({ plugin: plugin("bluesky"), content: "short", media: [img(0)] });
  expect(fitted).toEqual({ content: "short", media: [img(0)], adjustments: [] });
});

test("where kinds cannot mix, the first media's kind is kept and the others dropped, each named", () => {
  const fitted = fitTarget({ plugin: plugin("bluesky"), content: "x", media: [vid(0), img(1), img(2)] });
  expect(fitted.media).toEqual([vid(0)]);
  expect(fitted.adjustments.map((a) => a.message)).toEqual([
    expect.stringMatching(/^media\[1\] dropped: Bluesky cannot mix/),
    expect.stringMatching(/^media\[2\] dropped: Bluesky cannot mix/),
  ]);
});

test("hashtags past the cap are removed from the end, the others kept in place", () => {
  const fitted = fitTarget({ plugin: plugin("threads"), content: "launch #one today #two #three", media: [] });
  expect(fitted.content).toBe("launch #one today");
  expect(fitted.adjustments[0].code).toBe("hashtags_removed");
});
