/**
 * The few libc calls Crier makes to give memory back to the operating system (madvise, mincore), through
 * bun:ffi. Linux only: elsewhere, or where libc cannot be opened, `libc()` is null and callers skip the work.
 */
import { dlopen } from "bun:ffi";

export const MADV_DONTNEED = 4;
/** Linux ≥ 5.4: reclaim these pages now (clean file pages are dropped; they read back from the file). */
export const MADV_PAGEOUT = 21;
const SC_PAGESIZE = 30;

function open() {
  const { symbols } = dlopen("libc.so.6", {
    madvise: { args: ["usize", "usize", "i32"], returns: "i32" },
    mincore: { args: ["usize", "usize", "ptr"], returns: "i32" },
    sysconf: { args: ["i32"], returns: "i64" },
  });
  return { ...symbols, pageSize: Number(symbols.sysconf(SC_PAGESIZE)) };
}

let loaded: ReturnType<typeof open> | null | undefined;

export function libc(): ReturnType<typeof open> | null {
  if (loaded === undefined) {
    try {
      loaded = process.platform === "linux" ? open() : null;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}
