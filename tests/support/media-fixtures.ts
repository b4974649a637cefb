import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { deflateSync } from "node:zlib";

/**
 * Small real media files, so the tests need no binary fixtures: images built in memory, video made by
 * ffmpeg (installed by .ci/run). Every make* file is decodable (Crier probes uploads and refuses what it
 * cannot read); the fake* ones only start like their type, for code that never opens the file.
 */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Uint8Array) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type: string, data: Buffer) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A valid RGB PNG of the given size with noisy pixels (so it does not compress to nothing). */
export function makePng(width: number, height: number): Uint8Array<ArrayBuffer> {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < raw.length; i++) raw[i] = i % (width * 3 + 1) === 0 ? 0 : (i * 7919) & 0xff;
  return Uint8Array.from(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk("IHDR", ihdr),
      pngChunk("IDAT", deflateSync(raw)),
      pngChunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

/** A Huffman table (DHT segment) with one symbol, coded as the single bit 0. */
function oneSymbolTable(tableClass: number, symbol: number) {
  const counts = Buffer.alloc(16);
  counts[0] = 1;
  return Buffer.concat([Buffer.from([0xff, 0xc4, 0x00, 0x14, (tableClass << 4) | 0]), counts, Buffer.from([symbol])]);
}

/**
 * A real baseline JPEG of the given size (mid-grey, one component), decodable by any reader, with
 * `filler` bytes of comment segments (COM) so a test can make it as large as it needs. Every 8×8 block
 * has a DC difference of 0 and no AC terms, so with one-symbol Huffman tables each block is two 0 bits.
 */
export function makeJpeg(width: number, height: number, filler = 2048): Uint8Array<ArrayBuffer> {
  const dqt = Buffer.concat([Buffer.from([0xff, 0xdb, 0x00, 0x43, 0x00]), Buffer.alloc(64, 1)]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x0b,
    8,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    1,
    1,
    0x11,
    0,
  ]);
  const sos = Buffer.from([0xff, 0xda, 0x00, 0x08, 1, 1, 0x00, 0, 63, 0]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  // Two 0 bits a block, the last byte padded with 1 bits (never a whole 0xff: no stuffing needed).
  const scan = Buffer.alloc(Math.ceil((blocks * 2) / 8));
  const used = (blocks * 2) % 8;
  if (used) scan[scan.length - 1] = 0xff >> used;
  const comments: Buffer[] = [];
  for (let left = filler; left > 0;) {
    const n = Math.min(Math.max(left - 4, 0), 65533);
    const seg = Buffer.alloc(n + 4, 0x5a);
    seg.set([0xff, 0xfe, (n + 2) >> 8, (n + 2) & 0xff]);
    comments.push(seg);
    left -= n + 4;
  }
  return Uint8Array.from(
    Buffer.concat([
      Buffer.from([0xff, 0xd8]),
      ...comments,
      dqt,
      sof,
      oneSymbolTable(0, 0x00),
      oneSymbolTable(1, 0x00),
      sos,
      scan,
      Buffer.from([0xff, 0xd9]),
    ]),
  );
}

/**
 * A real one-frame GIF of one colour. Every pixel is written as a clear code followed by the pixel, so
 * the LZW codes stay 3 bits wide and no dictionary is needed.
 */
export function makeGif(width: number, height: number): Uint8Array<ArrayBuffer> {
  const head = Buffer.alloc(13 + 6 + 10);
  head.write("GIF89a", 0, "ascii");
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  head[10] = 0x80; // a global colour table of two entries
  head.set([30, 120, 200, 255, 255, 255], 13);
  head[19] = 0x2c; // image descriptor at 0,0, full size, no local table
  head.writeUInt16LE(width, 24);
  head.writeUInt16LE(height, 26);
  const codes: number[] = [];
  for (let i = 0; i < width * height; i++) codes.push(4, 0);
  codes.push(5);
  const packed: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const code of codes) {
    acc |= code << bits;
    bits += 3;
    while (bits >= 8) {
      packed.push(acc & 0xff);
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits) packed.push(acc & 0xff);
  const blocks: number[] = [2];
  for (let i = 0; i < packed.length; i += 255) {
    const part = packed.slice(i, i + 255);
    blocks.push(part.length, ...part);
  }
  blocks.push(0, 0x3b);
  return Uint8Array.from(Buffer.concat([head, Buffer.from(blocks)]));
}

const videoCache = new Map<string, Buffer>();

/** A small real video (a test pattern, half a second, no sound) made once per process by ffmpeg. */
function smallVideo(container: "mp4" | "webm"): Buffer {
  let bytes = videoCache.get(container);
  if (!bytes) {
    const codec =
      container === "mp4"
        ? ["-c:v", "libx264", "-preset", "ultrafast"]
        : ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8"];
    const file = join(mkdtempSync(join(tmpdir(), "crier-fixture-")), `small.${container}`);
    const args = [
      "-v",
      "error",
      "-f",
      "lavfi",
      "-i",
      "testsrc=size=64x48:rate=10",
      "-t",
      "0.5",
      "-pix_fmt",
      "yuv420p",
      ...codec,
    ];
    const r = spawnSync("ffmpeg", [...args, file], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ffmpeg could not make a ${container}: ${r.stderr || r.error}`);
    bytes = readFileSync(file);
    rmSync(dirname(file), { recursive: true, force: true });
    videoCache.set(container, bytes);
  }
  return bytes;
}

/**
 * A real MP4 (64×48, half a second, H.264; made by ffmpeg) of `size + 32` bytes, padded with a trailing
 * `free` box, which players skip; never smaller than the video itself.
 */
export function makeMp4(size: number): Uint8Array<ArrayBuffer> {
  const video = smallVideo("mp4");
  const pad = size + 32 - video.length;
  if (pad < 8) return Uint8Array.from(video);
  const free = Buffer.alloc(pad);
  free.writeUInt32BE(pad);
  free.write("free", 4, "ascii");
  for (let i = 8; i < pad; i++) free[i] = (i * 2654435761) >>> 24;
  return Uint8Array.from(Buffer.concat([video, free]));
}

/** A real WebM (64×48, half a second, VP9; made by ffmpeg). */
export function makeWebm(): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(smallVideo("webm"));
}

/** Bytes of a given size that start like an MP4 file (an ftyp box), as the video services check. */
export function fakeMp4(size: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(size);
  b.set([0, 0, 0, 0x18, ...new TextEncoder().encode("ftypmp42")]);
  return b;
}

/** Bytes of a given size that start like a JPEG file (SOI and APP0 markers), as type checks read them. */
export function fakeImage(size: number): Uint8Array<ArrayBuffer> {
  const b = new Uint8Array(size);
  b.set([0xff, 0xd8, 0xff, 0xe0]);
  return b;
}
