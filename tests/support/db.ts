import { mkdirSync, existsSync, readFileSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import postgres from "postgres";
import { openPglite, openPostgres, type Db } from "../../src/db/client.ts";
import { migrate, embeddedMigrations } from "../../src/db/migrate.ts";

/**
 * A fresh, migrated database for one test file. With TEST_DATABASE_URL set it is a new PostgreSQL
 * database (dropped on close); otherwise an in-memory PGlite restored from a migrated dump that is
 * built once per migration set and reused across files and runs.
 */
export async function testDatabase(): Promise<Db & { url?: string }> {
  const base = process.env.TEST_DATABASE_URL;
  return base ? freshPostgres(base) : freshPglite();
}

async function freshPostgres(base: string): Promise<Db & { url: string }> {
  const name = `crier_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = openPostgres(url.toString(), 20);
  await migrate(db);
  const close = db.close;
  return Object.assign(db, {
    url: url.toString(),
    close: async () => {
      await close();
      const again = postgres(base, { max: 1, onnotice: () => {} });
      await again.unsafe(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  });
}

async function freshPglite(): Promise<Db> {
  const version = createHash("sha256")
    .update(
      embeddedMigrations()
        .map((m) => m.hash)
        .join(),
    )
    .digest("hex")
    .slice(0, 16);
  const dir = join(tmpdir(), "crier-test-pglite");
  const dump = join(dir, `${version}.tar.gz`);
  if (!existsSync(dump)) {
    const seed = await openPglite(undefined);
    await migrate(seed);
    const blob = await (seed as Db & { pglite: { dumpDataDir(c: string): Promise<Blob> } }).pglite.dumpDataDir("gzip");
    await seed.close();
    mkdirSync(dir, { recursive: true });
    const partial = `${dump}.${process.pid}.tmp`;
    writeFileSync(partial, Buffer.from(await blob.arrayBuffer()));
    renameSync(partial, dump);
  }
  return openPglite(undefined, new Blob([readFileSync(dump)]));
}
