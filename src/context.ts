import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Logger } from "./log.ts";
import type { Storage } from "./storage/storage.ts";
import type { PlatformRegistry } from "./platform/host/catalog.ts";
import type { CredentialStore } from "./platform/host/provider.ts";

/** Everything a route, service or the engine may use; built once at start (src/server.ts) or by a test. */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  log: Logger;
  /** The plugin registry: createRegistry() from src/platform/host/registry.ts. */
  platforms: PlatformRegistry;
  /** Where plugins' refreshed credentials go: accountCredentials() from src/modules/accounts/service.ts. */
  credentials: CredentialStore;
  /** Media bytes: createStorage(config, clock) from src/storage/index.ts (fs or s3 by config). */
  storage: Storage;
}
