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
