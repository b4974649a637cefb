/**
 * Measuring post text the way platforms count it. Platforms disagree: Bluesky counts graphemes (what a
 * reader sees as one character), Telegram counts UTF-16 code units, Farcaster counts UTF-8 bytes.
 */

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const encoder = new TextEncoder();

export type TextUnit = "characters" | "graphemes" | "bytes";

export function graphemeCount(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** "characters" are UTF-16 code units: what Telegram and most JSON APIs count (an emoji is often 2). */
export function measureText(text: string, unit: TextUnit): number {
  if (unit === "graphemes") return graphemeCount(text);
  if (unit === "bytes") return utf8Length(text);
  return text.length;
}
