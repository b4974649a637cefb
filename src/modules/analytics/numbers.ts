/** The arithmetic of the analytics answers: medians, rates and titles, pure so their edges are easy to test. */

export const TITLE_MAX = 90;
const RATIO_DECIMALS = 4;

const round = (v: number) => Math.round(v * 10 ** RATIO_DECIMALS) / 10 ** RATIO_DECIMALS;

/** The median of the views; null with fewer than 3 values (too few to be a baseline). */
export function median(values: number[]): number | null {
  if (values.length < 3) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export interface Numbers {
  views: number | null;
  likes: number | null;
  comments: number | null;
  shares: number | null;
  saves: number | null;
}

/**
 * (likes+comments+shares+saves)/views. Numbers the platform does not give count as none of that kind;
 * null without views, or when the platform gives no interaction number at all.
 */
export function engagementRate(n: Numbers): number | null {
  if (!n.views) return null;
  const parts = [n.likes, n.comments, n.shares, n.saves].filter((v): v is number => v !== null);
  if (!parts.length) return null;
  return round(parts.reduce((a, b) => a + b, 0) / n.views);
}

/** A copy's views against its account's median in range; null when either is missing or the median is 0. */
export function versusMedian(views: number | null, accountMedian: number | null): number | null {
  if (views === null || !accountMedian) return null;
  return round(views / accountMedian);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/**
 * The caption's first non-empty line, at most 90 characters (code points). A longer line is cut between
 * whole characters, never inside an emoji or an accented letter, and ends with "…".
 */
export function titleOf(caption: string): string {
  const line =
    caption
      .split(/\r?\n|\r/)
      .map((l) => l.trim())
      .find((l) => l.length > 0) ?? "";
  if ([...line].length <= TITLE_MAX) return line;
  let out = "";
  let used = 0;
  for (const { segment } of graphemes.segment(line)) {
    const n = [...segment].length;
    if (used + n > TITLE_MAX - 1) break;
    out += segment;
    used += n;
  }
  return `${out.trimEnd()}…`;
}
