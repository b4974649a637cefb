import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteFsBundle } from "../../src/db/pglite-bundle.ts";

const sha = async (b: Blob) => new Bun.CryptoHasher("sha256").update(await b.arrayBuffer()).digest("hex");

function sampleBundle(): string {
  const path = join(mkdtempSync(join(tmpdir(), "crier-bundle-")), "pglite-abc123.data");
  writeFileSync(
    path,
    new Uint8Array(3 * 65536 + 123).map((_, i) => (i * 31) & 0xff),
  );
  return path;
}

test("a bundle on disk is mapped: the same bytes, in a buffer of the file's size", async () => {
  const path = sampleBundle();
  const bundle = await pgliteFsBundle(path, undefined);
  const bytes = await bundle.arrayBuffer();
  expect(bytes.byteLength).toBe(statSync(path).size);
  expect(bytes.constructor.name).toBe("ArrayBuffer"); // PGlite checks this
  expect(await sha(bundle)).toBe(await sha(Bun.file(path)));
});

test("an embedded bundle is copied once into the cache directory and mapped from there", async () => {
  const path = sampleBundle();
  const cache = join(mkdtempSync(join(tmpdir(), "crier-bundle-cache-")), "pglite-runtime");
  // An earlier build's copy is removed when this build makes its own.
  mkdirSync(cache, { recursive: true });
  writeFileSync(join(cache, "pglite-older.data"), "old");
  const first = await pgliteFsBundle(path, cache, true);
  expect(readdirSync(cache)).toEqual(["pglite-abc123.data"]);
  expect(await sha(first)).toBe(await sha(Bun.file(path)));
  const copied = statSync(join(cache, "pglite-abc123.data")).mtimeMs;
  await Bun.sleep(20);
  await pgliteFsBundle(path, cache, true);
  expect(statSync(join(cache, "pglite-abc123.data")).mtimeMs).toBe(copied);
  // A copy of the wrong size (cut short by a full disk, say) is replaced.
  truncateSync(join(cache, "pglite-abc123.data"), 1000);
  expect(await sha(await pgliteFsBundle(path, cache, true))).toBe(await sha(Bun.file(path)));
  expect(readdirSync(cache)).toEqual(["pglite-abc123.data"]);
});

test("without a cache directory, or when the copy cannot be written, an embedded bundle is read", async () => {
  const path = sampleBundle();
  expect(await sha(await pgliteFsBundle(path, undefined, true))).toBe(await sha(Bun.file(path)));
  const file = join(mkdtempSync(join(tmpdir(), "crier-bundle-block-")), "not-a-dir");
  writeFileSync(file, "x");
  expect(await sha(await pgliteFsBundle(path, join(file, "pglite-runtime"), true))).toBe(await sha(Bun.file(path)));
});
