/**
 * Everything a post is checked against before it is accepted: what a platform cannot take is a 400
 * naming the target now, never a failure at publish time (docs/architecture.md, "How a request flows").
 * The posts module checks requests with it and the engine checks what a workflow is about to queue.
 */
import { Value } from "@sinclair/typebox/value";
import { countText, UNIT_NAMES, utf8Length } from "../text.ts";
import { BadRequest } from "../../http/errors.ts";
import { optionsComponentName } from "../../http/openapi-platforms.ts";
import type { MediaInput } from "../media-item.ts";
import type { MediaItem, Plugin } from "../sdk.ts";

const VIDEO_EXT = new Set(["mp4", "mov", "webm", "m4v", "avi", "mkv"]);
const MIME_BY_EXT: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  mp4: "video/mp4",
  m4v: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
};

const extensionOf = (url: string) => {
  const last = new URL(url).pathname.split("/").pop() ?? "";
  const dot = last.lastIndexOf(".");
  return dot > 0 ? last.slice(dot + 1).toLowerCase() : "";
};

/** Trims and checks every media URL; one bad URL rejects the whole request (spec: invalid_media). */
export function normalizeMedia(media: MediaInput[] | undefined): MediaItem[] {
  return (media ?? []).map((m, i) => {
    const url = m.url.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      /* reported below */
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.hostname) {
      throw new BadRequest(
        "invalid_media",
        `media[${i}].url is not an absolute http or https URL: "${m.url.slice(0, 200)}".`,
        "Upload the file (POST /v1/media/uploads) and pass its public_url, or give an absolute http(s) URL.",
      );
    }
    if (m.thumbnail_url !== undefined) {
      let ok = false;
      try {
        ok = ["http:", "https:"].includes(new URL(m.thumbnail_url.trim()).protocol);
      } catch {
        /* not a URL */
      }
      if (!ok)
        throw new BadRequest(
          "invalid_media",
          `media[${i}].thumbnail_url is not an absolute http or https URL.`,
          "Give the cover image as an absolute http(s) URL.",
        );
    }
    const ext = extensionOf(url);
    const item: MediaItem = { ...m, url, type: m.type ?? (VIDEO_EXT.has(ext) ? "video" : "image") };
    if (m.thumbnail_url !== undefined) item.thumbnail_url = m.thumbnail_url.trim();
    return item;
  });
}

/** The type a file's extension says it has (contents are not fetched during validation). */
const mimeOf = (m: MediaItem): string | undefined => m.mime_type ?? MIME_BY_EXT[extensionOf(m.url)];

const HASHTAG = /(?:^|[^\p{L}\p{N}_&#])#[\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*/gu;
export const countHashtags = (text: string) => (text.match(HASHTAG) ?? []).length;
const MENTION = /(?:^|\s)@[\w.]+/g;
const countMentions = (text: string) => (text.match(MENTION) ?? []).length;

export interface TargetCheck {
  /** "targets[2] (account 1f…, bluesky)": how errors name the target. */
  label: string;
  accountId: string;
  plugin: Plugin;
  content: string;
  media: MediaItem[];
  options: Record<string, unknown>;
}

function fail(t: TargetCheck, code: string, problem: string, hint: string): never {
  throw new BadRequest(code, `${t.label}: ${problem}`, hint);
}

/** Throws the first rule the target breaks; returns nothing when the platform can take it. */
export function checkTarget(t: TargetCheck): void {
  const { plugin, media, content } = t;
  const req = plugin.mediaRequirements;
  const caps = plugin.capabilities;
  const images = media.filter((m) => m.type === "image");
  const videos = media.filter((m) => m.type === "video");
  const gifs = images.filter((m) => mimeOf(m) === "image/gif");

  const check = Value.Errors(plugin.optionsSchema, t.options).First();
  if (check) {
    const field = check.path ? `platform_options${check.path.replace(/\//g, ".")}` : "platform_options";
    fail(
      t,
      "invalid_platform_options",
      `${field} ${check.message.replace(/^Expected/, "should be").replace(/^Unexpected property$/, "is not accepted by " + plugin.displayName)}.`,
      `See components.schemas.${optionsComponentName(plugin.platform)} in /openapi.json for the platform_options ${plugin.displayName} accepts.`,
    );
  }

  const limit = plugin.textLimit;
  const length = countText(content, limit.unit);
  // With media attached the text becomes a caption, which some platforms cap lower (Telegram: 1024).
  const max = media.length && limit.withMediaMax !== undefined ? Math.min(limit.max, limit.withMediaMax) : limit.max;
  if (length > max) {
    fail(
      t,
      "content_too_long",
      `the text is ${length} ${UNIT_NAMES[limit.unit]} long; ${plugin.displayName} takes at most ${max}${max < limit.max ? " with media" : ""}.`,
      "Shorten the content, or give this target a shorter content_override.",
    );
  }
  if (limit.maxBytes !== undefined && utf8Length(content) > limit.maxBytes) {
    fail(
      t,
      "content_too_long",
      `the text is ${utf8Length(content)} bytes in UTF-8; ${plugin.displayName} takes at most ${limit.maxBytes}.`,
      "Shorten the content, or give this target a shorter content_override.",
    );
  }
  if (content.trim() === "" && media.length === 0) {
    fail(
      t,
      "empty_post",
      "the post has neither text nor media.",
      "Give content or media (or a content_override for this target).",
    );
  }

  if (req.required_media) {
    const accepted = media.filter((m) => req.required_media!.acceptedTypes.includes(m.type));
    if (accepted.length < req.required_media.minFiles)
      fail(
        t,
        req.required_media.errorCode,
        req.required_media.errorMessage,
        `Attach at least ${req.required_media.minFiles} ${req.required_media.acceptedTypes.join(" or ")} file(s) for ${plugin.displayName}.`,
      );
  }
  if (!caps.text && media.length === 0)
    fail(
      t,
      "media_required",
      `${plugin.displayName} cannot publish text without media.`,
      "Attach an image or a video, or remove this target.",
    );
  if (images.length && !caps.images)
    fail(
      t,
      "media_type_not_supported",
      `${plugin.displayName} does not take images.`,
      "Remove the images or this target.",
    );
  if (videos.length && !caps.video)
    fail(
      t,
      "media_type_not_supported",
      `${plugin.displayName} does not take videos.`,
      "Remove the video or this target.",
    );

  const fc = req.file_constraints;
  if (media.length > fc.maxFiles)
    fail(
      t,
      "too_many_media",
      `${media.length} media files; ${plugin.displayName} takes at most ${fc.maxFiles}.`,
      "Attach fewer files.",
    );
  if (images.length > fc.maxImageFiles)
    fail(
      t,
      "too_many_media",
      `${images.length} images; ${plugin.displayName} takes at most ${fc.maxImageFiles}.`,
      "Attach fewer images.",
    );
  if (videos.length > fc.maxVideoFiles)
    fail(
      t,
      "too_many_media",
      `${videos.length} videos; ${plugin.displayName} takes at most ${fc.maxVideoFiles}.`,
      "Attach fewer videos.",
    );
  if (fc.maxGifFiles !== undefined && gifs.length > fc.maxGifFiles)
    fail(
      t,
      "too_many_media",
      `${gifs.length} GIFs; ${plugin.displayName} takes at most ${fc.maxGifFiles}.`,
      "Attach fewer GIFs.",
    );
  if (!fc.allowMixedMedia && images.length && videos.length)
    fail(
      t,
      "mixed_media_not_allowed",
      `${plugin.displayName} cannot mix images and videos in one post.`,
      "Send images and videos as separate posts.",
    );

  const formats = new Set(
    [...req.supported_formats, ...Object.keys(req.convertible_formats)].map((f) => f.toLowerCase()),
  );
  media.forEach((m, i) => {
    const ext = extensionOf(m.url);
    const mime = mimeOf(m);
    // Without a recognisable extension the format is unknown until the file is fetched; the plugin decides then.
    if (formats.size && mime && !formats.has(mime) && !formats.has(ext)) {
      fail(
        t,
        "unsupported_media_format",
        `media[${i}] is ${mime}; ${plugin.displayName} takes ${[...formats].join(", ")}.`,
        "Convert the file to a supported format.",
      );
    }
    const max =
      m.type === "video"
        ? req.max_size_bytes.video
        : mime === "image/gif"
          ? req.max_size_bytes.gif
          : req.max_size_bytes.image;
    if (m.size !== undefined && max > 0 && m.size > max)
      fail(
        t,
        "media_too_large",
        `media[${i}] is ${m.size} bytes; ${plugin.displayName} takes at most ${max}.`,
        "Compress the file or send a smaller one.",
      );
    if (m.type === "video" && m.duration !== undefined) {
      if (req.min_video_duration_seconds != null && m.duration < req.min_video_duration_seconds)
        fail(
          t,
          "video_too_short",
          `media[${i}] lasts ${m.duration} s; ${plugin.displayName} needs at least ${req.min_video_duration_seconds} s.`,
          "Send a longer video.",
        );
      if (req.max_video_duration_seconds != null && m.duration > req.max_video_duration_seconds)
        fail(
          t,
          "video_too_long",
          `media[${i}] lasts ${m.duration} s; ${plugin.displayName} takes at most ${req.max_video_duration_seconds} s.`,
          "Trim the video.",
        );
    }
  });

  if (req.max_hashtags != null) {
    const tags = countHashtags(content);
    if (tags > req.max_hashtags)
      fail(
        t,
        "too_many_hashtags",
        `${tags} hashtags; ${plugin.displayName} takes at most ${req.max_hashtags}.`,
        "Remove some hashtags.",
      );
  }
  // Declared among the file constraints, as the accounts API shows them (Instagram: 20).
  if (typeof fc.maxMentions === "number") {
    const mentions = countMentions(content);
    if (mentions > fc.maxMentions)
      fail(
        t,
        "too_many_mentions",
        `${mentions} @mentions; ${plugin.displayName} takes at most ${fc.maxMentions}.`,
        "Remove some @mentions.",
      );
  }
}
