/**
 * The rules of a platform about what a file is, checked per media item when a post is created: video
 * duration, aspect ratio, dimensions and frame rate, as the plugin declares them (media_requirements).
 * Conversions never change a file's aspect ratio or duration, so breaking these is a refusal even for
 * Crier's own media. The numbers come from what Crier read of the file when it is its own upload, else
 * from the client's MediaInput; a rule whose number is unknown is skipped (the platform decides then).
 */
import type { MediaFacts } from "../../domain/media-facts.ts";
import type { DeclaredMediaRequirements, MediaItem, Plugin } from "../sdk.ts";
import type { Problem } from "./content-check.ts";

/** What Crier knows of one of its own files; null in the list for media that are not Crier's. */
export interface OwnFileFacts {
  facts: MediaFacts | null;
  size: number;
  contentType: string;
}

/** The numbers one media item is checked with. */
interface Measured {
  kind: "image" | "video";
  width?: number;
  height?: number;
  duration?: number;
  frameRate?: number;
}

const known = (n: number | null | undefined): number | undefined => (n == null ? undefined : n);

/** The numbers Crier knows of one media item: its own upload's facts, else what the client said. */
export function measure(m: MediaItem, own: OwnFileFacts | null | undefined): Measured {
  const f = own?.facts;
  if (!f) return { kind: m.type, width: m.width, height: m.height, duration: m.duration };
  if (f.kind === "image") return { kind: "image", width: f.width, height: f.height };
  return {
    kind: "video",
    width: known(f.width),
    height: known(f.height),
    duration: known(f.duration),
    frameRate: known(f.frame_rate),
  };
}

/** "4:5" → 0.8; declarations are checked by their schema, so the form is known. */
const ratioOf = (r: string) => {
  const [w, h] = r.split(":").map(Number);
  return w / h;
};

// Two ratios this close are the same ratio written with rounded numbers (1080×566 is "1.91:1").
const RATIO_SLACK = 0.005;

/** Seconds and frame rates as people write them: 2.4, 3, 29.97. */
const num = (n: number) => String(Number(n.toFixed(2)));

/** How an error names a file: media[i] and its file name (own media) or URL. */
function fileName(m: MediaItem, i: number, own: boolean): string {
  let shown = m.url;
  if (own) {
    try {
      shown = new URL(m.url).pathname.split("/").pop() || m.url;
    } catch {
      /* keep the URL */
    }
  }
  return `media[${i}] (${shown.length > 120 ? shown.slice(0, 117) + "…" : shown})`;
}

/** Every file rule of the platform (or of the target's placement, `requirements`) that the target's media break. */
export function mediaRuleProblems(t: {
  plugin: Plugin;
  media: MediaItem[];
  mediaFacts?: (OwnFileFacts | null)[];
  requirements?: DeclaredMediaRequirements;
}): Problem[] {
  const { plugin } = t;
  const req = t.requirements ?? plugin.mediaRequirements;
  const fc = req.file_constraints;
  const name = plugin.displayName;
  const problems: Problem[] = [];

  t.media.forEach((m, i) => {
    const own = t.mediaFacts?.[i] ?? null;
    const x = measure(m, own);
    const file = fileName(m, i, own !== null);
    const fail = (code: string, message: string, hint: string) =>
      problems.push({ code, message: `${file} ${message}`, hint, field: `media[${i}]` });
    const video = x.kind === "video";

    if (video && x.duration !== undefined) {
      const min = req.min_video_duration_seconds;
      const max = req.max_video_duration_seconds;
      if (min != null && x.duration < min)
        fail(
          "video_too_short",
          `lasts ${num(x.duration)} s; ${name} needs at least ${num(min)} s.`,
          "Send a longer video.",
        );
      if (max != null && x.duration > max)
        fail("video_too_long", `lasts ${num(x.duration)} s; ${name} takes at most ${num(max)} s.`, "Trim the video.");
    }

    const range = video ? req.aspect_ratio?.video : req.aspect_ratio?.image;
    if (range && x.width && x.height) {
      const ratio = x.width / x.height;
      const low = range.min !== undefined && ratio < ratioOf(range.min) * (1 - RATIO_SLACK);
      const high = range.max !== undefined && ratio > ratioOf(range.max) * (1 + RATIO_SLACK);
      if (low || high) {
        const bounds =
          range.min && range.max
            ? `from ${range.min} to ${range.max}`
            : range.min
              ? `from ${range.min}`
              : `up to ${range.max}`;
        fail(
          "invalid_aspect_ratio",
          `is ${x.width}×${x.height} (${num(ratio)}:1, ${low ? "too tall" : "too wide"}); ${name} takes ${video ? "videos" : "images"} ${bounds} (width:height).`,
          "Crop the file to an aspect ratio the platform takes, or remove this target.",
        );
      }
    }

    const minW = video ? fc.minVideoWidth : fc.minImageWidth;
    const minH = video ? fc.minVideoHeight : fc.minImageHeight;
    const what = video ? "videos" : "images";
    if (minW !== undefined && x.width !== undefined && x.width < minW)
      fail(
        "media_too_small",
        `is ${x.width} pixels wide; ${name} needs ${what} at least ${minW} wide.`,
        "Send a larger file.",
      );
    if (minH !== undefined && x.height !== undefined && x.height < minH)
      fail(
        "media_too_small",
        `is ${x.height} pixels high; ${name} needs ${what} at least ${minH} high.`,
        "Send a larger file.",
      );
    if (!video) return;

    if (fc.maxVideoWidth !== undefined && x.width !== undefined && x.width > fc.maxVideoWidth)
      fail(
        "video_dimensions_too_large",
        `is ${x.width} pixels wide; ${name} takes videos at most ${fc.maxVideoWidth} wide.`,
        "Export the video at a lower resolution.",
      );
    if (fc.maxVideoHeight !== undefined && x.height !== undefined && x.height > fc.maxVideoHeight)
      fail(
        "video_dimensions_too_large",
        `is ${x.height} pixels high; ${name} takes videos at most ${fc.maxVideoHeight} high.`,
        "Export the video at a lower resolution.",
      );

    const { minFrameRate: lo, maxFrameRate: hi } = fc;
    if (x.frameRate !== undefined && ((lo !== undefined && x.frameRate < lo) || (hi !== undefined && x.frameRate > hi)))
      fail(
        "invalid_frame_rate",
        `plays at ${num(x.frameRate)} frames per second; ${name} takes ${lo !== undefined && hi !== undefined ? `${lo} to ${hi}` : lo !== undefined ? `at least ${lo}` : `at most ${hi}`} fps.`,
        "Export the video at a frame rate the platform takes.",
      );
  });
  return problems;
}
