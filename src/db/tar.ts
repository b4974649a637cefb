import type { FileHandle } from "node:fs/promises";

/**
 * A plain (uncompressed) ustar archive of regular files, written and read as a stream: a backup holds the
 * media files, which may be many GB, so neither side ever holds a whole entry in memory.
 */

const BLOCK = 512;
const encoder = new TextEncoder();

/** ustar splits a long path into a prefix (155 bytes) and a name (100 bytes) at a slash. */
function splitPath(path: string): [prefix: string, name: string] {
  if (encoder.encode(path).length <= 100) return ["", path];
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (encoder.encode(prefix).length <= 155 && encoder.encode(name).length <= 100) return [prefix, name];
  }
  throw new Error(`path too long for the archive: ${path}`);
}

function header(path: string, size: number, mtime: Date): Uint8Array {
  const block = new Uint8Array(BLOCK);
  const put = (at: number, text: string) => block.set(encoder.encode(text), at);
  const octal = (at: number, length: number, n: number) => put(at, n.toString(8).padStart(length - 1, "0") + "\0");
  const [prefix, name] = splitPath(path);
  put(0, name);
  octal(100, 8, 0o600);
  octal(108, 8, 0);
  octal(116, 8, 0);
  // 11 octal digits hold sizes below 8 GiB; larger ones use the binary form GNU tar and others read.
  if (size < 8 ** 11) octal(124, 12, size);
  else {
    block[124] = 0x80;
    for (let i = 135, n = size; i > 124; i--, n = Math.floor(n / 256)) block[i] = n % 256;
  }
  octal(136, 12, Math.floor(mtime.getTime() / 1000));
  put(148, "        ");
  put(156, "0");
  put(257, "ustar\0");
  put(263, "00");
  put(345, prefix);
  let sum = 0;
  for (const b of block) sum += b;
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return block;
}

/** Appends entries to an open file; `end()` writes the two zero blocks that close the archive. */
export class TarWriter {
  private position = 0;
  constructor(private readonly file: FileHandle) {}

  get bytesWritten(): number {
    return this.position;
  }

  private async write(bytes: Uint8Array) {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.file.write(bytes, done, bytes.length - done);
      done += bytesWritten;
    }
    this.position += bytes.length;
  }

  /**
   * One regular file of exactly `size` bytes, taken from `pieces` as they come. The archive is
   * unreadable past an entry of the wrong size, so a source that gives more or fewer bytes throws.
   */
  async add(
    path: string,
    size: number,
    pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    mtime = new Date(),
  ): Promise<void> {
    await this.write(header(path, size, mtime));
    let written = 0;
    for await (const piece of pieces) {
      if (written + piece.length > size) throw new Error(`${path} grew while it was being archived`);
      await this.write(piece);
      written += piece.length;
    }
    if (written !== size) throw new Error(`${path} shrank while it was being archived`);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) await this.write(new Uint8Array(pad));
  }

  async end(): Promise<void> {
    await this.write(new Uint8Array(BLOCK * 2));
  }
}

/** Reads a byte stream in pieces of at most the size asked for. */
class Bytes {
  private head: Uint8Array = new Uint8Array(0);
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Up to `n` bytes (fewer only at the end of the stream, or when `exact` is false). */
  async take(n: number, exact = true): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let got = 0;
    while (got < n) {
      if (this.head.length === 0) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.head = value;
      }
      const part = this.head.subarray(0, n - got);
      this.head = this.head.subarray(part.length);
      parts.push(part);
      got += part.length;
      if (!exact) break;
    }
    if (parts.length === 1) return parts[0];
    const out = new Uint8Array(got);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

export interface TarEntry {
  path: string;
  size: number;
  /** The entry's bytes, in pieces; must be read to the end before the next entry is asked for. */
  body: AsyncIterable<Uint8Array>;
}

/** The regular-file entries of a plain ustar archive, in order. */
export async function* readTar(archive: ReadableStream<Uint8Array>): AsyncGenerator<TarEntry> {
  const bytes = new Bytes(archive.getReader());
  const text = new TextDecoder();
  for (;;) {
    const block = await bytes.take(BLOCK);
    if (block.length < BLOCK) throw new Error("the archive ends before its end marker: it is cut short");
    const field = (at: number, length: number) => text.decode(block.subarray(at, at + length)).replace(/\0.*$/s, "");
    const name = field(0, 100);
    if (!name) return;
    // The checksum counts its own eight bytes as spaces.
    let stored = 8 * 32;
    for (let i = 0; i < BLOCK; i++) if (i < 148 || i >= 156) stored += block[i];
    if (Number.parseInt(field(148, 8).trim(), 8) !== stored) throw new Error("the archive is damaged (bad header)");
    const prefix = field(345, 155);
    let size = 0;
    if (block[124] & 0x80) for (let i = 125; i < 136; i++) size = size * 256 + block[i];
    else size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    if (type !== "0" && type !== "") throw new Error(`unexpected entry type '${type}' in the archive`);
    let left = size;
    const body = async function* () {
      while (left > 0) {
        const piece = await bytes.take(Math.min(left, 1 << 20), false);
        if (piece.length === 0) throw new Error("the archive ends inside an entry: it is cut short");
        left -= piece.length;
        yield piece;
      }
    };
    yield { path: prefix ? `${prefix}/${name}` : name, size, body: body() };
    // Whatever the consumer left unread is skipped, so one bad entry does not desynchronise the rest.
    for await (const _ of body());
    await bytes.take((BLOCK - (size % BLOCK)) % BLOCK);
  }
}
