import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes } from "node:crypto";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { journal, migrationSql } from "../../migrations/index.ts";
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

/**
 * A new database with no migration applied (PostgreSQL with TEST_DATABASE_URL, else in-memory PGlite):
 * for tests that build a database as an earlier version left it (applyNumberedMigrations).
 */
export async function emptyDatabase(): Promise<Db & { url?: string }> {
  const base = process.env.TEST_DATABASE_URL;
  return base ? freshPostgres(base, false) : openPglite(undefined);
}

/**
 * Runs the numbered migrations of the journal one by one, as plain SQL, from the first up to and including
 * `last` (all of them when undefined), and records them as drizzle's migrator does, so a later migrate()
 * carries on from there. Function files are not applied: the database is what an earlier version left.
 */
export async function applyNumberedMigrations(db: Db, last?: string): Promise<void> {
  await db.rows(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
  await db.rows(sql`
    CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  if (last !== undefined && !journal.entries.some((e) => e.tag === last)) throw new Error(`no migration ${last}`);
  for (const entry of journal.entries) {
    const text = migrationSql[entry.tag];
    for (const statement of text.split("--> statement-breakpoint"))
      if (statement.trim()) await db.rows(sql.raw(statement));
    const hash = createHash("sha256").update(text).digest("hex");
    await db.rows(sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${hash}, ${entry.when})`);
    if (entry.tag === last) break;
  }
}

async function freshPostgres(base: string, migrated = true): Promise<Db & { url: string }> {
  const name = `crier_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(base, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = openPostgres(url.toString(), 20);
  if (migrated) await migrate(db);
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
