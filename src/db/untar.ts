import { mkdirSync, writeFileSync } from "node:fs";
import { join, normalize } from "node:path";

/**
 * Unpacks a gzipped ustar archive of directories and regular files (what PGlite's dumpDataDir writes)
 * under `dir`. Native file writes take a fraction of what PGlite's own loadDataDir needs to restore the
 * same tarball through its virtual file system.
 */
export function untarGz(archive: Uint8Array<ArrayBuffer>, dir: string): void {
  const tar = Bun.gunzipSync(archive);
  const text = new TextDecoder();
  const field = (at: number, length: number) => text.decode(tar.subarray(at, at + length)).replace(/\0.*$/s, "");
  for (let at = 0; at + 512 <= tar.length;) {
    const name = field(at, 100);
    if (!name) break;
    const prefix = field(at + 345, 155);
    const size = Number.parseInt(field(at + 124, 12).trim() || "0", 8);
    const type = field(at + 156, 1);
    const path = normalize(`/${prefix ? `${prefix}/` : ""}${name}`);
    const target = join(dir, path);
    if (type === "5") mkdirSync(target, { recursive: true });
    else if (type === "0" || type === "") writeFileSync(target, tar.subarray(at + 512, at + 512 + size));
    else throw new Error(`unexpected entry type '${type}' for ${path} in the data directory archive`);
    at += 512 + Math.ceil(size / 512) * 512;
  }
}
