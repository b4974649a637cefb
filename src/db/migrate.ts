import { createHash } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { journal, migrationSql } from "../../migrations/index.ts";

interface MigrationMeta { sql: string[]; bps: boolean; folderMillis: number; hash: string }

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
  const internal = db.db as unknown as { dialect: { migrate(m: MigrationMeta[], s: unknown, c: object): Promise<void> }; session: unknown };
  const run = () => internal.dialect.migrate(embeddedMigrations(), internal.session, {});
  if (db.kind === "pglite") return run();
  // postgres.js pools connections: the lock must be taken and released on one reserved connection.
  await db.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const txInternal = tx as unknown as { dialect: typeof internal.dialect; session: unknown };
    await internal.dialect.migrate(embeddedMigrations(), txInternal.session, {});
  });
}
