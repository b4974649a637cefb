/**
 * Once the server is up, memory that only its start needed goes back to the operating system.
 *
 * - JavaScriptCore drops compiled code (`Bun.shrink()`: every function's bytecode and machine code, then a
 *   full collection and a return of its allocator's free pages). Start-up runs much code exactly once:
 *   migrations, route compilation, plugin declarations, the seed's unpacking. Code the server goes on
 *   running is compiled again on first use, so it costs a few warm-up requests, once. ≈ 8 MB.
 * - Start-up reads the executable's read-only data (Bun's built-in modules, Unicode tables) and runs much
 *   of its machine code once (the module loader, the parser and bytecode compiler, the wasm compiler's
 *   first tier for PGlite); in the compiled binary it also copies its embedded files (PGlite's runtime,
 *   the seed database) out of its image. Those are clean file pages: the kernel would drop them first
 *   under pressure, but until then they count against the process. `MADV_PAGEOUT` drops the data now, and
 *   the process lets go of the code (`MADV_DONTNEED`), which stays in the kernel's page cache for the next
 *   start; whatever is read or run again comes back from the file or the cache (pages the kernel shares
 *   with another process running the same executable, such as `bun` itself from source, stay).
 *   ≈ 3 MB from source, ≈ 20 MB in the binary. Writable data is left alone: paged out, it would go to swap.
 *
 * The release is made once more a little later (SETTLE_MS): the engine's first ticks, the first periodic
 * jobs' checks and the garbage of the start (collected sooner or later depending on how busy the machine
 * is) come after the server answers. Made once, the idle memory measured 3 s after the start varied by
 * ≈ 15 MB between runs on a loaded machine; the second release costs ≈ 10 ms, once.
 *
 * bench/start measures the idle memory this leaves.
 */
import { readFileSync, realpathSync } from "node:fs";
import { open } from "node:fs/promises";
import { linuxLibc, MADV_DONTNEED, MADV_PAGEOUT } from "./libc.ts";

/** After the start, when the copy has run its first engine ticks. */
export const SETTLE_MS = 2_000;

/** Releases now, and again `settleMs` later (0: only now). */
export function releaseStartupMemory(settleMs = SETTLE_MS): void {
  release();
  if (settleMs <= 0) return;
  const flushed = flushExecutable();
  setTimeout(() => void flushed.then(release), settleMs).unref();
}

/**
 * Writes the executable's pages to disk when they have not been yet. A binary started right after it was
 * written (installed, downloaded, built) still has its pages dirty in the kernel's cache for up to 30 s, and
 * the kernel cannot page out a dirty page: the embedded files then stayed resident for the life of the
 * process (≈ 18 MB more idle memory in bench/start right after a build). On a file already on disk this
 * is a no-op. Asynchronous, on libuv's thread pool, so a slow disk delays only the second release.
 */
async function flushExecutable(): Promise<void> {
  try {
    const file = await open(realpathSync(process.execPath), "r");
    try {
      await file.datasync();
    } finally {
      await file.close();
    }
  } catch {
    // Not flushed: the pages stay until the kernel writes them back, as before.
  }
}

function release(): void {
  // Deprecated in Bun's types, without a replacement; absent, nothing is dropped.
  (Bun as { shrink?: () => void }).shrink?.();
  pageOutExecutable();
}

interface Mapping {
  start: number;
  length: number;
  /** Machine code: let go of, not paged out (see pageOutExecutable). */
  code: boolean;
}

/**
 * The executable's file mappings that hold what start-up read or ran: the read-only ones (data and code)
 * and, in the compiled binary, the writable one holding its embedded files (the only one large enough to
 * hold them).
 */
export function executableMappings(maps = readFileSync("/proc/self/maps", "utf8")): Mapping[] {
  const exe = realpathSync(process.execPath);
  const embedded = Bun.embeddedFiles.reduce((sum, f) => sum + f.size, 0);
  const found: Mapping[] = [];
  for (const line of maps.split("\n")) {
    const [range, perms, , , , path] = line.split(/\s+/);
    if (path !== exe || !perms) continue;
    const [start, end] = range!.split("-").map((h) => parseInt(h, 16)) as [number, number];
    const holdsEmbeddedFiles = embedded > 0 && end - start >= embedded && !perms.includes("x");
    if (perms.startsWith("r-") || holdsEmbeddedFiles)
      found.push({ start, length: end - start, code: perms.includes("x") });
  }
  return found;
}

function pageOutExecutable(): void {
  const c = linuxLibc();
  if (!c) return;
  try {
    // Data pages are paged out (EINVAL before Linux 5.4, which has no MADV_PAGEOUT: they then simply stay).
    // Code pages are only let go of: they stay in the kernel's page cache, so the next start of the
    // executable finds them there instead of reading ≈ 16 MB from disk again. Never written (no text
    // relocations), so dropping them cannot lose anything; data is not: a relocated page read-only since
    // would read back from the file unrelocated.
    for (const m of executableMappings()) c.madvise(m.start, m.length, m.code ? MADV_DONTNEED : MADV_PAGEOUT);
  } catch {
    // Memory not given back is not an error.
  }
}
