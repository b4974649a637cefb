import { deflateSync } from "node:zlib";

/** Small but well-formed media files built in memory, so the tests need no binary fixtures. */

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

/** A baseline JPEG header (SOI, JFIF APP0, SOF0 with the size) followed by filler scan bytes. */
export function makeJpeg(width: number, height: number, filler = 2048): Uint8Array<ArrayBuffer> {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
  ]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
  ]);
  const body = Buffer.alloc(filler, 0x5a);
  return Uint8Array.from(Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, body, Buffer.from([0xff, 0xd9])]));
}

export function makeGif(width: number, height: number): Uint8Array<ArrayBuffer> {
  const b = Buffer.alloc(64, 0);
  b.write("GIF89a", 0, "ascii");
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  b[63] = 0x3b;
  return Uint8Array.from(b);
}

/** An ISO base media file start (ftyp isom) followed by an mdat box of `size` pseudo-random bytes. */
export function makeMp4(size: number): Uint8Array<ArrayBuffer> {
  const ftyp = Buffer.from([0, 0, 0, 0x18, ...Buffer.from("ftypisom"), 0, 0, 2, 0, ...Buffer.from("isomiso2")]);
  const mdatHeader = Buffer.alloc(8);
  mdatHeader.writeUInt32BE(size + 8);
  mdatHeader.write("mdat", 4, "ascii");
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 2654435761) >>> 24;
  return Uint8Array.from(Buffer.concat([ftyp, mdatHeader, data]));
}

/** The EBML header of a WebM file plus filler. */
export function makeWebm(filler = 512): Uint8Array<ArrayBuffer> {
  const ebml = Buffer.from([
    0x1a,
    0x45,
    0xdf,
    0xa3,
    0x9f,
    0x42,
    0x86,
    0x81,
    0x01,
    0x42,
    0xf7,
    0x81,
    0x01,
    0x42,
    0xf2,
    0x81,
    0x04,
    0x42,
    0xf3,
    0x81,
    0x08,
    0x42,
    0x82,
    0x84,
    ...Buffer.from("webm"),
    0x42,
    0x87,
    0x81,
    0x04,
    0x42,
    0x85,
    0x81,
    0x02,
  ]);
  return Uint8Array.from(Buffer.concat([ebml, Buffer.alloc(filler, 0x11)]));
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
