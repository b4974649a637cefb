import { sql } from "drizzle-orm";
import { protocol, type PGlite } from "@electric-sql/pglite";
import type { Db } from "./client.ts";
import { journal } from "../../migrations/index.ts";

/** What a backup's manifest says about its database, and what a restore checks it against. */
export interface DatabaseState {
  /** The tag of the last migration applied (e.g. 0025_account_credentials_expiry), null when none. */
  migration: string | null;
  /** Rows per table of the public schema. */
  counts: Record<string, number>;
}

/** The embedded database's PGlite, which only `openPglite` attaches. */
function pgliteOf(db: Db): PGlite {
  const pg = (db as Db & { pglite?: PGlite }).pglite;
  if (db.kind !== "pglite" || !pg) throw new Error("a snapshot is taken of the embedded database only");
  return pg;
}

/** The newest migration this build carries: a database newer than this cannot be served by it. */
export const latestMigration = (): string => journal.entries[journal.entries.length - 1].tag;

/** Whether migration tag `a` comes after `b` (tags start with their zero-padded number). */
export const migrationAfter = (a: string, b: string): boolean => a.localeCompare(b) > 0;

/** One statement answering the state as a JSON text: the tables are read first, they change only with a migration. */
async function stateQuery(db: Db): Promise<string> {
  const tables = await db.rows<{ name: string }>(
    sql`select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name`,
  );
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const literal = (name: string) => `'${name.replaceAll("'", "''")}'`;
  const counts = tables.length
    ? tables.map((t) => `select ${literal(t.name)} as t, count(*) as n from ${quote(t.name)}`).join(" union all ")
    : "select null::text as t, 0::bigint as n where false";
  return `select json_build_object(
      'migrated_at', (select max(created_at)::text from drizzle.__drizzle_migrations),
      'counts', (select coalesce(json_object_agg(t, n), '{}'::json) from (${counts}) c)
    )::text`;
}

function parseState(text: string): DatabaseState {
  const raw = JSON.parse(text) as { migrated_at: string | null; counts: Record<string, number | string> };
  const when = raw.migrated_at === null ? null : Number(raw.migrated_at);
  const entry = journal.entries.find((e) => e.when === when);
  return {
    migration: when === null ? null : (entry?.tag ?? `unknown migration of ${new Date(when).toISOString()}`),
    counts: Object.fromEntries(Object.entries(raw.counts).map(([t, n]) => [t, Number(n)])),
  };
}

/**
 * Runs `sql` (one simple-protocol batch whose first row is the state's JSON) and then `after`, with no
 * other statement of this PGlite in between. PGlite serves one connection: holding its transaction lock
 * waits for an open transaction to end, and its query lock keeps every other statement out, so what
 * `after` sees is exactly the state the batch counted. The raw protocol is used because PGlite's own
 * query methods take the query lock themselves.
 */
async function exclusively<T>(db: Db, batch: string, after: (pg: PGlite) => Promise<T>) {
  const pg = pgliteOf(db);
  return pg._runExclusiveTransaction(() =>
    pg.runExclusive(async () => {
      const { messages } = await pg.execProtocol(protocol.serialize.query(batch));
      const row = messages.find((m) => m.name === "dataRow") as { fields: string[] } | undefined;
      if (!row) throw new Error("the database did not answer its state");
      return { state: parseState(row.fields[0]), result: await after(pg) };
    }),
  );
}

/** The embedded database's state, as a restore compares it with the manifest. */
export async function pgliteState(db: Db): Promise<DatabaseState> {
  return (await exclusively(db, await stateQuery(db), async () => null)).state;
}

/**
 * A consistent copy of the embedded database's files (an uncompressed tar of its data directory, as
 * PGlite's dumpDataDir writes it) and the state it holds. A CHECKPOINT first writes every committed
 * change to the data files, so the copy opens without replaying the WAL. The API and the engine wait
 * only while the files are read (a moment: they are read from the OS's cache into memory).
 */
export async function pgliteSnapshot(db: Db): Promise<{ dump: Blob; state: DatabaseState }> {
  const query = await stateQuery(db);
  const { state, result } = await exclusively(db, `${query}; checkpoint`, async (pg) => {
    if (!pg.fs) throw new Error("the embedded database has no file system to copy");
    return pg.fs.dumpTar("pgdata", "none");
  });
  return { dump: result, state };
}
