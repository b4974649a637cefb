import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { rowsOf, type Database, type Db, type Queryable } from "./client.ts";

/**
 * A hot query built once per database (or transaction) and run as a prepared statement: drizzle then
 * skips rebuilding its SQL on every call, and postgres.js keeps the statement parsed on each connection,
 * so a query is one round trip instead of a describe followed by the execute (drizzle sends queries
 * without a name unprepared). `build` must end in `.prepare(name)`, with placeholders for what varies.
 */
export function prepared<T>(build: (q: Queryable) => T): (on: Db | Queryable) => T {
  const byDb = new WeakMap<Queryable, T>();
  return (on) => {
    const q = isDb(on) ? on.db : on;
    let query = byDb.get(q);
    if (!query) byDb.set(q, (query = build(q)));
    return query;
  };
}

const isDb = (on: Db | Queryable): on is Db => typeof (on as Db).rows === "function" && "kind" in on;

const dialect = new PgDialect();

/**
 * Raw SQL (values as sql.placeholder) run prepared the same way, on the database or inside a
 * transaction; for statements drizzle's builders cannot express (a CTE that inserts into two tables).
 */
export function preparedSql<T = Record<string, unknown>>(name: string, query: SQL) {
  const built = dialect.sqlToQuery(query);
  return async (on: Db | Queryable, values: Record<string, unknown>): Promise<T[]> => {
    const q: Database | Queryable = isDb(on) ? on.db : on;
    return rowsOf<T>(await q._.session.prepareQuery(built, undefined, name, false).execute(values));
  };
}
