import { expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openPglite } from "../../src/db/client.ts";
import { linuxLibc } from "../../src/os/libc.ts";
import { dropZeroPages } from "../../src/os/zero-pages.ts";

const linux = linuxLibc() !== null;

test.skipIf(!linux)("zero pages are given back and read as zeros; other pages keep their bytes", () => {
  const page = linuxLibc()!.pageSize;
  const heap = new Uint8Array(64 * page);
  // Every page touched: odd pages hold bytes, even pages are written with zeros (resident, but empty).
  for (let p = 0; p < 64; p++) heap.fill(p % 2 ? p : 0, p * page, (p + 1) * page);
  heap[5 * page + 17] = 0; // a page that is only mostly zero is kept
  const dropped = dropZeroPages(heap);
  // The first and last page may be shared with memory outside the array and are left alone.
  expect(dropped).toBeGreaterThanOrEqual(30 * page);
  expect(dropped % page).toBe(0);
  // Dropped pages are no longer resident, so nothing is left to give back. (Checked before reading them:
  // a read maps the kernel's shared zero page, which counts as resident again.)
  expect(dropZeroPages(heap)).toBe(0);
  for (let p = 0; p < 64; p++) {
    const slice = heap.subarray(p * page, (p + 1) * page);
    if (p % 2) expect(slice.filter((b) => b !== p).length).toBe(p === 5 ? 1 : 0);
    else expect(slice.every((b) => b === 0)).toBe(true);
  }
  // A dropped page can be written again like any other.
  heap[2 * page] = 7;
  expect(heap[2 * page]).toBe(7);
});

test.skipIf(!linux)(
  "PGlite opens with its zero-filled shared memory already given back, and its data intact",
  async () => {
    const db = await openPglite(undefined);
    try {
      const heap = (db as unknown as { pglite: { Module: { HEAPU8: Uint8Array } } }).pglite.Module.HEAPU8;
      // openPglite gave the buffer pool's zero pages back: what is left to drop is small.
      expect(dropZeroPages(heap)).toBeLessThan(1024 * 1024);
      await db.rows(sql`create table t (n int, s text)`);
      await db.rows(sql`insert into t select n, repeat('x', 200) from generate_series(1, 50000) n`);
      const before = await db.rows<{ sum: string }>(sql`select sum(n)::text as sum, count(*) from t`);
      dropZeroPages(heap);
      expect(await db.rows(sql`select sum(n)::text as sum, count(*) from t`)).toEqual(before);
      await db.rows(sql`insert into t select n, 'y' from generate_series(50001, 60000) n`);
      expect(await db.rows<{ count: number }>(sql`select count(*)::int as count from t`)).toEqual([{ count: 60000 }]);
    } finally {
      await db.close();
    }
  },
);
