/**
 * Everything a post is checked against before it is accepted: what a platform cannot take is a 400
 * naming the target now, never a failure at publish time (docs/architecture.md, "How a request flows").
 * The posts module checks requests with it and the engine checks what a workflow is about to queue.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { countText, UNIT_NAMES, utf8Length } from "../text.ts";
import { BadRequest } from "../../http/errors.ts";
import { optionsComponentName } from "../../http/openapi-platforms.ts";
import type { MediaInput } from "../media-item.ts";
import { optionsForPlugin, requirementsFor, resolveAliases } from "./options.ts";
import { altTextProblems } from "./alt-text-check.ts";
import { firstCommentProblems } from "./first-comment-check.ts";
import type { MediaItem, Plugin } from "../sdk.ts";
import { measure, mediaRuleProblems, type OwnFileFacts } from "./media-rules.ts";
import { planMedia } from "./media-plan.ts";

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
  let last = "";
  try {
    last = new URL(url).pathname.split("/").pop() ?? "";
  } catch {
    /* not a URL: no extension */
  }
  const dot = last.lastIndexOf(".");
  return dot > 0 ? last.slice(dot + 1).toLowerCase() : "";
};

/** One thing a platform (or the request itself) cannot take: what POST /v1/posts/validate lists. */
export interface Problem {
  code: string;
  message: string;
  hint: string;
  /** The request field at fault, e.g. "media[0].url", "platform_options.privacy", "content". */
  field: string;
}

/** Trims and checks every media URL; returns the items and every bad URL as a problem (spec: invalid_media). */
export function mediaProblems(media: MediaInput[] | undefined): { items: MediaItem[]; problems: Problem[] } {
  const problems: Problem[] = [];
  const items = (media ?? []).map((m, i) => {
    const url = m.url.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      /* reported below */
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:") || !parsed.hostname) {
      problems.push({
        code: "invalid_media",
        message: `media[${i}].url is not an absolute http or https URL: "${m.url.slice(0, 200)}".`,
        hint: "Upload the file (POST /v1/media/uploads) and pass its public_url, or give an absolute http(s) URL.",
        field: `media[${i}].url`,
      });
      return { ...m, url, type: m.type ?? "image" } as MediaItem;
    }
    if (m.thumbnail_url !== undefined) {
      let ok = false;
      try {
        ok = ["http:", "https:"].includes(new URL(m.thumbnail_url.trim()).protocol);
      } catch {
        /* not a URL */
      }
      if (!ok)
        problems.push({
          code: "invalid_media",
          message: `media[${i}].thumbnail_url is not an absolute http or https URL.`,
          hint: "Give the cover image as an absolute http(s) URL.",
          field: `media[${i}].thumbnail_url`,
        });
    }
    const ext = extensionOf(url);
    const item: MediaItem = { ...m, url, type: m.type ?? (VIDEO_EXT.has(ext) ? "video" : "image") };
    if (m.thumbnail_url !== undefined) item.thumbnail_url = m.thumbnail_url.trim();
    return item;
  });
  return { items, problems };
}

/** The first problem as the 400 a request gets for it. */
export const problemError = (p: Problem, label?: string) =>
  new BadRequest(p.code, label ? `${label}: ${p.message}` : p.message, p.hint);

/** Trims and checks every media URL; one bad URL rejects the whole request (spec: invalid_media). */
export function normalizeMedia(media: MediaInput[] | undefined): MediaItem[] {
  const { items, problems } = mediaProblems(media);
  if (problems.length) throw problemError(problems[0]);
  return items;
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
  /** A later item of a thread (the account appeared before in the targets): it goes out as a reply. */
  reply?: boolean;
  /**
   * Parallel to `media`: what Crier knows of each item that is one of its own uploads (src/media/own.ts),
   * null for a URL on another host. Own media may be converted at publish, so they pass where a URL would not.
   */
  mediaFacts?: (OwnFileFacts | null)[];
  /** ffmpeg is installed, so own videos can be converted (default: not). */
  ffmpeg?: boolean;
  /** The target's first_comment (first-comment-check.ts); absent or null: none. */
  firstComment?: string | null;
}

/** The text as the platform counts it, and the most it takes for this post (a caption may take less). */
export function textMeasure(t: Pick<TargetCheck, "plugin" | "content" | "media" | "reply">) {
  const limit = t.plugin.textLimit;
  // With media attached the text becomes a caption, which some platforms cap lower (Telegram: 1024).
  let max = t.media.length && limit.withMediaMax !== undefined ? Math.min(limit.max, limit.withMediaMax) : limit.max;
  // A reply may be another kind of object with its own cap (a Reddit comment under the post).
  if (t.reply && limit.replyMax !== undefined) max = Math.min(max, limit.replyMax);
  return { length: countText(t.content, limit.unit), limit: max, unit: limit.unit };
}

/** Throws the first rule the target breaks (as POST /v1/posts answers); nothing when the platform can take it. */
export function checkTarget(t: TargetCheck): void {
  const first = targetProblems(t)[0];
  if (first) throw problemError(first, t.label);
}

/**
 * Each plugin's platform_options schema compiled on first use: a create checks every target's options,
 * and walking the schema for errors (Value.Errors) was most of a valid target's check. The walk now runs
 * only for options the compiled check refuses, to name what is wrong.
 */
const optionsCheckers = new WeakMap<TSchema, TypeCheck<TSchema>>();
function optionsErrors(schema: TSchema, options: unknown) {
  let checker = optionsCheckers.get(schema);
  if (!checker) optionsCheckers.set(schema, (checker = TypeCompiler.Compile(schema)));
  return checker.Check(options) ? [] : Value.Errors(schema, options);
}

/** Every rule the target breaks, in the order a create reports them (the first is its 400). */
export function targetProblems(t: TargetCheck): Problem[] {
  const problems: Problem[] = [];
  const fail = (field: string, code: string, message: string, hint: string) =>
    void problems.push({ code, message, hint, field });
  const { plugin, media, content } = t;
  // A placement (an Instagram Story, a Facebook Reel) may have media rules of its own.
  const req = requirementsFor(plugin, t.options);
  const caps = plugin.capabilities;
  const images = media.filter((m) => m.type === "image");
  const videos = media.filter((m) => m.type === "video");
  const gifs = images.filter((m) => mimeOf(m) === "image/gif");

  for (const check of optionsErrors(plugin.optionsSchema, t.options)) {
    const field = check.path ? `platform_options${check.path.replace(/\//g, ".")}` : "platform_options";
    fail(
      field,
      "invalid_platform_options",
      `${field} ${check.message.replace(/^Expected/, "should be").replace(/^Unexpected property$/, "is not accepted by " + plugin.displayName)}.`,
      `See components.schemas.${optionsComponentName(plugin.platform)} in /openapi.json for the platform_options ${plugin.displayName} accepts.`,
    );
  }

  // Rules between options (and with the content) are asked only of options the schema accepted.
  const optionsValid = !problems.length;

  for (const c of resolveAliases(plugin, t.options).conflicts)
    fail(
      `platform_options.${c.alias}`,
      "invalid_platform_options",
      `platform_options.${c.alias} and platform_options.${c.option} are two names for one ${plugin.displayName} option and disagree.`,
      `Send only one of ${c.alias} and ${c.option}.`,
    );

  const limit = plugin.textLimit;
  const { length, limit: max } = textMeasure(t);
  if (length > max) {
    fail(
      "content",
      "content_too_long",
      `the text is ${length} ${UNIT_NAMES[limit.unit]} long; ${plugin.displayName} takes at most ${max}${max < limit.max ? (t.reply && max === limit.replyMax ? " in a reply" : " with media") : ""}.`,
      "Shorten the content, or give this target a shorter content_override.",
    );
  }
  if (limit.maxBytes !== undefined && utf8Length(content) > limit.maxBytes) {
    fail(
      "content",
      "content_too_long",
      `the text is ${utf8Length(content)} bytes in UTF-8; ${plugin.displayName} takes at most ${limit.maxBytes}.`,
      "Shorten the content, or give this target a shorter content_override.",
    );
  }
  if (content.trim() === "" && media.length === 0) {
    fail(
      "content",
      "empty_post",
      "the post has neither text nor media.",
      "Give content or media (or a content_override for this target).",
    );
  }

  if (req.required_media) {
    const accepted = media.filter((m) => req.required_media!.acceptedTypes.includes(m.type));
    if (accepted.length < req.required_media.minFiles)
      fail(
        "media",
        req.required_media.errorCode,
        req.required_media.errorMessage,
        `Attach at least ${req.required_media.minFiles} ${req.required_media.acceptedTypes.join(" or ")} file(s) for ${plugin.displayName}.`,
      );
  }
  if (!caps.text && media.length === 0)
    fail(
      "media",
      "media_required",
      `${plugin.displayName} cannot publish text without media.`,
      "Attach an image or a video, or remove this target.",
    );
  if (images.length && !caps.images)
    fail(
      "media",
      "media_type_not_supported",
      `${plugin.displayName} does not take images.`,
      "Remove the images or this target.",
    );
  if (videos.length && !caps.video)
    fail(
      "media",
      "media_type_not_supported",
      `${plugin.displayName} does not take videos.`,
      "Remove the video or this target.",
    );

  const fc = req.file_constraints;
  if (media.length > fc.maxFiles)
    fail(
      "media",
      "too_many_media",
      `${media.length} media files; ${plugin.displayName} takes at most ${fc.maxFiles}.`,
      "Attach fewer files.",
    );
  if (images.length > fc.maxImageFiles)
    fail(
      "media",
      "too_many_media",
      `${images.length} images; ${plugin.displayName} takes at most ${fc.maxImageFiles}.`,
      "Attach fewer images.",
    );
  if (videos.length > fc.maxVideoFiles)
    fail(
      "media",
      "too_many_media",
      `${videos.length} videos; ${plugin.displayName} takes at most ${fc.maxVideoFiles}.`,
      "Attach fewer videos.",
    );
  if (fc.maxGifFiles !== undefined && gifs.length > fc.maxGifFiles)
    fail(
      "media",
      "too_many_media",
      `${gifs.length} GIFs; ${plugin.displayName} takes at most ${fc.maxGifFiles}.`,
      "Attach fewer GIFs.",
    );
  if (!fc.allowMixedMedia && images.length && videos.length)
    fail(
      "media",
      "mixed_media_not_allowed",
      `${plugin.displayName} cannot mix images and videos in one post.`,
      "Send images and videos as separate posts.",
    );

  media.forEach((m, i) => {
    // Crier's own media are judged by what the upload showed, and may be converted; other URLs by what
    // their extension and the client say (without a recognisable type the plugin decides at publish).
    const own = t.mediaFacts?.[i] ?? null;
    const plan = planMedia(
      req,
      {
        type: m.type,
        mime: own ? own.contentType : mimeOf(m),
        size: own ? own.size : m.size,
        facts: own?.facts ?? null,
        own: own !== null,
      },
      { ffmpeg: t.ffmpeg ?? false, keepMetadata: true, displayName: plugin.displayName, label: `media[${i}]` },
    );
    if (plan.kind === "refuse") fail(`media[${i}]`, plan.code, plan.message, plan.hint);
  });
  // Duration, aspect ratio, dimensions and frame rate: what the file is, not what it is called.
  problems.push(...mediaRuleProblems({ ...t, requirements: req }));

  problems.push(...altTextProblems(t));
  problems.push(...firstCommentProblems(t));
  if (optionsValid && plugin.optionProblems)
    problems.push(
      ...plugin.optionProblems({
        content,
        media: media.map((m, i) => ({ ...m, measured: measure(m, t.mediaFacts?.[i]) })),
        options: optionsForPlugin(plugin, t.options),
        firstComment: t.firstComment ?? null,
      }),
    );

  if (req.max_hashtags != null) {
    const tags = countHashtags(content);
    if (tags > req.max_hashtags)
      fail(
        "content",
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
        "content",
        "too_many_mentions",
        `${mentions} @mentions; ${plugin.displayName} takes at most ${fc.maxMentions}.`,
        "Remove some @mentions.",
      );
  }
  return problems;
}
