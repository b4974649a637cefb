/**
 * What every command of the command line shares: parsing its flags (with --help), the two ways an admin
 * command runs (through the running server's socket, or on the database directly), and printing tables.
 */
import { videoTools } from "../media/tools.ts";
import { sandboxWiring } from "../modules/sandbox/state-store.ts";
import { parseArgs } from "node:util";
import { type Config } from "../config.ts";
import { openDatabase } from "../db/client.ts";
import { systemClock } from "../clock.ts";
import type { AppContext } from "../context.ts";
import { createLogger } from "../log.ts";
import { createStorage } from "../storage/index.ts";
import { migrate } from "../db/migrate.ts";
import { callAdminSocket } from "./admin.ts";
import { adminCommands, type AdminCommand } from "./commands.ts";
import { acquireLock } from "./lock.ts";
import { accountCredentials } from "../modules/accounts/service.ts";
import { KeyInputError } from "../modules/keys/service.ts";
import { UserInputError } from "../modules/users/service.ts";
import { warnIfDataDirOpen } from "../db/data-dir.ts";

/** A mistake on the command line: one line on stderr, exit 2. */
export class UsageError extends Error {}

type Flags = Record<string, { type: "string" | "boolean"; short?: string }>;

export function parse(
  args: string[],
  options: Flags,
  help: string,
): { values: Record<string, any>; positionals: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...options, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: true,
    });
  } catch (e) {
    throw new UsageError(`${(e as Error).message.split("\n")[0]} (see --help)`);
  }
  if (parsed.values.help) {
    console.log(help);
    process.exit(0);
  }
  return parsed;
}

/** Runs an admin command: through the running server's socket, or on the database directly. */
export async function admin(config: Config, command: AdminCommand, args: object): Promise<any> {
  if (!config.databaseUrl) {
    const viaSocket = await callAdminSocket(config.dataDir, command, args);
    if (viaSocket) {
      if (viaSocket.error) throw new UsageError(viaSocket.error);
      return viaSocket.result;
    }
  }
  return withDatabase(config, (ctx) =>
    (adminCommands[command] as (c: AppContext, a: object) => Promise<unknown>)(ctx, args),
  );
}

export type AdminCall = (command: AdminCommand, args: object) => Promise<any>;

/**
 * Several admin commands in a row on one connection: through the running server's socket while one
 * answers, otherwise on the database opened once for all of them.
 */
export async function adminSession<T>(config: Config, run: (call: AdminCall) => Promise<T>): Promise<T> {
  let viaSocket = !config.databaseUrl;
  let local: Promise<{ ctx: AppContext; close(): Promise<void> }> | undefined;
  try {
    return await run(async (command, args) => {
      if (viaSocket) {
        const r = await callAdminSocket(config.dataDir, command, args);
        if (r) {
          if (r.error) throw new UsageError(r.error);
          return r.result;
        }
        viaSocket = false;
      }
      local ??= openSession(config);
      const { ctx } = await local;
      try {
        return await (adminCommands[command] as (c: AppContext, a: object) => Promise<unknown>)(ctx, args);
      } catch (e) {
        if (e instanceof KeyInputError || e instanceof UserInputError) throw new UsageError(e.message);
        throw e;
      }
    });
  } finally {
    if (local) await (await local).close();
  }
}

/** Opens the database (taking the embedded database's lock) until close(). */
export async function openSession(config: Config): Promise<{ ctx: AppContext; close(): Promise<void> }> {
  warnIfDataDirOpen(config.dataDir, createLogger(config.logLevel));
  const release = config.databaseUrl ? () => {} : acquireLock(config.dataDir);
  let db;
  try {
    db = await openDatabase(config);
    await migrate(db);
  } catch (e) {
    await db?.close();
    release();
    throw e;
  }
  const ctx: AppContext = {
    config,
    db,
    clock: systemClock,
    log: createLogger(config.logLevel),
    ...sandboxWiring(
      db,
      createStorage(config),
      config.publicUrl,
      videoTools(config).ffmpeg !== null,
      config.platformsDisabled,
    ),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  };
  return {
    ctx,
    async close() {
      await db.close();
      release();
    },
  };
}

/** Opens the database (taking the embedded database's lock) for one command and closes it after. */
export async function withDatabase<T>(config: Config, run: (ctx: AppContext) => Promise<T>): Promise<T> {
  const session = await openSession(config);
  try {
    return await run(session.ctx);
  } catch (e) {
    if (e instanceof KeyInputError || e instanceof UserInputError) throw new UsageError(e.message);
    throw e;
  } finally {
    await session.close();
  }
}

export function table(rows: Record<string, unknown>[], columns: string[]) {
  if (rows.length === 0) return "(none)";
  const cell = (v: unknown) => (v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(",") : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    "\n",
  );
}

/** A command that ran and refused (exit 1, unlike a mistake on the command line). */
export class Refused extends Error {}
