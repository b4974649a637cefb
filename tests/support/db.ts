import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { openPglite, openPostgres, type Db } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { migratedSeed } from "../../src/db/seed.ts";

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
  // The same migrated tarball a new embedded data directory starts from, cached apart from the server's.
  return openPglite(undefined, await migratedSeed(join(tmpdir(), "crier-test-pglite")));
}
