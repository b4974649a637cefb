import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db/client.ts";
import type { Logger } from "./log.ts";
import type { Storage } from "./storage/storage.ts";
import type { PlatformRegistry } from "./platform/host/catalog.ts";
import type { CredentialStore } from "./platform/host/provider.ts";

/**
 * What the API may ask of an engine running in this copy. The engine implements it; src/server.ts (or a
 * test) wires it in, so the API never imports the engine.
 */
export interface LocalDispatch {
  /** Due work exists now: look for it without waiting for the next tick. */
  wake(): void;
  /**
   * Runs `makeDue` (the transaction that makes the post's targets due) while this copy's claim loops are
   * held, then claims those targets right away and starts publishing them (not waiting for the outcome).
   * `beforeStart` runs once the claim is committed and before any publish starts: the moment the
   * targets are certainly processing.
   */
  claimPost(postId: string, beforeStart?: () => Promise<void>, makeDue?: () => Promise<void>): Promise<void>;
  /** How the engine is doing, for /readyz. */
  health(): EngineHealth;
}

export interface EngineHealth {
  /** When the last tick finished (wall clock), null before the first. */
  lastTickAt: Date | null;
  /** Publishes and status checks this copy holds claims on right now. */
  claimsInFlight: number;
  /** No tick has finished for longer than the engine allows: a wedged worker. */
  stalled: boolean;
}

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
  /**
   * Overrides the media guard's address rule for uploads from a URL. Only tests set it, to serve files
   * from 127.0.0.1; production always refuses loopback and private addresses.
   */
  mediaFetchAllow?: (ip: string) => boolean;
  /**
   * Tests only, like mediaFetchAllow: the webhook guard resolves with these DNS servers (a stub on
   * 127.0.0.1 that rebinds), lets `allowAddress` stand for the public internet, and trusts `ca` over
   * HTTPS. No configuration reaches it; a server resolves with the system and refuses private addresses.
   */
  webhookGuard?: { dnsServers?: string[]; allowAddress?: (ip: string) => boolean; ca?: string };
  /** The engine of this copy, when one runs (not under serve --no-scheduler); set once it started. */
  dispatch?: LocalDispatch;
}
