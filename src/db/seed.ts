/**
 * A migrated, empty PGlite data directory as a tarball, so a new embedded database starts by unpacking it
 * (about a second) instead of running initdb and every migration (several seconds). The compiled binary
 * carries one made at build time (scripts/build.ts); from source it is made on first need and cached
 * under the system's temp directory. Either is named for the migration set it holds (the numbered migrations
 * and the function files), so a tarball from older migrations is never used: a new migration, or a changed
 * function, simply makes a new one.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPglite, type Db } from "./client.ts";
import { writeFileAside } from "./write-aside.ts";
import { embeddedFunctions, embeddedMigrations, migrate } from "./migrate.ts";

/** Names the migration set: a seed holds exactly these migrations and these function files. */
export function seedVersion(): string {
  const hashes = [
    ...embeddedMigrations().map((m) => m.hash),
    ...embeddedFunctions().map((f) => `${f.name}:${f.checksum}`),
  ].join();
  return createHash("sha256").update(hashes).digest("hex").slice(0, 16);
}

/** The file name a seed of this migration set has (in the binary, Bun adds a content hash before `.gz`). */
export const seedName = (version = seedVersion()) => `pglite-seed-${version}.tar.gz`;

/** The data directory, freshly initialised and migrated, as a gzipped tarball. */
export async function makeSeed(): Promise<Blob> {
  const db = (await openPglite(undefined)) as Db & { pglite: { dumpDataDir(c: "gzip"): Promise<Blob> } };
  try {
    await migrate(db);
    return await db.pglite.dumpDataDir("gzip");
  } finally {
    await db.close();
  }
}

/** The seed built into the executable, when this is the compiled binary of the same migrations. */
function embeddedSeed(version: string): Blob | undefined {
  const prefix = seedName(version).replace(/\.gz$/, "");
  return Bun.embeddedFiles.find((f) => (f as Blob & { name: string }).name.startsWith(prefix));
}

/** The seed of the current migrations: built in, or cached (made now when missing). */
export async function migratedSeed(cacheDir = join(tmpdir(), "crier-pglite-seed")): Promise<Blob> {
  const version = seedVersion();
  const built = embeddedSeed(version);
  if (built) return built;
  const file = join(cacheDir, seedName(version));
  if (!existsSync(file)) {
    const seed = await makeSeed();
    writeFileAside(file, new Uint8Array(await seed.arrayBuffer()));
  }
  return Bun.file(file);
}
