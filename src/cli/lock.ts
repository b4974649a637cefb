import { openSync, closeSync, writeSync, readFileSync, unlinkSync, mkdirSync } from "node:fs";
import { join } from "node:path";

/** PGlite is one process per data dir: whoever holds this file owns the database. */
export class DataDirLocked extends Error {
  constructor(
    readonly pid: number,
    dataDir: string,
  ) {
    super(
      `another Crier process (pid ${pid}) is using the embedded database in ${dataDir}; stop it first, or use DATABASE_URL for several copies`,
    );
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

export function lockPath(dataDir: string) {
  return join(dataDir, "crier.lock");
}

export function lockHolder(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(lockPath(dataDir), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

/** Takes the data-dir lock or throws DataDirLocked; a lock left by a dead process is taken over. */
export function acquireLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = lockPath(dataDir);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
        } catch {
          /* already gone */
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const holder = lockHolder(dataDir);
      if (holder) throw new DataDirLocked(holder, dataDir);
      try {
        unlinkSync(file);
      } catch {
        /* raced with another taker */
      }
    }
  }
  throw new DataDirLocked(lockHolder(dataDir) ?? 0, dataDir);
}
