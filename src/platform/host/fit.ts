/**
 * Lenient handling (RFC 7240 `Prefer: handling=lenient`, and the MCP tools' `on_limit: "fit"`): what a
 * target's platform cannot take is adapted instead of refused, as the upstream service's tools do.
 * Hashtags past the platform's cap are removed from the end, media of a kind the platform refuses or past
 * its counts are dropped (keeping the first media's kind where kinds cannot mix), and text over the limit
 * is cut at a word boundary in the platform's own unit. Every change is reported as an adjustment; what
 * cannot be made to fit (media a platform requires, a file too large) is still a problem for the checks.
 */
import { countText, UNIT_NAMES, utf8Length } from "../text.ts";
import type { MediaItem } from "../sdk.ts";
import { textMeasure, type TargetCheck } from "./content-check.ts";
import { requirementsFor } from "./options.ts";

export interface Adjustment {
  /** content_truncated, hashtags_removed or media_dropped. */
  code: string;
  message: string;
}

export interface Fitted {
  content: string;
  media: MediaItem[];
  adjustments: Adjustment[];
}

const ELLIPSIS = "…";
const HASHTAG = /(^|[^\p{L}\p{N}_&#])(#[\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*)/gu;
const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** The target adapted to what its platform takes, with what was changed. */
export function fitTarget(
  t: Pick<TargetCheck, "plugin" | "content" | "media" | "reply"> & Partial<Pick<TargetCheck, "options">>,
): Fitted {
  const adjustments: Adjustment[] = [];
  const media = fitMedia(t, adjustments);
  let content = fitHashtags(t.plugin, t.content, adjustments);
  content = fitText({ ...t, content, media }, adjustments);
  return { content, media, adjustments };
}

function fitHashtags(plugin: TargetCheck["plugin"], content: string, out: Adjustment[]): string {
  const cap = plugin.mediaRequirements.max_hashtags;
  if (cap == null) return content;
  const tags = [...content.matchAll(HASHTAG)];
  if (tags.length <= cap) return content;
  // Removed from the end, each with the space before it, so the text keeps its first `cap` tags.
  let text = content;
  for (const m of tags.slice(cap).reverse()) {
    const start = m.index! + m[1].length;
    const end = start + m[2].length;
    const before = /[ \t]$/.test(text.slice(0, start)) ? 1 : 0;
    text = text.slice(0, start - before) + text.slice(end);
  }
  out.push({
    code: "hashtags_removed",
    message: `${tags.length - cap} hashtag(s) removed from the end (${tags
      .slice(cap)
      .map((m) => m[2])
      .join(" ")}): ${plugin.displayName} takes at most ${cap}.`,
  });
  return text.trimEnd();
}

function fitMedia(
  t: Pick<TargetCheck, "plugin" | "media"> & Partial<Pick<TargetCheck, "options">>,
  out: Adjustment[],
): MediaItem[] {
  const { plugin } = t;
  const caps = plugin.capabilities;
  // The placement's limits (one file for a Story or a Reel), else the platform's.
  const fc = requirementsFor(plugin, t.options ?? null).file_constraints;
  const isGif = (m: MediaItem) => m.mime_type === "image/gif" || /\.gif(?:$|\?)/i.test(m.url);
  const dropped: { index: number; why: string }[] = [];
  const kept: { item: MediaItem; index: number }[] = [];
  const keepKind = !fc.allowMixedMedia
    ? t.media.find((m) => (m.type === "image" ? caps.images : caps.video))?.type
    : undefined;
  let images = 0;
  let videos = 0;
  let gifs = 0;
  t.media.forEach((item, index) => {
    const drop = (why: string) => void dropped.push({ index, why });
    if (item.type === "image" && !caps.images) return drop(`${plugin.displayName} does not take images`);
    if (item.type === "video" && !caps.video) return drop(`${plugin.displayName} does not take videos`);
    if (keepKind && item.type !== keepKind)
      return drop(`${plugin.displayName} cannot mix images and videos; the first file's kind (${keepKind}) is kept`);
    if (kept.length >= fc.maxFiles) return drop(`${plugin.displayName} takes at most ${fc.maxFiles} file(s)`);
    if (item.type === "image" && images >= fc.maxImageFiles)
      return drop(`${plugin.displayName} takes at most ${fc.maxImageFiles} image(s)`);
    if (item.type === "video" && videos >= fc.maxVideoFiles)
      return drop(`${plugin.displayName} takes at most ${fc.maxVideoFiles} video(s)`);
    if (fc.maxGifFiles !== undefined && isGif(item) && gifs >= fc.maxGifFiles)
      return drop(`${plugin.displayName} takes at most ${fc.maxGifFiles} GIF(s)`);
    kept.push({ item, index });
    if (item.type === "image") images++;
    else videos++;
    if (isGif(item)) gifs++;
  });
  for (const d of dropped) out.push({ code: "media_dropped", message: `media[${d.index}] dropped: ${d.why}.` });
  return kept.map((k) => k.item);
}

/** Whether the text fits the platform's limit (and its byte cap, where it has one). */
function fits(t: Pick<TargetCheck, "plugin" | "media" | "reply">, text: string): boolean {
  const { limit } = textMeasure({ ...t, content: "" });
  const bytes = t.plugin.textLimit.maxBytes;
  return countText(text, t.plugin.textLimit.unit) <= limit && (bytes === undefined || utf8Length(text) <= bytes);
}

function fitText(t: Pick<TargetCheck, "plugin" | "content" | "media" | "reply">, out: Adjustment[]): string {
  if (fits(t, t.content)) return t.content;
  const graphemes = [...segmenter.segment(t.content)].map((s) => s.segment);
  // The longest prefix (in whole graphemes, so no emoji is split) that fits with the ellipsis.
  let lo = 0;
  let hi = graphemes.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(t, graphemes.slice(0, mid).join("").trimEnd() + ELLIPSIS)) lo = mid;
    else hi = mid - 1;
  }
  let prefix = graphemes.slice(0, lo).join("");
  // Back to the last word boundary, unless that would throw away most of what fits (one long word).
  const boundary = Math.max(prefix.lastIndexOf(" "), prefix.lastIndexOf("\n"), prefix.lastIndexOf("\t"));
  if (lo < graphemes.length && !/\s/.test(graphemes[lo]) && boundary > prefix.length / 2)
    prefix = prefix.slice(0, boundary);
  const text = prefix.trimEnd() + ELLIPSIS;
  const { length, limit, unit } = textMeasure({ ...t });
  out.push({
    code: "content_truncated",
    message: `the text was cut from ${length} to ${countText(text, unit)} ${UNIT_NAMES[unit]} at a word boundary: ${t.plugin.displayName} takes at most ${limit}.`,
  });
  return text;
}
