import postgres from "postgres";
import type { PGlite } from "@electric-sql/pglite";
import { openPostgres } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";

/** Something went wrong in a way the operator must see: the target is rolled back and left empty. */
export class MoveError extends Error {}

type Sql = postgres.Sql | postgres.TransactionSql;
type Report = (line: string) => void;

interface TableShape {
  name: string;
  columns: string[];
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Public tables and their copyable columns (generated ones are computed on insert), as the catalog says. */
const SHAPE_SQL = `
  select c.table_name as name, array_agg(c.column_name::text order by c.ordinal_position) as columns
  from information_schema.columns c join information_schema.tables t
    on t.table_schema = c.table_schema and t.table_name = c.table_name
  where c.table_schema = 'public' and t.table_type = 'BASE TABLE' and c.is_generated = 'NEVER'
  group by c.table_name order by c.table_name`;

const FOREIGN_KEYS_SQL = `
  select conrelid::regclass::text as child, confrelid::regclass::text as parent
  from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace`;

/**
 * Parents before children. Among tables free to go, webhook tables go last: the webhook triggers on posts,
 * targets, accounts and workflow items fire only while an endpoint exists, so copying the endpoints after
 * them keeps the copy from announcing every old post again as if it were new.
 */
export function copyOrder(tables: string[], edges: { child: string; parent: string }[]): string[] {
  const parents = new Map(tables.map((t) => [t, new Set<string>()]));
  for (const { child, parent } of edges) if (child !== parent) parents.get(child)?.add(parent);
  const order: string[] = [];
  const rank = (t: string) => (t.startsWith("webhook_") ? 1 : 0);
  while (parents.size) {
    const ready = [...parents].filter(([, p]) => [...p].every((x) => !parents.has(x))).map(([t]) => t);
    if (!ready.length) throw new MoveError(`foreign keys form a cycle among ${[...parents.keys()].join(", ")}`);
    ready.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    const next = ready[0];
    order.push(next);
    parents.delete(next);
  }
  return order;
}

/**
 * Count and checksum of a table, computed by the same SQL on both sides: the md5 of the sorted md5s of each
 * row's text form. Text forms of timestamptz (with TimeZone UTC), jsonb and numbers are canonical, so equal
 * rows give equal sums on PGlite and on PostgreSQL; sorting the hashes needs no collation agreement.
 */
const checksumSql = (t: TableShape) =>
  `select count(*)::int as n, coalesce(md5(string_agg(h, '' order by h collate "C")), '') as sum
   from (select md5(row(${t.columns.map(quote).join(", ")})::text) as h from ${quote(t.name)}) r`;

async function sourceRows<T>(source: PGlite, query: string): Promise<T[]> {
  return (await source.query<T>(query)).rows;
}

export interface DatabaseMoveResult {
  /** Each table's row count and checksum, equal on both sides. */
  tables: { name: string; rows: number; checksum: string }[];
}

/**
 * Copies every row of the embedded database into an empty PostgreSQL database in one transaction: the
 * migrations first (so both have one schema), then each table by COPY in foreign-key order, the sequences,
 * and a count and checksum per table compared before the commit. Any difference rolls everything back.
 * `beforeCommit` runs last inside the transaction (rewriting media URLs after the exact copy is proven).
 */
export async function moveDatabase(
  source: PGlite,
  targetUrl: string,
  report: Report,
  beforeCommit: (tx: postgres.TransactionSql) => Promise<void>,
): Promise<DatabaseMoveResult> {
  const migrator = openPostgres(targetUrl, 1);
  try {
    await migrate(migrator);
  } finally {
    await migrator.close();
  }
  await source.exec("set TimeZone = 'UTC'");
  const target = postgres(targetUrl, { max: 1, onnotice: () => {}, connection: { TimeZone: "UTC" } });
  try {
    const tables = await target.unsafe<TableShape[]>(SHAPE_SQL);
    await sameShape(source, tables);
    await refuseNonEmpty(target, tables);
    const order = copyOrder(
      tables.map((t) => t.name),
      await target.unsafe<{ child: string; parent: string }[]>(FOREIGN_KEYS_SQL),
    );
    const byName = new Map(tables.map((t) => [t.name, t]));
    const result: DatabaseMoveResult = { tables: [] };
    await target.begin(async (tx) => {
      for (const name of order) {
        const started = performance.now();
        const rows = await copyTable(source, tx, byName.get(name)!);
        report(`${name}: ${rows} row(s) copied in ${((performance.now() - started) / 1000).toFixed(2)} s`);
      }
      await copySequences(source, tx);
      // Deferred triggers run now rather than at the commit, so whatever they would write is counted below.
      await tx.unsafe("set constraints all immediate");
      for (const name of order) result.tables.push(await compare(source, tx, byName.get(name)!));
      report(`verified: ${order.length} tables, every count and checksum equal`);
      await beforeCommit(tx);
    });
    return result;
  } finally {
    await target.end({ timeout: 5 });
  }
}

async function sameShape(source: PGlite, tables: TableShape[]) {
  const mine = new Map(
    (await sourceRows<TableShape>(source, SHAPE_SQL)).map((t) => [t.name, t.columns.join(",")] as const),
  );
  const theirs = new Map(tables.map((t) => [t.name, t.columns.join(",")] as const));
  for (const [name, cols] of theirs)
    if (mine.get(name) !== cols)
      throw new MoveError(`table ${name} differs between the embedded database and the target after migrating both`);
  for (const name of mine.keys())
    if (!theirs.has(name)) throw new MoveError(`table ${name} of the embedded database is missing in the target`);
}

async function refuseNonEmpty(target: Sql, tables: TableShape[]) {
  const filled = [];
  for (const t of tables) {
    const [r] = await target.unsafe<{ any: boolean }[]>(`select exists (select 1 from ${quote(t.name)}) as any`);
    if (r.any) filled.push(t.name);
  }
  if (filled.length)
    throw new MoveError(
      `the target database is not empty (rows in ${filled.join(", ")}); move copies into an empty database only (a freshly created one, migrated or not)`,
    );
}

async function copyTable(source: PGlite, tx: postgres.TransactionSql, t: TableShape): Promise<number> {
  const cols = t.columns.map(quote).join(", ");
  const out = await source.query(`copy (select ${cols} from ${quote(t.name)}) to '/dev/blob'`);
  const blob = out.blob;
  if (!blob || blob.size === 0) return 0;
  const writable = await tx.unsafe(`copy ${quote(t.name)} (${cols}) from stdin`).writable();
  const reader = blob.stream().getReader();
  await new Promise<void>((resolve, reject) => {
    writable.once("error", reject);
    const pump = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return void writable.end(resolve);
        if (!writable.write(value)) await new Promise((r) => writable.once("drain", r));
      }
    };
    pump().catch(reject);
  });
  return out.affectedRows ?? 0;
}

/** Each sequence continues where the embedded one stopped (webhook delivery order). */
async function copySequences(source: PGlite, tx: postgres.TransactionSql) {
  const seqs = await sourceRows<{ name: string }>(
    source,
    `select sequencename as name from pg_sequences where schemaname = 'public'`,
  );
  for (const { name } of seqs) {
    const [s] = await sourceRows<{ last_value: string; is_called: boolean }>(
      source,
      `select last_value::text, is_called from ${quote(name)}`,
    );
    await tx.unsafe(`select setval($1, $2::bigint, $3)`, [quote(name), s.last_value, s.is_called]);
  }
}

async function compare(source: PGlite, tx: postgres.TransactionSql, t: TableShape) {
  const [a] = await sourceRows<{ n: number; sum: string }>(source, checksumSql(t));
  const [b] = await tx.unsafe<{ n: number; sum: string }[]>(checksumSql(t));
  if (a.n !== b.n || a.sum !== b.sum)
    throw new MoveError(
      `table ${t.name} differs after the copy: ${a.n} row(s) checksum ${a.sum} in the embedded database, ${b.n} row(s) checksum ${b.sum} in the target; nothing was committed`,
    );
  return { name: t.name, rows: a.n, checksum: a.sum };
}
