// `crier serve` as a child process a test may kill -9 (crash and delivery-after-restart tests): started from
// source with the test's environment on top of this process's, its address read from its announcement.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import type { AppContext } from "../../src/context.ts";
import { openDatabase, type Db } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/log.ts";
import { accountCredentials } from "../../src/modules/accounts/service.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { createStorage } from "../../src/storage/index.ts";
import { testDatabase } from "./db.ts";

export { until } from "./until.ts";

export function startKillableServe(
  env: Record<string, string>,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn("node_modules/.bin/bun", ["src/main.ts", "serve"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let err = "";
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve({ child, url: m[1] });
    });
    child.on("exit", (code) => reject(new Error(`crier serve exited with ${code}: ${err}`)));
  });
}

/** Resolves once the child has exited (at once if it already has). */
export const exited = (child: ChildProcess) =>
  new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r()),
  );

/**
 * The database the child copies will serve from, seeded by the test through `ctx` first: a fresh
 * PostgreSQL database with TEST_DATABASE_URL, else an embedded one in a new DATA_DIR. `childEnv` holds
 * what a child needs to open it, plus `env`. Call `release()` once seeding is done (the embedded database
 * has one owner at a time) and `close()` after the tests.
 */
export async function childDatabase(
  name: string,
  env: Record<string, string>,
): Promise<{ ctx: AppContext; childEnv: Record<string, string>; release(): Promise<void>; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), `crier-${name}-`));
  const pg = process.env.TEST_DATABASE_URL ? await testDatabase() : undefined;
  const db: Db = pg ?? (await openDatabase({ dataDir }));
  if (!pg) await migrate(db);
  const childEnv: Record<string, string> = {
    ...(pg && { DATABASE_URL: pg.url! }),
    DATA_DIR: dataDir,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    ...env,
  };
  const config = loadConfig(childEnv);
  const clock = { now: () => new Date() };
  const ctx: AppContext = {
    config,
    db,
    clock,
    log: createLogger("silent"),
    platforms: createRegistry(),
    storage: createStorage(config),
    credentials: accountCredentials({ db, config, clock }),
  };
  return {
    ctx,
    childEnv,
    release: async () => {
      if (!pg) await db.close();
    },
    close: async () => {
      if (pg) await pg.close();
    },
  };
}
