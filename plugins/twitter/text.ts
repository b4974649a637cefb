/**
 * X's weighted length (the twitter-text v3 rules): code points in the Latin, general punctuation and a
 * few other ranges count 1, everything else (CJK, emoji) counts 2, and every URL counts 23 whatever its
 * length. A post may weigh at most 280.
 */
export const MAX_WEIGHT = 280;
const URL_WEIGHT = 23;
const LIGHT: [number, number][] = [[0, 4351], [8192, 8205], [8208, 8223], [8242, 8247]];
const URL = /\bhttps?:\/\/[^\s<>"']+/gi;

export function weightedLength(text: string): number {
  let weight = 0;
  const withoutUrls = text.normalize("NFC").replace(URL, () => {
    weight += URL_WEIGHT;
    return "";
  });
  // Segments keep an emoji with its modifiers as one unit, which X counts once (2).
  for (const { segment } of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(withoutUrls)) {
    const cp = segment.codePointAt(0)!;
    weight += segment.length > 2 || !LIGHT.some(([a, b]) => cp >= a && cp <= b) ? 2 : 1;
  }
  return weight;
}
