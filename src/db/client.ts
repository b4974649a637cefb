import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
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
import { DatabaseAvailability, isTimeoutError } from "./availability.ts";
import { wrapClient } from "./bounded-postgres.ts";
import { untarGz } from "./untar.ts";
import { pgliteFsBundle } from "./pglite-bundle.ts";
import { dropZeroPages } from "../os/zero-pages.ts";
import { makeTreePrivate } from "./data-dir.ts";

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
  /**
   * LISTEN on a channel: `onNotify` gets each payload; `onListen` runs each time listening (re)starts, since
   * notifications sent while the connection was down are lost. Resolves once the first LISTEN is in place.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListen?: () => void): Promise<void>;
  /** Calls `fn` with each statement sent through drizzle (tests count round trips); undefined stops it. */
  observe(fn: ((sql: string) => void) | undefined): void;
  close(): Promise<void>;
  /** PostgreSQL only: whether the server answers, as this copy last saw it (the embedded one always does). */
  availability?: DatabaseAvailability;
  /** PostgreSQL only: the server-side statement_timeout of the pool's connections, in ms (0: none). */
  statementTimeoutMs?: number;
}

/** drizzle's logger hook, turned into a switchable statement observer. */
function observer() {
  let fn: ((sql: string) => void) | undefined;
  return {
    logger: { logQuery: (query: string) => fn?.(query) },
    observe: (next: typeof fn) => {
      fn = next;
    },
  };
}

export function rowsOf<T>(result: unknown): T[] {
  // postgres.js returns an array; PGlite returns { rows }.
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

function wrap(
  db: Database,
  kind: Db["kind"],
  listen: Db["listen"],
  observe: Db["observe"],
  close: () => Promise<void>,
): Db {
  return {
    db,
    kind,
    rows: async (query, on = db) => rowsOf(await on.execute(query)),
    listen,
    observe,
    close,
  };
}

/** Compiled once per process: the tests open many databases. */
const wasmModules = new Map<string, Promise<WebAssembly.Module>>();
function compileWasm(path: string): Promise<WebAssembly.Module> {
  let compiled = wasmModules.get(path);
  if (!compiled) {
    compiled = Bun.file(path)
      .arrayBuffer()
      .then((bytes) => WebAssembly.compile(bytes));
    wasmModules.set(path, compiled);
  }
  return compiled;
}

/**
 * PGlite's runtime, and initdb's only when this database is to be created from nothing: a compiled module
 * stays in memory for the life of the process (≈ 2 MB for initdb), and a data directory that exists or a
 * dump to load never runs initdb.
 */
async function pgliteAssets(initdb: boolean, dataDir: string | undefined) {
  return {
    pgliteWasmModule: await compileWasm(pgliteWasmPath),
    ...(initdb && { initdbWasmModule: await compileWasm(initdbWasmPath) }),
    // The binary keeps its copy of the bundle in DATA_DIR/pglite-runtime, beside the database (pglite-bundle.ts).
    fsBundle: await pgliteFsBundle(pgliteDataPath, dataDir && join(dirname(dataDir), "pglite-runtime")),
  };
}

/** Opens PGlite on a directory (or in memory with `dataDir` undefined, optionally from a dump). */
export async function openPglite(dataDir: string | undefined, loadDataDir?: Blob): Promise<Db> {
  if (dataDir) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const client = await PGlite.create({
    dataDir,
    loadDataDir,
    // PostgreSQL's default 128 MB of buffers lives inside the wasm heap here, on top of the OS's own file
    // cache: 16 MB halved the idle memory (≈ 256 → 135 MB) and the time to open (≈ 0.5 → 0.25 s), and all
    // of it is touched at start; 8 MB takes another ≈ 8 MB off idle RSS (the OS cache still holds the files).
    // PGlite serves one connection; shared memory sized for PostgreSQL's default 100 is ≈ 4 MB of the
    // wasm heap, written at start, for nothing.
    postgresqlconf: ["shared_buffers=8MB", "max_connections=5"],
    ...(await pgliteAssets(!loadDataDir && !(dataDir && existsSync(join(dataDir, "PG_VERSION"))), dataDir)),
  });
  if (dataDir) makeTreePrivate(dataDir);
  // PostgreSQL's shared memory was just zero-filled in full; most of it stays unused for a long time.
  dropZeroPages(client.Module.HEAPU8);
  const watch = observer();
  const db = drizzlePglite(client, { schema, logger: watch.logger }) as unknown as Database;
  return Object.assign(
    wrap(
      db,
      "pglite",
      async (channel, onNotify, onListen) => {
        await client.listen(channel, onNotify);
        onListen?.();
      },
      watch.observe,
      async () => {
        await client.close();
        if (dataDir) makeTreePrivate(dataDir);
      },
    ),
    { pglite: client },
  );
}

/**
 * Bounded so an outage fails fast instead of queueing: a connection attempt gives up after 1 s, and a lost
 * server is tried again every 0.2–0.4 s (postgres.js' default backoff grows to 20 s, which held queries
 * for as long after the server came back).
 */
const POSTGRES_LIMITS = { connect_timeout: 1, backoff: () => 0.2 + Math.random() * 0.2 };

/** The default of DATABASE_STATEMENT_TIMEOUT, in ms. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * What each connection of the pool asks of its session, beyond its time zone. A statement_timeout of 0
 * sends none of it: the server's (or the role's) own settings apply, and a pooler that refuses unknown
 * startup parameters (PgBouncer without ignore_startup_parameters) still connects.
 *
 * - statement_timeout bounds every statement on the server (see openPostgres).
 * - jit off: Crier's statements are short, and PostgreSQL compiles a statement to machine code whenever
 *   its estimated cost passes jit_above_cost, as it does when the statistics are behind (a table filled
 *   since its last ANALYZE). The housekeeping look for due targets of inactive accounts, estimated at
 *   8,383 accounts of 2,000 before accounts were analyzed, was compiled on every tick of every copy:
 *   11–14 ms of compiling for a statement whose own work is a scan of the accounts, 80 ms a call under four copies' load, a
 *   quarter of PostgreSQL's CPU per published target in bench/scale (d).
 */
function sessionSettings(statementTimeoutMs: number) {
  return { statement_timeout: statementTimeoutMs, jit: "off" };
}

/**
 * The pool's connections run every statement under `statementTimeoutMs` on the server (a lock wait or a
 * runaway plan ends there with SQLSTATE 57014, rolled back); drizzle sends them through a client that
 * also bounds them on the client where a deadline is in scope (deadline.ts). LISTEN and migrations use
 * connections of their own, without either: migrations wait for each other on a lock, for as long as
 * another copy's take.
 */
export function openPostgres(url: string, max = 10, statementTimeoutMs = DEFAULT_STATEMENT_TIMEOUT_MS): Db {
  const client = postgres(url, {
    max,
    onnotice: () => {},
    connection: { TimeZone: "UTC", ...(statementTimeoutMs > 0 && sessionSettings(statementTimeoutMs)) },
    ...POSTGRES_LIMITS,
  });
  const watch = observer();
  const db = drizzlePostgres(wrapClient(client), { schema, logger: watch.logger }) as unknown as Database;
  const availability = new DatabaseAvailability({ probe: () => probePostgres(url) });
  const listen: Db["listen"] = async (channel, onNotify, onListen) => {
    await client.listen(channel, onNotify, onListen);
  };
  const wrapped = wrap(db, "postgres", listen, watch.observe, () => client.end({ timeout: 5 }));
  return {
    ...wrapped,
    rows: <T>(query: ReturnType<typeof sql>, on?: Queryable) =>
      wrapped.rows<T>(query, on).catch((e) => {
        if (isTimeoutError(e)) availability.suspect();
        else availability.report(e);
        throw e;
      }),
    url,
    availability,
    statementTimeoutMs,
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
  databaseStatementTimeoutMs?: number;
}): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.databasePoolSize, opts.databaseStatementTimeoutMs);
  const dir = join(opts.dataDir, "pglite");
  if (existsSync(join(dir, "PG_VERSION"))) return openPglite(dir);
  // A new directory starts from a migrated tarball, unpacked beside it and renamed into place so a start
  // cut short leaves no half directory. Imported here: seed.ts opens PGlite through this file.
  const { migratedSeed } = await import("./seed.ts");
  const partial = `${dir}.${process.pid}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true, mode: 0o700 });
  await untarGz((await migratedSeed()).stream(), partial);
  renameSync(partial, dir);
  return openPglite(dir);
}
