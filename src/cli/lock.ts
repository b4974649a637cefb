import { closeSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { libc } from "../os/libc.ts";

/** PGlite is one process per data dir: whoever holds this file's lock owns the database. */
export class DataDirLocked extends Error {
  constructor(
    readonly pid: number,
    dataDir: string,
  ) {
    super(
      `another Crier process (pid ${pid || "unknown"}) is using the embedded database in ${dataDir}; stop it first, or use DATABASE_URL for several copies`,
    );
  }
}

export function lockPath(dataDir: string) {
  return join(dataDir, "crier.lock");
}

const LOCK_EX = 2;
const LOCK_NB = 4;

type Flock = (fd: number, op: number) => number;

/**
 * flock(2) from libc. The kernel drops the lock when its holder dies however it dies (kill -9, OOM), so a
 * restarted container that is PID 1 again never mistakes its predecessor's lock for a live one, which a
 * PID written in the file cannot tell. Bun has no flock API.
 */
function libcFlock(): Flock | null {
  const c = libc();
  return c ? (fd, op) => c.flock(fd, op) : null;
}

function pidIn(file: string): number {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch {
    return 0;
  }
}

/**
 * Takes the data-dir lock or throws DataDirLocked naming the holder's pid. The lock lives as long as the
 * returned release is not called and the process lives; the file itself stays (unlinking a flock'd file
 * lets a second taker lock a new inode while the first still runs).
 */
export function acquireLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = lockPath(dataDir);
  const lock = libcFlock();
  if (!lock) return acquireByPid(file, dataDir);
  const fd = openSync(file, "a+", 0o600);
  if (lock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd);
    throw new DataDirLocked(pidIn(file), dataDir);
  }
  ftruncateSync(fd, 0);
  writeSync(fd, String(process.pid));
  let released = false;
  return () => {
    if (released) return;
    released = true;
    // Closing the descriptor releases the lock; the stale pid left in the file is harmless.
    closeSync(fd);
  };
}

const heldByPid = new Set<string>();

/** Where flock cannot be loaded: a PID file, ignoring one that names this very process (PID 1 again). */
function acquireByPid(file: string, dataDir: string): () => void {
  const holder = pidIn(file);
  const ours = holder === process.pid && !heldByPid.has(file);
  if (holder && !ours && alive(holder)) throw new DataDirLocked(holder, dataDir);
  if (heldByPid.has(file)) throw new DataDirLocked(process.pid, dataDir);
  const fd = openSync(file, "w", 0o600);
  writeSync(fd, String(process.pid));
  closeSync(fd);
  heldByPid.add(file);
  return () => {
    heldByPid.delete(file);
  };
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
