import { chmodSync, existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log.ts";

/**
 * DATA_DIR holds the embedded database, the generated SECRET_KEY, the media and the admin socket: nothing
 * in it is for other users of the machine. Crier creates it (and everything in it) private, 0700 and
 * 0600 (main.ts sets the umask to 077; the places that create directories say 0700 themselves). One that
 * already exists is the operator's: Crier leaves its mode alone and warns when others can read it.
 */
export function warnIfDataDirOpen(dataDir: string, log: Logger): void {
  if (!existsSync(dataDir)) return;
  const mode = statSync(dataDir).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  log.warn(
    `DATA_DIR ${dataDir} can be read by other users of this machine (mode ${mode.toString(8)}): it holds the database and SECRET_KEY; run chmod 700 on it`,
    { data_dir: dataDir, mode: mode.toString(8) },
  );
}

/**
 * Takes group and world bits off everything under `dir`. PGlite's file system layer creates some files
 * (the relation cache's pg_internal.init) 0644 whatever the process umask; the directory being 0700
 * already keeps them from others, and this keeps the files themselves private too.
 */
export function makeTreePrivate(dir: string): void {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const mode = statSync(path).mode & 0o777;
    if (mode & 0o077) chmodSync(path, mode & 0o700);
  }
}
