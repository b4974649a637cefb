/**
 * Measuring post text the way platforms count it. Platforms disagree: Bluesky counts graphemes (what a
 * reader sees as one character) and UTF-8 bytes, Telegram counts UTF-16 code units (String.length), X
 * weighs each character.
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const encoder = new TextEncoder();

export function graphemeCount(text: string): number {
  // ASCII text needs no segmenter (which costs microseconds a post): each character is a grapheme of its
  // own, except CR LF, which is one.
  let crlf = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) return segmentCount(text);
    if (c === 0x0a && i > 0 && text.charCodeAt(i - 1) === 0x0d) crlf++;
  }
  return text.length - crlf;
}

function segmentCount(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

const EMOJI = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

/**
 * Threads' count: "Text posts are limited to 500 characters. Emojis are counted as the number of UTF-8
 * bytes" (developers.facebook.com/docs/threads/posts, Limitations; checked 2026-11-26). An emoji is the
 * whole grapheme (with its skin tone, variation selector and joiners), counted by its bytes; every other
 * code point counts 1.
 */
export function emojiBytesLength(text: string): number {
  let n = 0;
  for (const cp of text) {
    if (cp.codePointAt(0)! > 0x7f) return emojiSegments(text);
    n++;
  }
  return n;
}

function emojiSegments(text: string): number {
  let n = 0;
  for (const { segment } of segmenter.segment(text))
    n += EMOJI.test(segment) ? utf8Length(segment) : [...segment].length;
  return n;
}

const URL_WEIGHT = 23;
/** Code point ranges X counts as 1 (Latin, general punctuation and a few more); everything else is 2. */
const LIGHT: [number, number][] = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];
const WEB_URL = /\bhttps?:\/\/[^\s<>"']+/gi;

/**
 * X's weighted length (the twitter-text v3 rules): code points in the light ranges count 1, everything
 * else (CJK, emoji) counts 2, and every URL counts 23 whatever its length.
 */
export function weightedLength(text: string): number {
  let weight = 0;
  const withoutUrls = text.normalize("NFC").replace(WEB_URL, () => {
    weight += URL_WEIGHT;
    return "";
  });
  // A grapheme keeps an emoji with its modifiers as one unit, which X counts once (2).
  for (const { segment } of segmenter.segment(withoutUrls)) {
    const cp = segment.codePointAt(0)!;
    weight += segment.length > 2 || !LIGHT.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1;
  }
  return weight;
}

/** An address written as @user@domain: Mastodon counts only its @user part. */
const REMOTE_MENTION = /(^|[^\p{L}\p{N}_\/])@([\p{L}\p{N}_]+(?:[.-]+[\p{L}\p{N}_]+)*)@[\p{L}\p{N}.-]+\.[\p{L}]{2,}/gu;

/**
 * Mastodon's count: graphemes, every http(s) link as 23 characters whatever its length, and a mention of
 * another server's user by its @user part only ("All links are counted as 23 characters … Only the
 * username part will count against your character limit -- the domain is not counted",
 * docs.joinmastodon.org/user/posting/, read 2026-11-26). The content warning counts too: the plugin
 * adds it before counting.
 */
export function mastodonLength(text: string): number {
  const counted = text
    .replace(WEB_URL, () => "x".repeat(URL_WEIGHT))
    .replace(REMOTE_MENTION, (_m, before: string, user: string) => `${before}@${user}`);
  return graphemeCount(counted);
}

/**
 * How a platform counts the length of a post: characters are Unicode code points, utf16 counts UTF-16
 * code units (String.length, Telegram), graphemes what a reader sees as one character (Bluesky), bytes
 * UTF-8 bytes (Farcaster, Nostr, YouTube), weighted X's weighting (URLs 23, CJK and emoji 2),
 * emoji_bytes code points with each emoji counted as its UTF-8 bytes (Threads), mastodon graphemes with links
 * as 23 and mentions without their domain.
 */
export type TextUnit = "characters" | "utf16" | "graphemes" | "bytes" | "weighted" | "emoji_bytes" | "mastodon";

export function countText(text: string, unit: TextUnit): number {
  switch (unit) {
    case "bytes":
      return utf8Length(text);
    case "utf16":
      return text.length;
    case "graphemes":
      return graphemeCount(text);
    case "characters":
      return [...text].length;
    case "weighted":
      return weightedLength(text);
    case "emoji_bytes":
      return emojiBytesLength(text);
    case "mastodon":
      return mastodonLength(text);
  }
}

/** How a unit reads in a message or a table: "280 weighted characters". */
export const UNIT_NAMES: Record<TextUnit, string> = {
  characters: "characters",
  utf16: "UTF-16 units",
  graphemes: "graphemes",
  bytes: "bytes",
  weighted: "weighted characters",
  emoji_bytes: "characters (emoji as UTF-8 bytes)",
  mastodon: "characters (links as 23)",
};

/** The first `max` UTF-16 code units of a text, never cutting a surrogate pair (an emoji) in two. */
export function utf16Prefix(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
