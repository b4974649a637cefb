import type { MediaContentType } from "../../storage/keys.ts";

/** How many first bytes are kept for sniffing and image sizes (JPEG EXIF blocks can be tens of KB). */
export const SNIFF_BYTES = 256 * 1024;

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

const QUICKTIME_ATOMS = ["moov", "mdat", "wide", "free", "skip", "pnot"];

/**
 * True when the first bytes are of the declared type. MP4 and QuickTime are both ISO base media files
 * and cameras label them loosely, so either accepts the other's `ftyp` brands; WebM must be EBML with
 * the webm doctype.
 */
export function matchesType(head: Uint8Array, contentType: MediaContentType): boolean {
  switch (contentType) {
    case "image/jpeg":
      return head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
    case "image/png":
      return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => head[i] === v);
    case "image/gif":
      return ascii(head, 0, "GIF87a") || ascii(head, 0, "GIF89a");
    case "image/webp":
      return ascii(head, 0, "RIFF") && ascii(head, 8, "WEBP");
    case "video/mp4":
      return ascii(head, 4, "ftyp");
    case "video/quicktime":
      return ascii(head, 4, "ftyp") || QUICKTIME_ATOMS.some((a) => ascii(head, 4, a));
    case "video/webm": {
      if (!(head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3)) return false;
      const start = head.subarray(0, 64);
      return Buffer.from(start).includes("webm");
    }
  }
}

export interface Dimensions {
  width: number;
  height: number;
}

/** Width and height read from an image's header, or null when they are not in the first bytes. */
export function imageDimensions(head: Uint8Array, contentType: MediaContentType): Dimensions | null {
  const b = Buffer.from(head.buffer, head.byteOffset, head.byteLength);
  const ok = (d: Dimensions) => (d.width > 0 && d.height > 0 ? d : null);
  try {
    switch (contentType) {
      case "image/png":
        return ascii(head, 12, "IHDR") ? ok({ width: b.readUInt32BE(16), height: b.readUInt32BE(20) }) : null;
      case "image/gif":
        return ok({ width: b.readUInt16LE(6), height: b.readUInt16LE(8) });
      case "image/webp":
        return webpDimensions(b);
      case "image/jpeg":
        return jpegDimensions(b);
      default:
        return null;
    }
  } catch {
    // A header cut short by the sniff window: the size stays unknown.
    return null;
  }
}

function webpDimensions(b: Buffer): Dimensions | null {
  if (ascii(b, 12, "VP8 ")) return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (ascii(b, 12, "VP8L")) {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (ascii(b, 12, "VP8X")) return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return null;
}

function jpegDimensions(b: Buffer): Dimensions | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    } // fill byte
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    // Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const d = { height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
      return d.width > 0 && d.height > 0 ? d : null;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}
