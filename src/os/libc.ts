/**
 * The libc calls Crier makes through bun:ffi (which works in the compiled binary too): flock(2) for the
 * data directory's lock, and madvise/mincore to give memory back to the operating system. Opened once;
 * null where no libc can be loaded, and callers then do without.
 */
import { dlopen } from "bun:ffi";

export const MADV_DONTNEED = 4;
/** Linux ≥ 5.4: reclaim these pages now (clean file pages are dropped; they read back from the file). */
export const MADV_PAGEOUT = 21;
const SC_PAGESIZE = process.platform === "darwin" ? 29 : 30;

const NAMES = process.platform === "darwin" ? ["libc.dylib", "/usr/lib/libSystem.B.dylib"] : ["libc.so.6", "libc.so"];

const SYMBOLS = {
  flock: { args: ["i32", "i32"], returns: "i32" },
  madvise: { args: ["usize", "usize", "i32"], returns: "i32" },
  mincore: { args: ["usize", "usize", "ptr"], returns: "i32" },
  sysconf: { args: ["i32"], returns: "i64" },
} as const;

function open(name: string) {
  const { symbols } = dlopen(name, SYMBOLS);
  return { ...symbols, pageSize: Number(symbols.sysconf(SC_PAGESIZE)) };
}

export type Libc = ReturnType<typeof open>;

let loaded: Libc | null | undefined;

export function libc(): Libc | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  for (const name of NAMES) {
    try {
      loaded = open(name);
      break;
    } catch {
      // try the next name
    }
  }
  return loaded;
}

/** libc where the memory calls mean what Crier relies on (MADV_DONTNEED zero-fills, MADV_PAGEOUT exists). */
export function linuxLibc(): Libc | null {
  return process.platform === "linux" ? libc() : null;
}
