/**
 * Measuring post text the way platforms count it. Platforms disagree: Bluesky counts graphemes (what a
 * reader sees as one character) and UTF-8 bytes, Telegram counts UTF-16 code units (String.length).
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const encoder = new TextEncoder();

export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * How a platform counts the length of a post: characters are Unicode code points, utf16 counts UTF-16
 * code units (String.length, Telegram), graphemes what a reader sees as one character (Bluesky), bytes
 * UTF-8 bytes (Farcaster, Nostr, YouTube).
 */
export type TextUnit = "characters" | "utf16" | "graphemes" | "bytes";

export function countText(text: string, unit: TextUnit): number {
  switch (unit) {
    case "bytes": return utf8Length(text);
    case "utf16": return text.length;
    case "graphemes": return graphemeCount(text);
    case "characters": return [...text].length;
  }
}
