import type { Database, Db } from "./client.ts";

/**
 * A hot query built once per database and run as a prepared statement: drizzle then skips rebuilding
 * its SQL on every call, and postgres.js keeps the statement parsed on each connection, so a query is
 * one round trip instead of a describe followed by the execute (drizzle sends unnamed queries otherwise).
 * `build` must end in `.prepare(name)` with placeholders for everything that varies.
 */
export function prepared<T>(build: (db: Database) => T): (db: Db) => T {
  const byDb = new WeakMap<Database, T>();
  return (db) => {
    let query = byDb.get(db.db);
    if (!query) byDb.set(db.db, (query = build(db.db)));
    return query;
  };
}
