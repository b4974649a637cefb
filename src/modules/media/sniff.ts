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

/** Image sizes are read from headers by the same code the emulators use to see what a platform receives. */
export { type Dimensions, imageDimensions } from "../../platform/emulator-media.ts";
