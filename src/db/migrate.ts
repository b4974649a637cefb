import { createHash } from "node:crypto";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import { rowsOf, type Database, type Db } from "./client.ts";
import { functionSql, journal, migrationSql } from "../../migrations/index.ts";

interface MigrationMeta {
  tag: string;
  sql: string[];
  folderMillis: number;
  hash: string;
}

const BREAKPOINT = "--> statement-breakpoint";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The numbered migrations embedded in the build, in journal order. */
export function embeddedMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = migrationSql[entry.tag];
    if (text === undefined) throw new Error(`migration ${entry.tag} is in the journal but not embedded`);
    return { tag: entry.tag, sql: text.split(BREAKPOINT), folderMillis: entry.when, hash: sha256(text) };
  });
}

/** One file of migrations/functions: a SQL function, defined once and applied again when its text changes. */
export interface RepeatableMigration {
  /** The file's name without .sql, which is also the function's name. */
  name: string;
  sql: string[];
  checksum: string;
}

/**
 * The order the function files are applied in: a function another one calls first (SQL-language bodies
 * are checked against what exists when they are created), then by name. A file depends on another when its
 * text calls it (`name(`); every function is crier_-prefixed, so that cannot be mistaken for anything else.
 */
export function functionOrder(files: Record<string, string>): string[] {
  const names = Object.keys(files).sort();
  const calls = new Map(
    names.map((name) => [
      name,
      names.filter((other) => other !== name && new RegExp(`\\b${other}\\s*\\(`).test(files[name])),
    ]),
  );
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (order.includes(name)) return;
    if (visiting.has(name))
      throw new Error(`migrations/functions call each other in a cycle: ${[...path, name].join(" → ")}`);
    visiting.add(name);
    for (const callee of calls.get(name)!) visit(callee, [...path, name]);
    visiting.delete(name);
    order.push(name);
  };
  for (const name of names) visit(name, []);
  return order;
}

/** The function files embedded in the build, in the order they are applied. */
export function embeddedFunctions(): RepeatableMigration[] {
  return functionOrder(functionSql).map((name) => ({
    name,
    sql: functionSql[name].split(BREAKPOINT),
    checksum: sha256(functionSql[name]),
  }));
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

type Executor = Pick<Database, "execute">;
const rows = async <T>(on: Executor, query: ReturnType<typeof sql>) => rowsOf<T>(await on.execute(query));

/**
 * The numbered migrations, then the function files, in one transaction: an upgrade that fails anywhere
 * leaves the database as it was. The numbered ones are tracked exactly as drizzle's migrator tracks them
 * (drizzle.__drizzle_migrations, by the journal's `when`), so databases it migrated carry on; the
 * function files in drizzle.crier_repeatable_migrations, by name and checksum.
 */
async function runMigrations(db: Database): Promise<void> {
  await db.execute(sql`CREATE SCHEMA IF NOT EXISTS drizzle`);
  await db.execute(sql`
    CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
  await db.execute(sql`
    CREATE TABLE IF NOT EXISTS drizzle.crier_repeatable_migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const [last] = await rows<{ created_at: string | number }>(
    db,
    sql`SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`,
  );
  const applied = new Map(
    (
      await rows<{ name: string; checksum: string }>(
        db,
        sql`SELECT name, checksum FROM drizzle.crier_repeatable_migrations`,
      )
    ).map((r) => [r.name, r.checksum]),
  );
  const numbered = embeddedMigrations().filter((m) => !last || Number(last.created_at) < m.folderMillis);
  const functions = embeddedFunctions();
  // After any numbered migration every function is applied again, changed or not: one whose table lost or
  // changed a column it reads then fails this upgrade (SQL bodies are checked as they are created) instead
  // of the first call after it.
  const due = numbered.length > 0 ? functions : functions.filter((f) => applied.get(f.name) !== f.checksum);
  const gone = [...applied.keys()].filter((name) => !functions.some((f) => f.name === name));
  if (numbered.length === 0 && due.length === 0 && gone.length === 0) return;
  await db.transaction(async (tx) => {
    for (const migration of numbered) {
      for (const statement of migration.sql) await tx.execute(sql.raw(statement));
      await tx.execute(
        sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`,
      );
    }
    for (const fn of due) {
      await applyFunction(tx, fn);
      await tx.execute(sql`
        INSERT INTO drizzle.crier_repeatable_migrations (name, checksum) VALUES (${fn.name}, ${fn.checksum})
        ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`);
    }
    // A file removed: its function is dropped by the numbered migration that removed it; forget the record.
    for (const name of gone)
      await tx.execute(sql`DELETE FROM drizzle.crier_repeatable_migrations WHERE name = ${name}`);
  });
}

// SQLSTATE of CREATE OR REPLACE FUNCTION refusing a different return type, renamed parameters or removed
// parameter defaults.
const INVALID_FUNCTION_DEFINITION = "42P13";

function sqlState(error: unknown): string | undefined {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

/** The functions of this name in the current schema, as `name(argument types)` (one per overload). */
async function overloads(tx: Executor, name: string): Promise<string[]> {
  const found = await rows<{ signature: string }>(
    tx,
    sql`SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
        WHERE p.proname = ${name} AND p.pronamespace = current_schema()::regnamespace ORDER BY 1`,
  );
  return found.map((r) => r.signature);
}

/**
 * Applies one function file. CREATE OR REPLACE cannot change a function's return type (nor rename its
 * parameters): then the old definition is dropped and the file run again, in this transaction. A file
 * whose argument list changed creates a second function beside the old one: the old one is dropped. Both
 * drops are without CASCADE, so a function a trigger uses (its WHEN or its EXECUTE) is never dropped
 * silently: the upgrade fails and names what depends on it.
 */
async function applyFunction(tx: Database, fn: RepeatableMigration): Promise<void> {
  const before = await overloads(tx, fn.name);
  const run = async (on: Executor) => {
    for (const statement of fn.sql) if (statement.trim()) await on.execute(sql.raw(statement));
  };
  try {
    await tx.transaction(run); // a savepoint: a refusal leaves the transaction usable
  } catch (error) {
    if (sqlState(error) !== INVALID_FUNCTION_DEFINITION) throw error;
    for (const signature of before) await tx.execute(sql.raw(`DROP FUNCTION ${signature}`));
    await run(tx);
  }
  const after = await overloads(tx, fn.name);
  if (after.some((signature) => !before.includes(signature)))
    for (const signature of before.filter((s) => after.includes(s)))
      await tx.execute(sql.raw(`DROP FUNCTION ${signature}`));
}
