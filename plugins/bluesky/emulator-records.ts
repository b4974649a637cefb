/**
 * The app.bsky.feed.post lexicon as the Bluesky emulator enforces it, and the post views it renders for
 * AppView reads. Limits are the lexicon's: text 300 graphemes / 3000 bytes, 4 images of 2,000,000 bytes
 * (app.bsky.embed.images#image: "May be up to 2 MB, formerly limited to 1 MB"), one MP4 video of
 * 100,000,000 bytes, facets with UTF-8 byte ranges. Where @atproto/api is installed the image cap is read
 * from its lexicon; IMAGE_MAX_BYTES is the same value for a production sandbox without it (checked
 * 2026-11-26 against the lexicon in @atproto/api 0.19).
 */
import { graphemeCount, utf8Length } from "../../src/platform/text.ts";

export interface StoredRecord {
  uri: string;
  cid: string;
  did: string;
  rkey: string;
  value: Record<string, unknown>;
  indexedAt: string;
  replyParent: string | null;
  likes: number;
  reposts: number;
  quotes: number;
  bookmarks: number;
}

interface BlobLike {
  cid: string;
  mimeType: string;
  size: number;
}

export interface Lookups {
  /** A blob the authenticated account uploaded. */
  blob(cid: string): BlobLike | undefined;
  record(uri: string): StoredRecord | undefined;
  /** The lexicon's cap on an image blob, when the lexicon is at hand. */
  imageMaxSize?: number;
}

const IMAGE_MAX_BYTES = 2_000_000;

/** How checkBlob's messages start, so the emulator answers them with the PDS's error names. */
export const BLOB_REFUSAL = { size: "This file is too large.", mime: "Wrong type of file." } as const;

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
const AT_URI = /^at:\/\/did:[a-z]+:[a-zA-Z0-9._:%-]+\/[a-zA-Z0-9.]+\/[a-zA-Z0-9._~:-]{1,512}$/;

function checkBlob(
  v: unknown,
  where: string,
  accept: (mime: string) => boolean,
  maxSize: number,
  lookups: Lookups,
): string | null {
  if (
    !isObj(v) ||
    v.$type !== "blob" ||
    !isObj(v.ref) ||
    typeof v.ref.$link !== "string" ||
    typeof v.mimeType !== "string" ||
    typeof v.size !== "number"
  ) {
    return `${where} should be a blob ref`;
  }
  const stored = lookups.blob(v.ref.$link);
  if (!stored) return `Could not find blob: ${v.ref.$link}`;
  if (stored.mimeType !== v.mimeType || stored.size !== v.size) return `${where} does not match the uploaded blob`;
  // The PDS's own refusals (BlobTooLarge, InvalidMimeType), raised when a record is written that embeds a
  // blob its lexicon does not accept (atproto packages/pds, actor-store/blob; checked 2026-11-26).
  if (!accept(v.mimeType)) return `${BLOB_REFUSAL.mime} It is ${v.mimeType}. (${where})`;
  if (v.size > maxSize)
    return `${BLOB_REFUSAL.size} It is ${v.size} bytes but the maximum size is ${maxSize} bytes. (${where})`;
  return null;
}

function checkAspectRatio(v: unknown, where: string): string | null {
  if (v === undefined) return null;
  if (
    !isObj(v) ||
    !Number.isInteger(v.width) ||
    !Number.isInteger(v.height) ||
    (v.width as number) < 1 ||
    (v.height as number) < 1
  ) {
    return `${where}/aspectRatio must have integer width and height of at least 1`;
  }
  return null;
}

/**
 * app.bsky.embed.video#main alt: a string of at most 1000 graphemes and 10000 UTF-8 bytes (lexicons/app/
 * bsky/embed/video.json in github.com/bluesky-social/atproto, 2026-11-26). The lexicon check says the same
 * where @atproto/api is installed; this keeps the rule in a sandbox without it.
 */
function checkVideoAlt(alt: unknown): string | null {
  if (alt === undefined) return null;
  if (typeof alt !== "string") return "Record/embed/alt must be a string";
  const graphemes = [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(alt)].length;
  if (graphemes > 1000) return "Record/embed/alt must not be longer than 1000 graphemes";
  if (new TextEncoder().encode(alt).length > 10000) return "Record/embed/alt must not be longer than 10000 characters";
  return null;
}

function checkEmbed(embed: unknown, lookups: Lookups): string | null {
  if (!isObj(embed) || typeof embed.$type !== "string") return "Record/embed must be an object with a $type";
  if (embed.$type === "app.bsky.embed.images") {
    if (!Array.isArray(embed.images) || embed.images.length < 1) return "Record/embed/images must be a non-empty array";
    if (embed.images.length > 4) return "Record/embed/images must not have more than 4 elements";
    for (const [i, img] of embed.images.entries()) {
      const where = `Record/embed/images/${i}`;
      if (!isObj(img)) return `${where} must be an object`;
      if (typeof img.alt !== "string") return `${where} must have the property "alt"`;
      const problem =
        checkBlob(
          img.image,
          `${where}/image`,
          (m) => m.startsWith("image/"),
          lookups.imageMaxSize ?? IMAGE_MAX_BYTES,
          lookups,
        ) ?? checkAspectRatio(img.aspectRatio, where);
      if (problem) return problem;
    }
    return null;
  }
  if (embed.$type === "app.bsky.embed.video") {
    return (
      checkBlob(embed.video, "Record/embed/video", (m) => m === "video/mp4", 100_000_000, lookups) ??
      checkAspectRatio(embed.aspectRatio, "Record/embed") ??
      checkVideoAlt(embed.alt)
    );
  }
  if (
    embed.$type === "app.bsky.embed.external" ||
    embed.$type === "app.bsky.embed.record" ||
    embed.$type === "app.bsky.embed.recordWithMedia"
  )
    return null;
  return `Record/embed has an unknown $type: ${embed.$type}`;
}

function checkFacets(facets: unknown, text: string): string | null {
  if (!Array.isArray(facets)) return "Record/facets must be an array";
  const bytes = utf8Length(text);
  for (const [i, f] of facets.entries()) {
    const where = `Record/facets/${i}`;
    if (!isObj(f) || !isObj(f.index) || !Array.isArray(f.features) || f.features.length === 0)
      return `${where} must have index and features`;
    const { byteStart, byteEnd } = f.index;
    if (!Number.isInteger(byteStart) || !Number.isInteger(byteEnd) || (byteStart as number) < 0)
      return `${where}/index must have integer byteStart and byteEnd`;
    // The app ignores a facet that falls outside the text; the emulator refuses it so the mistake shows.
    if ((byteStart as number) >= (byteEnd as number) || (byteEnd as number) > bytes)
      return `${where}/index is outside the text (${bytes} bytes)`;
    for (const feat of f.features) {
      if (!isObj(feat)) return `${where}/features must be objects`;
      if (feat.$type === "app.bsky.richtext.facet#link") {
        if (typeof feat.uri !== "string" || !URL.canParse(feat.uri)) return `${where}: link uri must be a URI`;
      } else if (feat.$type === "app.bsky.richtext.facet#mention") {
        if (typeof feat.did !== "string" || !/^did:[a-z]+:\S+$/.test(feat.did))
          return `${where}: mention did must be a DID`;
      } else if (feat.$type === "app.bsky.richtext.facet#tag") {
        if (typeof feat.tag !== "string" || !feat.tag || utf8Length(feat.tag) > 640 || graphemeCount(feat.tag) > 64)
          return `${where}: tag must be 1 to 64 graphemes`;
      } else return `${where}: unknown feature ${String(feat.$type)}`;
    }
  }
  return null;
}

function checkReply(reply: unknown, lookups: Lookups): string | null {
  if (!isObj(reply)) return "Record/reply must be an object";
  for (const key of ["root", "parent"] as const) {
    const ref = reply[key];
    if (!isObj(ref) || typeof ref.uri !== "string" || !AT_URI.test(ref.uri) || typeof ref.cid !== "string")
      return `Record/reply/${key} must be a strong ref (uri and cid)`;
    // A post this server does not hold cannot be checked (the PDS does not either); one it holds must match.
    const known = lookups.record(ref.uri);
    if (known && known.cid !== ref.cid) return `Record/reply/${key} cid does not match ${ref.uri}`;
  }
  return null;
}

/** null when the record is a valid post, else the reason the PDS gives. */
export function validatePost(record: Record<string, unknown>, lookups: Lookups): string | null {
  if (record.$type !== "app.bsky.feed.post") return 'Record/$type must be "app.bsky.feed.post"';
  if (typeof record.text !== "string") return 'Record must have the property "text"';
  if (graphemeCount(record.text) > 300) return "Record/text must not be longer than 300 graphemes";
  if (utf8Length(record.text) > 3000) return "Record/text must not be longer than 3000 characters";
  if (typeof record.createdAt !== "string" || Number.isNaN(Date.parse(record.createdAt)))
    return "Record/createdAt must be a valid datetime";
  if (record.facets !== undefined) {
    const p = checkFacets(record.facets, record.text);
    if (p) return p;
  }
  if (record.reply !== undefined) {
    const p = checkReply(record.reply, lookups);
    if (p) return p;
  }
  if (record.embed !== undefined) {
    const p = checkEmbed(record.embed, lookups);
    if (p) return p;
  }
  if (record.langs !== undefined && (!Array.isArray(record.langs) || record.langs.length > 3))
    return "Record/langs must be an array of at most 3 languages";
  return null;
}

interface ViewContext {
  author: { did: string; handle: string; displayName: string };
  blobUrl(did: string, cid: string): string;
  replyCount: number;
}

/** app.bsky.feed.defs#postView: the record plus the AppView's rendering of its embed and its counts. */
export function postView(r: StoredRecord, c: ViewContext) {
  const embed = r.value.embed as Record<string, any> | undefined;
  let embedView: unknown;
  if (embed?.$type === "app.bsky.embed.images") {
    embedView = {
      $type: "app.bsky.embed.images#view",
      images: embed.images.map((i: any) => ({
        thumb: c.blobUrl(r.did, i.image.ref.$link),
        fullsize: c.blobUrl(r.did, i.image.ref.$link),
        alt: i.alt,
        ...(i.aspectRatio && { aspectRatio: i.aspectRatio }),
      })),
    };
  } else if (embed?.$type === "app.bsky.embed.video") {
    const videoCid = embed.video.ref.$link;
    embedView = {
      $type: "app.bsky.embed.video#view",
      cid: videoCid,
      playlist: `${c.blobUrl(r.did, videoCid)}&format=m3u8`,
      ...(embed.alt && { alt: embed.alt }),
      ...(embed.aspectRatio && { aspectRatio: embed.aspectRatio }),
    };
  }
  return {
    uri: r.uri,
    cid: r.cid,
    author: { ...c.author, labels: [] },
    record: r.value,
    ...(embedView !== undefined && { embed: embedView }),
    replyCount: c.replyCount,
    repostCount: r.reposts,
    likeCount: r.likes,
    quoteCount: r.quotes,
    bookmarkCount: r.bookmarks,
    indexedAt: r.indexedAt,
    labels: [],
  };
}
