import { expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { untarGz } from "../../src/db/untar.ts";

/** A gzipped ustar archive (the format PGlite's dumpDataDir writes) of a small tree, made by tar(1). */
function archive(): { file: string; big: Uint8Array } {
  const root = mkdtempSync(join(tmpdir(), "crier-untar-src-"));
  mkdirSync(join(root, "base", "1"), { recursive: true });
  writeFileSync(join(root, "PG_VERSION"), "17\n");
  // Larger than a piece (1 MB) and not a multiple of 512: written across several reads, then padded.
  const big = new Uint8Array(2.5 * 1024 * 1024 + 77);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 12)) & 0xff;
  writeFileSync(join(root, "base", "1", "1259"), big);
  writeFileSync(join(root, "base", "1", "empty"), "");
  const file = join(root, "..", `${root.split("/").pop()}.tar.gz`);
  const tar = Bun.spawnSync(["tar", "--format=ustar", "-czf", file, "-C", root, "PG_VERSION", "base"]);
  if (tar.exitCode !== 0) throw new Error(tar.stderr.toString());
  return { file, big };
}

test("a gzipped tar unpacks streamed: directories, empty and multi-megabyte files, byte for byte", async () => {
  const { file, big } = archive();
  const out = mkdtempSync(join(tmpdir(), "crier-untar-out-"));
  await untarGz(Bun.file(file).stream(), out);
  expect(readFileSync(join(out, "PG_VERSION"), "utf8")).toBe("17\n");
  expect(readFileSync(join(out, "base", "1", "empty")).length).toBe(0);
  expect(readFileSync(join(out, "base", "1", "1259")).equals(big)).toBe(true);
});

test("an archive cut short is an error, not a data directory with a short file", async () => {
  const { file } = archive();
  const whole = readFileSync(file);
  const cut = Bun.gzipSync(Bun.gunzipSync(whole).subarray(0, 1024 * 1024));
  const out = mkdtempSync(join(tmpdir(), "crier-untar-cut-"));
  await expect(untarGz(new Blob([cut]).stream(), out)).rejects.toThrow(/ends inside/);
});
