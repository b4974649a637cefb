/**
 * Rich text for Bluesky. A post's links, mentions and hashtags are not markup in the text: they are
 * "facets" that point at ranges of the text by UTF-8 byte offsets (not JS string indices), so any
 * emoji or accented letter before a link moves its offsets by more than one.
 */
import { graphemeCount } from "../../src/platform/text.ts";

export type FacetFeature =
  | { $type: "app.bsky.richtext.facet#link"; uri: string }
  | { $type: "app.bsky.richtext.facet#mention"; did: string }
  | { $type: "app.bsky.richtext.facet#tag"; tag: string };

export interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: FacetFeature[];
}

/** A span found in the text, in UTF-16 indices; `value` is the URL, the handle or the tag (no sigil). */
export interface Span {
  kind: "link" | "mention" | "tag";
  start: number;
  end: number;
  value: string;
}

const LINK = /(^|[\s(])(https?:\/\/[^\s<>"]+)/giu;
// A handle is a domain name: labels of letters, digits and hyphens, at least two, the last not numeric.
const MENTION = /(^|[\s(])(@((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?))/giu;
const TAG = /(^|\s)([#＃]([^\s#＃]+))/gu;
const TRAILING_PUNCT = /[\p{P}\p{S}]+$/u;
const MAX_TAG_GRAPHEMES = 64;

function trimLink(url: string): string {
  let u = url.replace(/[.,;:!?'"]+$/u, "");
  // A closing parenthesis belongs to the URL only when the URL opened one (Wikipedia links do).
  while (u.endsWith(")") && (u.match(/\(/g)?.length ?? 0) < (u.match(/\)/g)?.length ?? 0)) {
    u = u.slice(0, -1).replace(/[.,;:!?'"]+$/u, "");
  }
  return u;
}

export function detectSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(LINK)) {
    const url = trimLink(m[2]);
    const start = m.index! + m[1].length;
    if (url.length > "https://".length) spans.push({ kind: "link", start, end: start + url.length, value: url });
  }
  for (const m of text.matchAll(MENTION)) {
    const start = m.index! + m[1].length;
    spans.push({ kind: "mention", start, end: start + m[2].length, value: m[3].toLowerCase() });
  }
  for (const m of text.matchAll(TAG)) {
    // "#1" is a number, not a tag; a keycap emoji (#️⃣) starts with the variation selector.
    const tag = m[3].replace(TRAILING_PUNCT, "");
    if (!tag || /^\d+$/.test(tag) || tag.startsWith("\uFE0F") || graphemeCount(tag) > MAX_TAG_GRAPHEMES) continue;
    const start = m.index! + m[1].length;
    spans.push({ kind: "tag", start, end: start + 1 + tag.length, value: tag });
  }
  // A mention or tag inside a link is part of the link.
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  for (const s of spans) {
    const last = kept[kept.length - 1];
    if (last && s.start < last.end) continue;
    kept.push(s);
  }
  return kept;
}

const encoder = new TextEncoder();

/** UTF-8 byte offset of a UTF-16 index of `text`. */
export function byteOffset(text: string, index: number): number {
  return encoder.encode(text.slice(0, index)).length;
}

/**
 * Facets for the spans. Mentions need the account's DID: `dids` maps handles to DIDs, and a mention
 * whose handle did not resolve stays plain text (as the Bluesky app does).
 */
export function toFacets(text: string, spans: Span[], dids: Map<string, string>): Facet[] {
  const facets: Facet[] = [];
  for (const s of spans) {
    let feature: FacetFeature;
    if (s.kind === "link") feature = { $type: "app.bsky.richtext.facet#link", uri: s.value };
    else if (s.kind === "tag") feature = { $type: "app.bsky.richtext.facet#tag", tag: s.value };
    else {
      const did = dids.get(s.value);
      if (!did) continue;
      feature = { $type: "app.bsky.richtext.facet#mention", did };
    }
    facets.push({
      index: { byteStart: byteOffset(text, s.start), byteEnd: byteOffset(text, s.end) },
      features: [feature],
    });
  }
  return facets;
}
