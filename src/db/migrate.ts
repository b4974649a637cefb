import { createHash } from "node:crypto";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import type { Database, Db } from "./client.ts";
import { journal, migrationSql } from "../../migrations/index.ts";

interface MigrationMeta {
  sql: string[];
  bps: boolean;
  folderMillis: number;
  hash: string;
}

/** The migrations embedded in the build, in the shape drizzle's migrator reads from a folder. */
export function embeddedMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = migrationSql[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return {
      sql: text.split("--> statement-breakpoint"),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
    };
  });
}

// Arbitrary constant: copies starting together on one PostgreSQL wait for each other's migrations.
const MIGRATION_LOCK = 7_242_031;

/** Applies every pending migration; safe to call from several copies at once on PostgreSQL. */
export async function migrate(db: Db): Promise<void> {
  if (db.kind === "pglite") return runMigrations(db.db);
  // Copies starting together wait for each other: the session lock and the migration run share one
  // dedicated connection, since the pool would spread them over several.
  const client = postgres(db.url!, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await runMigrations(drizzle(client) as unknown as Database);
  } finally {
    await client.end({ timeout: 5 });
  }
}

function runMigrations(db: Database) {
  const internal = db as unknown as {
    dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): Promise<void> };
    session: unknown;
  };
  return internal.dialect.migrate(embeddedMigrations(), internal.session, {});
}
