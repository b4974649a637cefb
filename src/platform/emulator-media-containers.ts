/**
 * How an emulator reads video containers (for src/platform/emulator-media.ts): MP4 and QuickTime by walking
 * their ISO-BMFF boxes (ftyp brand, mvhd duration, the video track's tkhd size, stsd codec, stts frames),
 * WebM and Matroska by their EBML elements (DocType, Segment Info duration, the video track's size and
 * codec). What a box cut short leaves unread stays unknown.
 */
import type { MediaSeen } from "./emulator-media.ts";

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0));

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);

// ---- MP4 / QuickTime (ISO base media file format) ------------------------------------------------

interface Box {
  type: string;
  /** Start and end of the box's payload (after its header). */
  start: number;
  end: number;
}

function* boxes(b: Uint8Array, start: number, end: number): Generator<Box> {
  const d = view(b);
  let at = start;
  while (at + 8 <= end) {
    let size = d.getUint32(at);
    const type = String.fromCharCode(b[at + 4], b[at + 5], b[at + 6], b[at + 7]);
    let header = 8;
    if (size === 1) {
      if (at + 16 > end) return;
      size = Number(d.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = end - at; // to the end of the file
    if (size < header) return;
    yield { type, start: at + header, end: Math.min(at + size, end) };
    at += size;
  }
}

const child = (b: Uint8Array, parent: Box, type: string) => {
  for (const x of boxes(b, parent.start, parent.end)) if (x.type === type) return x;
  return undefined;
};

/** mvhd/mdhd: [timescale, duration] for version 0 and 1 full boxes. */
function timing(b: Uint8Array, box: Box): [number, number] {
  const d = view(b);
  return b[box.start] === 1
    ? [d.getUint32(box.start + 20), Number(d.getBigUint64(box.start + 24))]
    : [d.getUint32(box.start + 12), d.getUint32(box.start + 16)];
}

export function readIsoMedia(b: Uint8Array): Partial<MediaSeen> {
  const d = view(b);
  const out: Partial<MediaSeen> = { mime: "video/mp4" };
  try {
    for (const box of boxes(b, 0, b.length)) {
      // A QuickTime brand ("qt  ") marks a .mov; anything else in ftyp is an MP4 family brand.
      if (box.type === "ftyp" && ascii(b, box.start, "qt  ")) out.mime = "video/quicktime";
      if (box.type !== "moov") continue;
      const mvhd = child(b, box, "mvhd");
      if (mvhd) {
        const [scale, duration] = timing(b, mvhd);
        if (scale > 0) out.duration = duration / scale;
      }
      for (const trak of boxes(b, box.start, box.end)) {
        if (trak.type !== "trak") continue;
        const mdia = child(b, trak, "mdia");
        const hdlr = mdia && child(b, mdia, "hdlr");
        if (!hdlr || !ascii(b, hdlr.start + 8, "vide") || out.width != null) continue;
        const tkhd = child(b, trak, "tkhd");
        if (tkhd) {
          // Version/flags and the times (24 or 36 bytes), then reserved 8, layer 2, group 2, volume 2,
          // reserved 2, the matrix (36) and width, height (16.16 fixed point).
          const matrix = tkhd.start + (b[tkhd.start] === 1 ? 36 : 24) + 16;
          let width = d.getUint32(matrix + 36) / 65536;
          let height = d.getUint32(matrix + 40) / 65536;
          // A matrix whose a is 0 turns the picture a quarter: the platform shows it the other way up.
          if (d.getInt32(matrix) === 0 && d.getInt32(matrix + 4) !== 0) [width, height] = [height, width];
          out.width = Math.round(width);
          out.height = Math.round(height);
        }
        const mdhd = child(b, mdia!, "mdhd");
        const minf = child(b, mdia!, "minf");
        const stbl = minf && child(b, minf, "stbl");
        const stsd = stbl && child(b, stbl, "stsd");
        if (stsd) out.codec = String.fromCharCode(...b.subarray(stsd.start + 12, stsd.start + 16));
        const stts = stbl && child(b, stbl, "stts");
        if (mdhd && stts) {
          const [scale, duration] = timing(b, mdhd);
          let frames = 0;
          const entries = d.getUint32(stts.start + 4);
          for (let i = 0; i < entries; i++) frames += d.getUint32(stts.start + 8 + i * 8);
          out.frameRate = duration > 0 ? Math.round((frames * scale * 100) / duration) / 100 : null;
        }
      }
    }
  } catch {
    // A box cut short: what was read so far stands.
  }
  return out;
}

// ---- WebM / Matroska (EBML) ----------------------------------------------------------------------

const EBML = { header: 0x1a45dfa3, docType: 0x4282, segment: 0x18538067, info: 0x1549a966, tracks: 0x1654ae6b };
const MKV = {
  timecodeScale: 0x2ad7b1,
  duration: 0x4489,
  trackEntry: 0xae,
  trackType: 0x83,
  codecId: 0x86,
  video: 0xe0,
  pixelWidth: 0xb0,
  pixelHeight: 0xba,
  cluster: 0x1f43b675,
};

interface Element {
  id: number;
  start: number;
  end: number;
}

/** A variable-length integer: its value (the length marker kept for IDs, dropped for sizes) and length. */
function vint(b: Uint8Array, at: number, keepMarker: boolean): [number, number] {
  const first = b[at];
  let len = 1;
  while (len <= 8 && !(first & (0x80 >> (len - 1)))) len++;
  if (len > 8) throw new Error("bad EBML integer");
  let value = keepMarker ? first : first & (0xff >> len);
  let allOnes = value === 0xff >> len;
  for (let i = 1; i < len; i++) {
    value = value * 256 + b[at + i];
    allOnes &&= b[at + i] === 0xff;
  }
  // A size of all ones is "unknown" (a live-written segment): it runs to the end of its parent.
  return [!keepMarker && allOnes ? -1 : value, len];
}

function* elements(b: Uint8Array, start: number, end: number): Generator<Element> {
  let at = start;
  while (at < end) {
    const [id, idLen] = vint(b, at, true);
    const [size, sizeLen] = vint(b, at + idLen, false);
    const from = at + idLen + sizeLen;
    const to = size < 0 ? end : Math.min(from + size, end);
    yield { id, start: from, end: to };
    if (size < 0 && id !== MKV.cluster) {
      at = from; // an unknown-size master: its children follow directly
      continue;
    }
    at = to;
  }
}

const uint = (b: Uint8Array, e: Element) => b.subarray(e.start, e.end).reduce((n, x) => n * 256 + x, 0);
const text = (b: Uint8Array, e: Element) => String.fromCharCode(...b.subarray(e.start, e.end)).replace(/\0+$/, "");

export function readMatroska(b: Uint8Array): Partial<MediaSeen> {
  const out: Partial<MediaSeen> = { mime: "video/x-matroska" };
  try {
    for (const top of elements(b, 0, b.length)) {
      if (top.id === EBML.header) {
        for (const e of elements(b, top.start, top.end))
          if (e.id === EBML.docType) out.mime = text(b, e) === "webm" ? "video/webm" : "video/x-matroska";
      }
      if (top.id !== EBML.segment) continue;
      for (const sec of elements(b, top.start, top.end)) {
        if (sec.id === MKV.cluster) break; // the media itself: the headers are behind us
        if (sec.id === EBML.info) readInfo(b, sec, out);
        if (sec.id === EBML.tracks) readTracks(b, sec, out);
      }
    }
  } catch {
    // An element cut short: what was read so far stands.
  }
  return out;
}

function readInfo(b: Uint8Array, info: Element, out: Partial<MediaSeen>) {
  let scale = 1_000_000;
  let duration: number | null = null;
  const d = view(b);
  for (const e of elements(b, info.start, info.end)) {
    if (e.id === MKV.timecodeScale) scale = uint(b, e);
    if (e.id === MKV.duration) duration = e.end - e.start === 4 ? d.getFloat32(e.start) : d.getFloat64(e.start);
  }
  if (duration != null) out.duration = (duration * scale) / 1e9;
}

function readTracks(b: Uint8Array, tracks: Element, out: Partial<MediaSeen>) {
  for (const entry of elements(b, tracks.start, tracks.end)) {
    if (entry.id !== MKV.trackEntry) continue;
    let codec: string | null = null;
    let video: Element | null = null;
    for (const e of elements(b, entry.start, entry.end)) {
      if (e.id === MKV.codecId) codec = text(b, e);
      if (e.id === MKV.video) video = e;
    }
    if (!video || out.width != null) continue;
    out.codec = codec;
    for (const e of elements(b, video.start, video.end)) {
      if (e.id === MKV.pixelWidth) out.width = uint(b, e);
      if (e.id === MKV.pixelHeight) out.height = uint(b, e);
    }
  }
}
