import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { PGlite } from "@electric-sql/pglite";
// Embedded so the compiled binary carries PGlite's runtime (the compiled binary crashes at run time otherwise).
import pgliteWasmPath from "@electric-sql/pglite/pglite.wasm" with { type: "file" };
import initdbWasmPath from "@electric-sql/pglite/initdb.wasm" with { type: "file" };
import pgliteDataPath from "@electric-sql/pglite/pglite.data" with { type: "file" };
import * as schema from "./schema.ts";
import { DatabaseAvailability } from "./availability.ts";

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Tx = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** Anything that can run a query: the database or an open transaction. */
export type Queryable = Database | Tx;

export interface Db {
  db: Database;
  kind: "pglite" | "postgres";
  /** The connection URL (PostgreSQL only). */
  url?: string;
  /** Runs raw SQL and returns rows, whichever driver is underneath. */
  rows<T = Record<string, unknown>>(query: ReturnType<typeof sql>, on?: Queryable): Promise<T[]>;
  close(): Promise<void>;
  /** PostgreSQL only: whether the server answers, as this copy last saw it (the embedded one always does). */
  availability?: DatabaseAvailability;
}

export function rowsOf<T>(result: unknown): T[] {
  // postgres.js returns an array; PGlite returns { rows }.
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

function wrap(db: Database, kind: Db["kind"], close: () => Promise<void>): Db {
  return {
    db,
    kind,
    rows: async (query, on = db) => rowsOf(await on.execute(query)),
    close,
  };
}

let pgliteAssets:
  Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module; fsBundle: Blob }> | undefined;

export function loadPgliteAssets() {
  pgliteAssets ??= (async () => ({
    pgliteWasmModule: await WebAssembly.compile(await Bun.file(pgliteWasmPath).arrayBuffer()),
    initdbWasmModule: await WebAssembly.compile(await Bun.file(initdbWasmPath).arrayBuffer()),
    fsBundle: Bun.file(pgliteDataPath),
  }))();
  return pgliteAssets;
}

/** Opens PGlite on a directory (or in memory with `dataDir` undefined, optionally from a dump). */
export async function openPglite(dataDir: string | undefined, loadDataDir?: Blob): Promise<Db> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const client = await PGlite.create({ dataDir, loadDataDir, ...(await loadPgliteAssets()) });
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return Object.assign(
    wrap(db, "pglite", () => client.close()),
    { pglite: client },
  );
}

/**
 * Bounded so an outage fails fast instead of queueing: a connection attempt gives up after 1 s, and a lost
 * server is tried again every 0.2–0.4 s (postgres.js' default backoff grows to 20 s, which held queries
 * for as long after the server came back).
 */
const POSTGRES_LIMITS = { connect_timeout: 1, backoff: () => 0.2 + Math.random() * 0.2 };

export function openPostgres(url: string, max = 10): Db {
  const client = postgres(url, { max, onnotice: () => {}, connection: { TimeZone: "UTC" }, ...POSTGRES_LIMITS });
  const db = drizzlePostgres(client, { schema }) as unknown as Database;
  const availability = new DatabaseAvailability({ probe: () => probePostgres(url) });
  const wrapped = wrap(db, "postgres", () => client.end({ timeout: 5 }));
  return {
    ...wrapped,
    rows: <T>(query: ReturnType<typeof sql>, on?: Queryable) =>
      wrapped.rows<T>(query, on).catch((e) => {
        availability.report(e);
        throw e;
      }),
    url,
    availability,
  };
}

/** One `select 1` on a connection of its own, so a probe never waits behind the pool's queued queries. */
async function probePostgres(url: string, timeoutMs = 1000): Promise<void> {
  const probe = postgres(url, { max: 1, onnotice: () => {}, ...POSTGRES_LIMITS });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      probe.unsafe("select 1"),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("probe timed out")), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    void probe.end({ timeout: 0 }).catch(() => {});
  }
}

export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  databasePoolSize?: number;
}): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.databasePoolSize);
  return openPglite(join(opts.dataDir, "pglite"));
}
