import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes `file` beside itself and renames it into place: another process starting at the same moment
 * finds either no file or the whole one, never half of it.
 */
export function writeFileAside(file: string, bytes: Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, bytes);
  renameSync(partial, file);
}
