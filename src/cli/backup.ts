import { createHash, type Hash } from "node:crypto";
import { chmodSync, existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import { pgliteSnapshot, type DatabaseState } from "../db/snapshot.ts";
import { TarWriter } from "../db/tar.ts";
import pkg from "../../package.json" with { type: "json" };

/**
 * `crier backup`: one plain tar holding the embedded database's files (pglite.tar.gz, as PGlite's
 * dumpDataDir writes them), the media files under media/, and manifest.json last (it carries every
 * other entry's checksum, known only once the entry is written). The SECRET_KEY is never in it.
 */

export const BACKUP_FORMAT = "crier-backup/1";
export const DUMP_ENTRY = "pglite.tar.gz";
export const MANIFEST_ENTRY = "manifest.json";
export const MEDIA_PREFIX = "media/";

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof BACKUP_FORMAT;
  crier_version: string;
  created_at: string;
  /** pglite: the archive holds the database; postgres: media only (the database is backed up with pg_dump). */
  database: "pglite" | "postgres";
  migration: string | null;
  counts: Record<string, number>;
  /** media kept in S3 are not in the archive. */
  media: "files" | "s3";
  files: ManifestFile[];
  secret_key: string;
}

export interface BackupSummary {
  file: string;
  bytes: number;
  database: Manifest["database"];
  migration: string | null;
  counts: Record<string, number>;
  media_files: number;
  media_bytes: number;
  /** How long the API and the engine waited for the database's files to be copied. */
  paused_ms: number;
}

/** Where a backup is written until it is complete; the CLI watches its size to show progress. */
export const partialPath = (to: string) => `${to}.partial`;

const PIECE = 1 << 20;

/** A file's bytes in pieces, hashed on the way; the buffer is reused, so each piece is consumed before the next. */
async function* filePieces(fh: FileHandle, size: number, hash: Hash): AsyncGenerator<Uint8Array> {
  const buffer = new Uint8Array(Math.min(PIECE, Math.max(size, 1)));
  for (let at = 0; at < size;) {
    const { bytesRead } = await fh.read(buffer, 0, Math.min(buffer.length, size - at), at);
    if (bytesRead === 0) return;
    const piece = buffer.subarray(0, bytesRead);
    hash.update(piece);
    yield piece;
    at += bytesRead;
  }
}

async function* blobPieces(blob: Blob, hash: Hash): AsyncGenerator<Uint8Array> {
  for await (const piece of blob.stream() as unknown as AsyncIterable<Uint8Array>) {
    hash.update(piece);
    yield piece;
  }
}

/** The media files under DATA_DIR/media, without uploads still being received (.partial). */
function mediaFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .filter((path) => !relative(root, path).split(sep).includes(".partial"))
    .sort();
}

/**
 * Writes the backup of `db` (null on PostgreSQL, which pg_dump backs up) and DATA_DIR/media to `to`,
 * through a partial file renamed into place once whole. Runs inside `crier serve` (through the admin
 * socket) or in the CLI on a data directory no server holds.
 */
export async function writeBackup(ctx: { db: Db | null; config: Config }, to: string): Promise<BackupSummary> {
  const db = ctx.db?.kind === "pglite" ? ctx.db : null;
  const partial = partialPath(to);
  const fh = await open(partial, "w", 0o600);
  const tar = new TarWriter(fh);
  const files: ManifestFile[] = [];
  let state: DatabaseState = { migration: null, counts: {} };
  let pausedMs = 0;
  let mediaBytes = 0;
  try {
    if (db) {
      const started = performance.now();
      const snapshot = await pgliteSnapshot(db);
      pausedMs = Math.round(performance.now() - started);
      state = snapshot.state;
      // Compressed outside the database's lock; the size must be known before the tar header is written.
      const gz = await new Response(
        snapshot.dump
          .stream()
          .pipeThrough(new CompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>),
      ).blob();
      const hash = createHash("sha256");
      await tar.add(DUMP_ENTRY, gz.size, blobPieces(gz, hash));
      files.push({ path: DUMP_ENTRY, size: gz.size, sha256: hash.digest("hex") });
    }
    if (!ctx.config.s3) {
      const root = join(ctx.config.dataDir, "media");
      for (const path of mediaFiles(root)) {
        let media: FileHandle;
        try {
          media = await open(path, "r");
        } catch (e) {
          // Removed since the listing (an expired upload cleaned up): it is not part of the backup.
          if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
          throw e;
        }
        try {
          const { size, mtime } = await media.stat();
          const hash = createHash("sha256");
          const name = MEDIA_PREFIX + relative(root, path).split(sep).join("/");
          await tar.add(name, size, filePieces(media, size, hash), mtime);
          files.push({ path: name, size, sha256: hash.digest("hex") });
          mediaBytes += size;
        } finally {
          await media.close();
        }
      }
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      crier_version: pkg.version,
      created_at: new Date().toISOString(),
      database: db ? "pglite" : "postgres",
      migration: state.migration,
      counts: state.counts,
      media: ctx.config.s3 ? "s3" : "files",
      files,
      secret_key:
        "not included: a restore needs the same SECRET_KEY (or DATA_DIR/secret.key) as the server that made this backup",
    };
    const text = new TextEncoder().encode(JSON.stringify(manifest, null, 2) + "\n");
    await tar.add(MANIFEST_ENTRY, text.length, [text]);
    await tar.end();
    await fh.sync();
    await fh.close();
    chmodSync(partial, 0o600);
    renameSync(partial, to);
  } catch (e) {
    await fh.close().catch(() => {});
    rmSync(partial, { force: true });
    throw e;
  }
  const mediaFilesCount = files.filter((f) => f.path.startsWith(MEDIA_PREFIX)).length;
  return {
    file: to,
    bytes: tar.bytesWritten,
    database: db ? "pglite" : "postgres",
    migration: state.migration,
    counts: state.counts,
    media_files: mediaFilesCount,
    media_bytes: mediaBytes,
    paused_ms: pausedMs,
  };
}
