/**
 * The caption a workflow item gets for one destination, built in a fixed order: comment/DM prompts
 * removed, AI adaptation, then the custom ending before or after, then the platform's rules (Instagram
 * mentions, Threads' caption_max_length, the destination's own text limit, cut at a whole word).
 */
import type { AiConfig } from "../config.ts";
import type { Logger } from "../log.ts";
import type { DestinationSettings } from "../domain/workflow-settings.ts";
import { countText, type TextUnit } from "../platform/text.ts";
import { adaptCaption } from "./ai-adapt.ts";

/**
 * Calls to action that make no sense on another platform ("comment X below", "DM me", "link in bio"):
 * the sentence holding one is removed. Documented in the README (Workflows).
 */
export const PROMPT_PATTERNS: RegExp[] = [
  /\b(?:comment|type|drop|reply(?: with)?)\b[^.!?\n]{0,60}?\b(?:below|in the comments)\b/i,
  /\b(?:dm|message|inbox|text)\s+me\b/i,
  /\bsend (?:me|us) an? (?:dm|message)\b/i,
  /\b(?:dm|message) (?:us|me) (?:for|to)\b/i,
  /\blink (?:is )?in (?:my |our |the )?bio\b/i,
  /\b(?:check|see|tap|click) (?:the )?link in (?:my |our )?bio\b/i,
];

export function removePrompts(text: string): string {
  const lines = text.split("\n").map((line) => {
    // Sentences with their closing punctuation; a sentence with a prompt goes, the rest stays.
    const sentences = line.match(/[^.!?]+[.!?]*\s*/g) ?? [line];
    return sentences
      .filter((s) => !PROMPT_PATTERNS.some((p) => p.test(s)))
      .join("")
      .trimEnd();
  });
  return lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** "@name" becomes "name"; e-mail addresses (a word character before the @) stay as they are. */
export function removeMentions(text: string): string {
  return text.replace(/(^|[^\w@.])@([A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?)/g, "$1$2");
}

/** The longest start of `text` within `max` that ends at a whole word (a hard cut when one word is too long). */
export function cutAtWord(text: string, max: number, unit: TextUnit): string {
  if (countText(text, unit) <= max) return text;
  const segments = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].map((s) => s.segment);
  let lo = 0;
  let hi = segments.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countText(segments.slice(0, mid).join(""), unit) <= max) lo = mid;
    else hi = mid - 1;
  }
  const hard = segments.slice(0, lo).join("");
  // The cut falls inside a word unless the next character is a space.
  if (/\s/.test(segments[lo] ?? " ")) return hard.trimEnd();
  const space = hard.search(/\s\S*$/);
  return (space > 0 ? hard.slice(0, space) : hard).trimEnd();
}

export interface CaptionInput {
  text: string;
  platform: string;
  settings: DestinationSettings | undefined;
  /** The destination's text limit (its lower limit with media when there is media). */
  limit: { max: number; unit: TextUnit };
  ai?: AiConfig;
  log: Logger;
}

export async function buildCaption(c: CaptionInput): Promise<string> {
  const s = c.settings ?? {};
  let body = c.text;
  if (s.remove_comment_dm_prompts) body = removePrompts(body);
  if (s.adapt_caption && c.ai && body.trim()) {
    body =
      (await adaptCaption(
        c.ai,
        { text: body, platform: c.platform, instructions: s.adapt_caption_instructions },
        c.log,
      )) ?? body;
  }
  let ending = s.caption_ending?.trim() ?? "";
  if (s.instagram?.remove_mentions) {
    body = removeMentions(body);
    ending = removeMentions(ending);
  }
  const max = Math.min(c.limit.max, s.threads?.caption_max_length ?? Infinity);
  if (!ending) return cutAtWord(body, max, c.limit.unit);
  // The custom text is the part the user wrote for this destination: the source text gives way first.
  const sep = "\n\n";
  const room = max - countText(ending + sep, c.limit.unit);
  const kept = room > 0 ? cutAtWord(body, room, c.limit.unit) : "";
  const joined = !kept.trim() ? ending : s.caption_position === "before" ? ending + sep + kept : kept + sep + ending;
  return cutAtWord(joined, max, c.limit.unit);
}
