import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Logger } from "./log.ts";
import type { Storage } from "./storage/index.ts";
import type { PlatformRegistry } from "./platform/catalog.ts";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Everything a route, service or the engine may use; built once at start (src/server.ts) or by a test. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  /** The plugin registry: createRegistry() from src/platform/registry.ts. */
  platforms: PlatformRegistry;
  /** Media bytes: createStorage(config, clock) from src/storage/index.ts (fs or s3 by config). */
  storage: Storage;
}
