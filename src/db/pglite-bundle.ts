/**
 * PGlite's file bundle (6 MB: initdb's catalog, time zones, extensions' scripts…), mapped instead of read.
 * PostgreSQL reads few of these files, and mapped, only the pages it reads take memory: read into memory,
 * the whole bundle stays resident for the life of the process (PGlite's in-memory file system keeps slices
 * of it). Mapped privately, so nothing can write through to the file.
 *
 * From source the package's file is mapped. The compiled binary carries the bundle inside the executable,
 * which has no path to map, so it is copied once into DATA_DIR/pglite-runtime (named by its content hash,
 * so a new build brings its own and removes the old) and that copy is mapped. Whatever cannot be mapped is read as before.
 */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { writeFileAside } from "./write-aside.ts";

const EMBEDDED = "/$bunfs/";

function mapped(path: string): Blob {
  const bytes = Bun.mmap(path, { shared: false });
  // PGlite only calls arrayBuffer() on it.
  return { size: bytes.byteLength, arrayBuffer: async () => bytes.buffer } as Blob;
}

/**
 * The bundle at `path`, mapped. `cacheDir` is where a bundle embedded in the executable is copied to be
 * mapped (undefined: read it instead).
 */
export async function pgliteFsBundle(
  path: string,
  cacheDir: string | undefined,
  embedded = path.startsWith(EMBEDDED),
): Promise<Blob> {
  try {
    if (!embedded) return mapped(path);
    if (!cacheDir) return Bun.file(path);
    const copy = join(cacheDir, basename(path));
    const size = Bun.file(path).size;
    if (!existsSync(copy) || statSync(copy).size !== size) {
      writeFileAside(copy, new Uint8Array(await Bun.file(path).arrayBuffer()));
      // Earlier builds' copies (and copies cut short): a process still mapping one keeps it until it exits.
      for (const name of readdirSync(cacheDir))
        if (name !== basename(copy)) rmSync(join(cacheDir, name), { force: true });
    }
    return mapped(copy);
  } catch {
    return Bun.file(path);
  }
}
