import { createApp } from "./app.ts";
import type { Config } from "./config.ts";
import { systemClock } from "./clock.ts";
import type { AppContext } from "./context.ts";
import { openDatabase } from "./db/client.ts";
import { migrate } from "./db/migrate.ts";
import { createLogger } from "./log.ts";
import { createStorage } from "./storage/index.ts";
import { serveApp } from "./http/serve.ts";
import { startupWarnings } from "./platform/host/startup-warnings.ts";
import { startEngine, type Engine } from "./engine/index.ts";
import { accountCredentials } from "./modules/accounts/service.ts";
import { videoTools } from "./media/tools.ts";
import { sandboxWiring } from "./modules/sandbox/state-store.ts";
import { cleanupExpiredUploads } from "./modules/media/cleanup.ts";
import { acquireLock } from "./cli/lock.ts";
import { startAdminSocket } from "./cli/admin.ts";
import { warnIfDataDirOpen } from "./db/data-dir.ts";
import { secretKeyNotes } from "./db/secret-rotation.ts";

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
  warnIfDataDirOpen(config.dataDir, log);
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
  db.availability?.logTo((message, fields) => log.warn(message, fields));
  const ctx: AppContext = {
    config,
    db,
    clock: systemClock,
    log,
    ...sandboxWiring(
      db,
      createStorage(config),
      config.publicUrl,
      videoTools(config).ffmpeg !== null,
      config.platformsDisabled,
    ),
    credentials: accountCredentials({ db, config, clock: systemClock }),
  };
  const app = createApp(ctx);
  const server = serveApp(app, { hostname: config.host, port: config.port, config, log });
  const admin = config.databaseUrl ? null : startAdminSocket(config.dataDir, ctx);
  const engine = opts.scheduler ? serveEngine(ctx) : null;
  // The API wakes this copy's engine when it creates due work, and claims a post published now at once.
  if (engine) ctx.dispatch = engine;
  const url = `http://${server.hostname}:${server.port}`;
  log.info("listening", { url, public_url: config.publicUrl, database: db.kind, scheduler: opts.scheduler });
  for (const w of startupWarnings(ctx, systemClock.now())) log.warn(w.message, { platform: w.platform });
  await logSecretKeyNotes(ctx);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info("stopping");
      // New requests and claims stop first; publishes in flight finish (bounded) before the database closes.
      await server.stop();
      await engine?.stop();
      admin?.stop();
      await db.close();
      releaseLock();
      log.info("stopped");
    })());
  return { ctx, url, stop };
}

/** A SECRET_KEY that opens nothing stored is said at start, not only by every publish failing. */
async function logSecretKeyNotes(ctx: AppContext) {
  try {
    for (const n of await secretKeyNotes(ctx.db, ctx.config)) ctx.log[n.level](n.message, n.fields);
  } catch (e) {
    ctx.log.warn("could not check the stored secrets against SECRET_KEY", { error: (e as Error).message });
  }
}

/** The engine of a `crier serve` copy, started, with the options serve gives it (tests build it here too). */
export function serveEngine(ctx: AppContext): Engine {
  return startEngine(ctx, { onTick: everyMinute(() => mediaCleanup(ctx)) });
}

/** Runs `job` on the first call and then at most once a minute, never two at once. */
function everyMinute(job: () => Promise<void>) {
  let last = 0;
  let running = false;
  return async () => {
    if (running || Date.now() - last < 60_000) return;
    running = true;
    last = Date.now();
    try {
      await job();
    } finally {
      running = false;
    }
  };
}

async function mediaCleanup(ctx: AppContext) {
  try {
    const r = await cleanupExpiredUploads(ctx);
    if (r.removedTickets || r.removedPartials || r.settled) ctx.log.info("media cleanup", { ...r });
  } catch (e) {
    ctx.log.warn("media cleanup failed", { error: (e as Error).message });
  }
}
