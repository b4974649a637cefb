import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join, normalize } from "node:path";

/** Reads a byte stream in pieces of exactly the size asked for. */
class Bytes {
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** The next `n` bytes, or fewer at the end of the stream. */
  async take(n: number): Promise<Uint8Array> {
    while (this.buffered < n) {
      const { done, value } = await this.reader.read();
      if (done) break;
      this.chunks.push(value);
      this.buffered += value.length;
    }
    const out = new Uint8Array(Math.min(n, this.buffered));
    let filled = 0;
    while (filled < out.length) {
      const head = this.chunks[0]!;
      const part = head.subarray(0, out.length - filled);
      out.set(part, filled);
      filled += part.length;
      if (part.length === head.length) this.chunks.shift();
      else this.chunks[0] = head.subarray(part.length);
    }
    this.buffered -= out.length;
    return out;
  }
}

/** Files are written in pieces of at most this much, so a large file never sits whole in memory. */
const PIECE = 1 << 20;

/**
 * Unpacks a gzipped ustar archive of directories and regular files (what PGlite's dumpDataDir writes)
 * under `dir`. Native file writes take a fraction of what PGlite's own loadDataDir needs to restore the
 * same tarball through its virtual file system. Streamed: the seed unpacks to ≈ 40 MB, and holding it
 * whole left a few MB of the server's idle memory behind (and its peak 40 MB higher).
 */
export async function untarGz(archive: ReadableStream<Uint8Array>, dir: string): Promise<void> {
  const bytes = new Bytes(
    archive.pipeThrough(new DecompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>).getReader(),
  );
  const text = new TextDecoder();
  for (;;) {
    const header = await bytes.take(512);
    const field = (at: number, length: number) => text.decode(header.subarray(at, at + length)).replace(/\0.*$/s, "");
    const name = header.length === 512 ? field(0, 100) : "";
    if (!name) break;
    const prefix = field(345, 155);
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    const path = normalize(`/${prefix ? `${prefix}/` : ""}${name}`);
    const target = join(dir, path);
    if (type === "5") mkdirSync(target, { recursive: true, mode: 0o700 });
    else if (type === "0" || type === "") await writeEntry(bytes, target, size);
    else throw new Error(`unexpected entry type '${type}' for ${path} in the data directory archive`);
    await bytes.take(Math.ceil(size / 512) * 512 - size);
  }
}

async function writeEntry(bytes: Bytes, target: string, size: number): Promise<void> {
  // The database files are for this user alone, whatever the archive or the umask says.
  const fd = openSync(target, "w", 0o600);
  try {
    for (let left = size; left > 0;) {
      const piece = await bytes.take(Math.min(left, PIECE));
      if (piece.length === 0) throw new Error(`the data directory archive ends inside ${target}`);
      writeSync(fd, piece);
      left -= piece.length;
    }
  } finally {
    closeSync(fd);
  }
}
