import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { systemClock, type AppContext } from "./context.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { createLogger } from "./log.ts";
import { createStorage } from "./storage/index.ts";
import { emptyCatalog } from "./platform/catalog.ts";
import { acquireLock } from "./cli/lock.ts";
import { startAdminSocket } from "./cli/admin.ts";

export interface ServeOptions {
  scheduler: boolean;
}

export interface RunningServer {
  ctx: AppContext;
  url: string;
  stop(): Promise<void>;
}

/** Starts one copy: database (migrated), HTTP API, admin socket (embedded database only) and engine. */
export async function startServer(config: Config, opts: ServeOptions): Promise<RunningServer> {
  const log = createLogger(config.logLevel, { service: "crier" });
  const releaseLock = config.databaseUrl ? () => {} : acquireLock(config.dataDir);
  const db = await openDatabase(config).catch((e) => {
    releaseLock();
    throw e;
  });
  try {
    await migrate(db);
  } catch (e) {
    await db.close();
    releaseLock();
    throw e;
  }
  const ctx: AppContext = { config, db, clock: systemClock, log, platforms: emptyCatalog, storage: createStorage(config) };
  const app = createApp(ctx);
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    fetch: (req) => app.handle(req),
    maxRequestBodySize: Math.max(config.maxVideoBytes, config.maxImageBytes, config.maxGifBytes, config.maxBodyBytes) + 1024 * 1024,
    idleTimeout: 120,
  });
  const admin = config.databaseUrl ? null : startAdminSocket(config.dataDir, db);
  const url = `http://${server.hostname}:${server.port}`;
  log.info("listening", { url, public_url: config.publicUrl, database: db.kind, scheduler: opts.scheduler });

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= (async () => {
    log.info("stopping");
    await server.stop();
    admin?.stop();
    await db.close();
    releaseLock();
    log.info("stopped");
  })());
  return { ctx, url, stop };
}
