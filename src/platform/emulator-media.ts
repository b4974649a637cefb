/**
 * What a platform sees in the media bytes it receives, read the way its servers read them: from the
 * file's own structure, never from what the sender declared and never through Crier's probe (sharp and
 * ffprobe), so the emulators are an independent check of what Crier sends. Images are read from their
 * headers (JPEG SOF, PNG IHDR, GIF screen descriptor, WebP VP8/VP8L/VP8X), MP4 and QuickTime by walking
 * their ISO-BMFF boxes, WebM and Matroska by their EBML elements (emulator-media-containers.ts).
 */
import { readIsoMedia, readMatroska } from "./emulator-media-containers.ts";

/** What a received file is. Numbers the structure does not carry are null. */
export interface MediaSeen {
  /** The type the bytes are, by their signature; null when none is recognised. */
  mime: string | null;
  bytes: number;
  width: number | null;
  height: number | null;
  /** Seconds, for video. */
  duration: number | null;
  /** Frames per second of the first video track, when the container says. */
  frameRate?: number | null;
  /** The video codec as the container names it: avc1, hvc1, hev1, V_VP9, … */
  codec?: string | null;
}

export interface Dimensions {
  width: number;
  height: number;
}

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Reads the bytes a platform received. */
export function inspectMedia(bytes: Uint8Array): MediaSeen {
  const seen: MediaSeen = { mime: null, bytes: bytes.byteLength, width: null, height: null, duration: null };
  const image = imageType(bytes);
  if (image) return { ...seen, mime: image, ...(imageDimensions(bytes, image) ?? {}) };
  if (ascii(bytes, 4, "ftyp") || ["moov", "mdat", "wide", "free"].some((a) => ascii(bytes, 4, a)))
    return { ...seen, ...readIsoMedia(bytes) };
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3)
    return { ...seen, ...readMatroska(bytes) };
  return seen;
}

/**
 * Downloads a media URL the way a platform pulls one (Instagram's image_url, TikTok's PULL_FROM_URL) and
 * reads it; null when it could not be fetched (an error answer, a refused address, no answer in 10 s).
 * `pull` is the host's guarded fetch for sandbox emulators (EmulatorOptions.pullMedia); else plain fetch.
 */
export async function pullMedia(
  url: string,
  pull?: (url: string) => Promise<Response>,
): Promise<(MediaSeen & { contentType: string }) | null> {
  try {
    const res = await (pull ? pull(url) : fetch(url, { signal: AbortSignal.timeout(10_000) }));
    const body = new Uint8Array(await res.arrayBuffer());
    if (!res.ok) return null;
    return { ...inspectMedia(body), contentType: res.headers.get("content-type") ?? "" };
  } catch {
    return null;
  }
}

/** Width over height, or null when either is unknown. */
export function aspectRatio(m: MediaSeen): number | null {
  return m.width && m.height ? m.width / m.height : null;
}

// ---- images -------------------------------------------------------------------------------------

function imageType(b: Uint8Array): string | null {
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b[i] === v)) return "image/png";
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return "image/gif";
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) return "image/webp";
  if (ascii(b, 0, "BM")) return "image/bmp";
  if (ascii(b, 0, "II*\0") || ascii(b, 0, "MM\0*")) return "image/tiff";
  if (ascii(b, 4, "ftyp") && ["heic", "heix", "mif1", "msf1"].some((brand) => ascii(b, 8, brand))) return "image/heic";
  return null;
}

/** Width and height read from an image's header, or null when they are not in the given bytes. */
export function imageDimensions(head: Uint8Array, contentType: string): Dimensions | null {
  const d = view(head);
  const ok = (x: Dimensions | null) => (x && x.width > 0 && x.height > 0 ? x : null);
  try {
    switch (contentType) {
      case "image/png":
        return ascii(head, 12, "IHDR") ? ok({ width: d.getUint32(16), height: d.getUint32(20) }) : null;
      case "image/gif":
        return ok({ width: d.getUint16(6, true), height: d.getUint16(8, true) });
      case "image/webp":
        return ok(webpDimensions(head, d));
      case "image/jpeg":
        return ok(jpegDimensions(head, d));
      case "image/bmp":
        return ok({ width: d.getInt32(18, true), height: Math.abs(d.getInt32(22, true)) });
      default:
        return null;
    }
  } catch {
    // A header cut short: the size stays unknown.
    return null;
  }
}

function webpDimensions(b: Uint8Array, d: DataView): Dimensions | null {
  if (ascii(b, 12, "VP8 ")) return { width: d.getUint16(26, true) & 0x3fff, height: d.getUint16(28, true) & 0x3fff };
  if (ascii(b, 12, "VP8L")) {
    const bits = d.getUint32(21, true);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  const u24 = (at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
  if (ascii(b, 12, "VP8X")) return { width: u24(24) + 1, height: u24(27) + 1 };
  return null;
}

function jpegDimensions(b: Uint8Array, d: DataView): Dimensions | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    // Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return { height: d.getUint16(i + 5), width: d.getUint16(i + 7) };
    i += 2 + d.getUint16(i + 2);
  }
  return null;
}

// ---- rules ---------------------------------------------------------------------------------------

/**
 * What a platform documents that it refuses, for one kind of media. Each emulator writes its own from
 * the platform's documentation (with the page and the date beside it), never from its adapter.
 */
export interface MediaRule {
  /** Types the bytes must be (by their signature, not the declared content type). */
  types?: readonly string[];
  maxBytes?: number;
  minBytes?: number;
  minWidth?: number;
  maxWidth?: number;
  minHeight?: number;
  maxHeight?: number;
  /** width × height */
  maxPixels?: number;
  /** width + height (Telegram's photos) */
  maxSideSum?: number;
  /** Width over height. */
  minAspect?: number;
  maxAspect?: number;
  /** Seconds. */
  minDuration?: number;
  maxDuration?: number;
  minFrameRate?: number;
  maxFrameRate?: number;
  /** Video codecs as the container names them (avc1, hvc1, hev1, V_VP9…). */
  codecs?: readonly string[];
}

/** The first rule a file breaks: which one, and a sentence for the platform's error message. */
export interface MediaBreach {
  rule: keyof MediaRule;
  message: string;
}

const ratio = (r: number) => (r >= 1 ? `${+r.toFixed(2)}:1` : `1:${+(1 / r).toFixed(2)}`);

/**
 * The first rule `seen` breaks, or null. A number the file does not carry (a duration a header cut short
 * leaves unknown) breaks nothing: the emulator refuses what it knows the platform would refuse.
 */
export function breach(seen: MediaSeen, rule: MediaRule): MediaBreach | null {
  const w = seen.width;
  const h = seen.height;
  const ar = aspectRatio(seen);
  const checks: [keyof MediaRule, boolean, string][] = [
    [
      "types",
      !!rule.types && !rule.types.includes(seen.mime ?? ""),
      `the file is ${seen.mime ?? "of an unknown type"}, not ${rule.types?.join(" or ")}`,
    ],
    [
      "maxBytes",
      rule.maxBytes != null && seen.bytes > rule.maxBytes,
      `the file is ${seen.bytes} bytes, over ${rule.maxBytes}`,
    ],
    [
      "minBytes",
      rule.minBytes != null && seen.bytes < rule.minBytes,
      `the file is ${seen.bytes} bytes, under ${rule.minBytes}`,
    ],
    [
      "minWidth",
      rule.minWidth != null && w != null && w < rule.minWidth,
      `the width is ${w} px, under ${rule.minWidth}`,
    ],
    [
      "maxWidth",
      rule.maxWidth != null && w != null && w > rule.maxWidth,
      `the width is ${w} px, over ${rule.maxWidth}`,
    ],
    [
      "minHeight",
      rule.minHeight != null && h != null && h < rule.minHeight,
      `the height is ${h} px, under ${rule.minHeight}`,
    ],
    [
      "maxHeight",
      rule.maxHeight != null && h != null && h > rule.maxHeight,
      `the height is ${h} px, over ${rule.maxHeight}`,
    ],
    [
      "maxPixels",
      rule.maxPixels != null && w != null && h != null && w * h > rule.maxPixels,
      `${w}×${h} is over ${rule.maxPixels} pixels`,
    ],
    [
      "maxSideSum",
      rule.maxSideSum != null && w != null && h != null && w + h > rule.maxSideSum,
      `width and height add up to ${(w ?? 0) + (h ?? 0)}, over ${rule.maxSideSum}`,
    ],
    [
      "minAspect",
      rule.minAspect != null && ar != null && ar < rule.minAspect - 1e-3,
      `the aspect ratio ${ar && ratio(ar)} is narrower than ${rule.minAspect && ratio(rule.minAspect)}`,
    ],
    [
      "maxAspect",
      rule.maxAspect != null && ar != null && ar > rule.maxAspect + 1e-3,
      `the aspect ratio ${ar && ratio(ar)} is wider than ${rule.maxAspect && ratio(rule.maxAspect)}`,
    ],
    [
      "minDuration",
      rule.minDuration != null && seen.duration != null && seen.duration < rule.minDuration,
      `the video is ${seen.duration} s, under ${rule.minDuration} s`,
    ],
    [
      "maxDuration",
      rule.maxDuration != null && seen.duration != null && seen.duration > rule.maxDuration,
      `the video is ${seen.duration} s, over ${rule.maxDuration} s`,
    ],
    [
      "minFrameRate",
      rule.minFrameRate != null && seen.frameRate != null && seen.frameRate < rule.minFrameRate,
      `the frame rate is ${seen.frameRate} fps, under ${rule.minFrameRate}`,
    ],
    [
      "maxFrameRate",
      rule.maxFrameRate != null && seen.frameRate != null && seen.frameRate > rule.maxFrameRate,
      `the frame rate is ${seen.frameRate} fps, over ${rule.maxFrameRate}`,
    ],
    [
      "codecs",
      !!rule.codecs && seen.codec != null && !rule.codecs.includes(seen.codec),
      `the video codec is ${seen.codec}, not ${rule.codecs?.join(" or ")}`,
    ],
  ];
  const hit = checks.find(([, broken]) => broken);
  return hit ? { rule: hit[0], message: hit[2] } : null;
}

/**
 * The parts of a multi-request upload, in order, as one file. A part a sandbox's saved state left out
 * (null: bytes are not persisted past a size) is skipped: what can be read is read, the rest is unknown.
 */
export function joinParts(parts: Map<number, Uint8Array | null>): Uint8Array {
  const present = [...parts.entries()].sort(([a], [b]) => a - b).flatMap(([, p]) => (p ? [p] : []));
  return Buffer.concat(present);
}
