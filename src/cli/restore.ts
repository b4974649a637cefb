import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname, join, normalize } from "node:path";
import { sql } from "drizzle-orm";
import { openPglite, openPostgres, type Db } from "../db/client.ts";
import { decryptJson } from "../db/crypto.ts";
import { makeTreePrivate } from "../db/data-dir.ts";
import { latestMigration, migrationAfter, pgliteState } from "../db/snapshot.ts";
import { readTar } from "../db/tar.ts";
import { untarGz } from "../db/untar.ts";
import { acquireLock } from "./lock.ts";
import { BACKUP_FORMAT, DUMP_ENTRY, MANIFEST_ENTRY, MEDIA_PREFIX, type Manifest } from "./backup.ts";

/** A restore that must not go on: said in one line, nothing in DATA_DIR changed. */
export class RestoreRefused extends Error {}

export interface RestoreOptions {
  file: string;
  dataDir: string;
  databaseUrl?: string;
  /** SECRET_KEY or DATA_DIR/secret.key; null when neither is set. */
  secretKey: Buffer | null;
  force: boolean;
  /** Called with the bytes of the archive read so far (progress). */
  onRead?: (bytes: number) => void;
}

export interface RestoreSummary {
  manifest: Manifest;
  /** Whether a stored credential was opened with the key (false: the database holds none). */
  keyChecked: boolean;
}

/** What may already be in an "empty" DATA_DIR: the key the restore needs, and a lock file left behind. */
const ALLOWED_IN_EMPTY = new Set(["secret.key", "crier.lock"]);

function isEmptyDataDir(dataDir: string): boolean {
  return !existsSync(dataDir) || readdirSync(dataDir).every((name) => ALLOWED_IN_EMPTY.has(name));
}

/** A media entry's path inside media/, refusing anything that would land outside it. */
function mediaTarget(stage: string, path: string): string {
  const inner = path.slice(MEDIA_PREFIX.length);
  const clean = normalize(inner);
  if (!inner || clean.startsWith("..") || clean.startsWith("/") || clean !== inner)
    throw new RestoreRefused(`the archive holds an unsafe path: ${path}`);
  return join(stage, "media", clean);
}

/** Reads the archive into `stage`, checking each file's checksum against the manifest at the end. */
async function unpack(opts: RestoreOptions, stage: string): Promise<Manifest> {
  const seen = new Map<string, { size: number; sha256: string }>();
  let manifestText: string | undefined;
  let read = 0;
  const source = Bun.file(opts.file).stream();
  for await (const entry of readTar(source)) {
    if (entry.path === MANIFEST_ENTRY) {
      if (entry.size > 64 << 20) throw new RestoreRefused("the archive's manifest is implausibly large");
      manifestText = "";
      const decoder = new TextDecoder();
      for await (const piece of entry.body) manifestText += decoder.decode(piece, { stream: true });
      continue;
    }
    let target: string;
    if (entry.path === DUMP_ENTRY) target = join(stage, DUMP_ENTRY);
    else if (entry.path.startsWith(MEDIA_PREFIX)) target = mediaTarget(stage, entry.path);
    else throw new RestoreRefused(`the archive holds an unexpected entry ${entry.path}: it is not a Crier backup`);
    if (seen.has(entry.path)) throw new RestoreRefused(`the archive holds ${entry.path} twice`);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    const hash = createHash("sha256");
    const fh = await open(target, "wx", 0o600);
    try {
      for await (const piece of entry.body) {
        hash.update(piece);
        await fh.write(piece);
        read += piece.length;
        opts.onRead?.(read);
      }
    } finally {
      await fh.close();
    }
    seen.set(entry.path, { size: entry.size, sha256: hash.digest("hex") });
  }
  if (manifestText === undefined)
    throw new RestoreRefused("the archive has no manifest.json: it is not a Crier backup");
  let manifest: Manifest;
  try {
    manifest = JSON.parse(manifestText) as Manifest;
  } catch {
    throw new RestoreRefused("the archive's manifest.json is not JSON");
  }
  if (manifest.format !== BACKUP_FORMAT)
    throw new RestoreRefused(`the archive's format is ${manifest.format}, this Crier reads ${BACKUP_FORMAT}`);
  for (const f of manifest.files) {
    const got = seen.get(f.path);
    if (!got) throw new RestoreRefused(`the archive lacks ${f.path}, which its manifest lists: it is incomplete`);
    if (got.size !== f.size || got.sha256 !== f.sha256)
      throw new RestoreRefused(`${f.path} in the archive does not match its checksum in the manifest: it is damaged`);
    seen.delete(f.path);
  }
  if (seen.size) throw new RestoreRefused(`the archive holds ${[...seen.keys()][0]}, which its manifest does not list`);
  return manifest;
}

/** One stored ciphertext: an account's credentials, else a webhook's signing secrets. */
async function sampleCredential(db: Db): Promise<string | null> {
  const [account] = await db.rows<{ c: string }>(
    sql`select credentials as c from accounts where credentials is not null limit 1`,
  );
  if (account) return account.c;
  const [webhook] = await db.rows<{ c: string }>(sql`select secrets as c from webhook_endpoints limit 1`);
  return webhook?.c ?? null;
}

/** Refuses unless the configured key opens a stored credential; false when there is none to try. */
async function checkKey(db: Db, key: Buffer | null): Promise<boolean> {
  const sample = await sampleCredential(db);
  if (sample === null) return false;
  if (!key)
    throw new RestoreRefused(
      "the backup holds encrypted credentials, and neither SECRET_KEY nor DATA_DIR/secret.key is set: set SECRET_KEY to the key of the server that made the backup, or copy its secret.key into DATA_DIR",
    );
  try {
    decryptJson(key, sample);
  } catch {
    throw new RestoreRefused(
      "the configured SECRET_KEY does not open the credentials in the backup: use the key of the server that made it (SECRET_KEY, or its DATA_DIR/secret.key)",
    );
  }
  return true;
}

/** Opens the staged embedded database and checks it holds what the manifest says, and that the key opens it. */
async function verifyDatabase(dir: string, manifest: Manifest, key: Buffer | null): Promise<boolean> {
  const db = await openPglite(dir);
  try {
    const state = await pgliteState(db);
    if (state.migration !== manifest.migration)
      throw new RestoreRefused(
        `the restored database is at migration ${state.migration}, the manifest says ${manifest.migration}`,
      );
    for (const [table, count] of Object.entries(manifest.counts))
      if (state.counts[table] !== count)
        throw new RestoreRefused(
          `the restored table ${table} has ${state.counts[table]} rows, the manifest says ${count}`,
        );
    return await checkKey(db, key);
  } finally {
    await db.close();
  }
}

/** The key check on PostgreSQL, where the database comes back through pg_restore; skipped when not reachable yet. */
async function verifyPostgres(url: string, key: Buffer | null): Promise<boolean> {
  const db = openPostgres(url, 1);
  try {
    return await checkKey(db, key);
  } catch (e) {
    if (e instanceof RestoreRefused) throw e;
    return false;
  } finally {
    await db.close();
  }
}

/**
 * Restores an archive of `crier backup` into DATA_DIR: unpacked and checked beside the data (in
 * DATA_DIR/.restore-<pid>), then renamed into place, media first and the database last, so a restore
 * refused or cut short leaves DATA_DIR as it was.
 */
export async function restoreBackup(opts: RestoreOptions): Promise<RestoreSummary> {
  if (!existsSync(opts.file) || !statSync(opts.file).isFile()) throw new RestoreRefused(`no file ${opts.file}`);
  if (!opts.force && !isEmptyDataDir(opts.dataDir))
    throw new RestoreRefused(
      `DATA_DIR ${opts.dataDir} is not empty; restore into an empty one, or add --force to replace its database and media`,
    );
  const existed = existsSync(opts.dataDir);
  const release = acquireLock(opts.dataDir);
  const stage = join(opts.dataDir, `.restore-${process.pid}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { mode: 0o700 });
  let finished = false;
  try {
    const manifest = await unpack(opts, stage);
    if (manifest.migration && migrationAfter(manifest.migration, latestMigration()))
      throw new RestoreRefused(
        `the backup's database is at migration ${manifest.migration}, newer than this Crier (${latestMigration()}): restore it with Crier ${manifest.crier_version} or later`,
      );
    let keyChecked: boolean;
    if (manifest.database === "pglite") {
      if (opts.databaseUrl)
        throw new RestoreRefused(
          "the backup holds an embedded database, and DATABASE_URL is set: unset it to restore into DATA_DIR",
        );
      await untarGz(Bun.file(join(stage, DUMP_ENTRY)).stream(), join(stage, "pglite"));
      rmSync(join(stage, DUMP_ENTRY));
      keyChecked = await verifyDatabase(join(stage, "pglite"), manifest, opts.secretKey);
    } else {
      if (!opts.databaseUrl)
        throw new RestoreRefused(
          "the backup was made on PostgreSQL and holds the media files only: restore the database with pg_restore and set DATABASE_URL to it",
        );
      keyChecked = await verifyPostgres(opts.databaseUrl, opts.secretKey);
    }
    // PGlite's runtime files for the staged database are the server's to recreate; they are not data.
    rmSync(join(stage, "pglite-runtime"), { recursive: true, force: true });
    const replaced = join(stage, "replaced");
    mkdirSync(replaced, { mode: 0o700 });
    for (const name of ["media", "pglite"]) {
      const from = join(stage, name);
      const into = join(opts.dataDir, name);
      if (!existsSync(from) && name === "pglite") continue;
      if (existsSync(into)) renameSync(into, join(replaced, name));
      if (existsSync(from)) renameSync(from, into);
      else mkdirSync(into, { mode: 0o700 });
    }
    makeTreePrivate(opts.dataDir);
    finished = true;
    return { manifest, keyChecked };
  } finally {
    rmSync(stage, { recursive: true, force: true });
    release();
    // A DATA_DIR this restore created (for its lock) goes again when it is refused: nothing is left behind.
    if (!finished && !existed) rmSync(opts.dataDir, { recursive: true, force: true });
  }
}
