/**
 * Gives the operating system back the pages of a wasm heap (PGlite's) that hold nothing but zeros.
 *
 * Emscripten's mmap() zero-fills the memory it hands out, so PostgreSQL's shared memory (the buffer pool and
 * the tables beside it, ≈ 11 MB here) is written in full when PGlite starts, and stays resident although
 * most buffers stay empty for a long time; a native PostgreSQL gets the same memory from the kernel and pays
 * only for the pages it uses. `madvise(MADV_DONTNEED)` drops a page of a private anonymous mapping, and the
 * next access finds a fresh zero page, so the heap reads exactly as before.
 *
 * Safe only for memory that no other thread writes: the wasm heap is written by PGlite's code alone, which
 * runs on this thread, so nothing can change a page between the check that it is zero and the call that
 * drops it. (Never use it on the JS engine's own heaps: its collector and compilers write from other threads.)
 */
import { ptr } from "bun:ffi";
import { linuxLibc, MADV_DONTNEED } from "./libc.ts";

function isZero(words: Uint32Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (words[i] !== 0) return false;
  return true;
}

/** Drops the resident all-zero pages of `heap`; returns how many bytes were given back (0 off Linux). */
export function dropZeroPages(heap: Uint8Array): number {
  const c = linuxLibc();
  if (!c) return 0;
  const page = c.pageSize;
  const address = ptr(heap);
  // Whole pages only: the first and last may be shared with memory outside the heap.
  const skip = (page - (address % page)) % page;
  const pages = Math.floor((heap.byteLength - skip) / page);
  if (pages <= 0) return 0;
  // Pages never touched are not resident: reading them to check would only waste time.
  const resident = new Uint8Array(pages);
  if (c.mincore(address + skip, pages * page, resident) !== 0) return 0;
  const words = new Uint32Array(heap.buffer, heap.byteOffset + skip, (pages * page) / 4);
  const perPage = page / 4;
  let dropped = 0;
  let run = -1;
  const flush = (end: number) => {
    if (run < 0) return;
    const bytes = (end - run) * page;
    if (c.madvise(address + skip + run * page, bytes, MADV_DONTNEED) === 0) dropped += bytes;
    run = -1;
  };
  for (let p = 0; p < pages; p++) {
    const zero = (resident[p]! & 1) === 1 && isZero(words, p * perPage, (p + 1) * perPage);
    if (zero && run < 0) run = p;
    else if (!zero) flush(p);
  }
  flush(pages);
  return dropped;
}
