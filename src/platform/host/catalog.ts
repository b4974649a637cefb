import type { Capabilities, ConnectionMode, MediaRequirements } from "../declaration.ts";
import type { Emulator, Plugin, PluginStatus } from "../sdk.ts";

/** What the account routes need to know of a platform; the plugin registry provides it. */
export interface PlatformDescription {
  capabilities: Capabilities;
  media_requirements: MediaRequirements;
  /** How disconnecting is reported (spec: some platforms need the user to revoke access remotely). */
  disconnect?: {
    disableRecord?: boolean;
    providerRevocationRequired?: boolean;
    providerRevocationUrl?: string | null;
    message?: string;
  };
  /** implemented, or declared_only when publishing is not written yet (targets are refused at creation). */
  status?: PluginStatus;
}

export interface PlatformCatalog {
  describe(platform: string): PlatformDescription | undefined;
  /**
   * The description one account shows: the platform's, with the account's own limits where the plugin
   * declares them per account (accountLimits; a Mastodon server's), else describe(platform).
   */
  describeAccount?(platform: string, metadata: Record<string, unknown> | null): PlatformDescription | undefined;
}

/** The catalog plus the plugins themselves: what connect flows, sandbox routes and the engine use. */
export interface PlatformRegistry extends PlatformCatalog {
  /** Every registered plugin, sorted by platform id. */
  list(): Plugin[];
  get(platform: string): Plugin | undefined;
  /** implemented or declared_only (publishing not written yet); undefined for an unknown platform. */
  statusOf(platform: string): PluginStatus | undefined;
  connectionMode(platform: string): ConnectionMode | undefined;
  hasEmulator(platform: string): boolean;
  /**
   * The emulator of the platform a sandbox profile's calls reach (created on first use): each sandbox
   * profile has its own, so no profile sees or changes another's accounts, tokens or posts.
   */
  emulatorFor(platform: string, profileId: string): Emulator | undefined;
  /** emulatorFor() holding what every copy saved last (sandbox state kept in the database), for reading it. */
  loadEmulator(platform: string, profileId: string): Promise<Emulator | undefined>;
  /** A fresh emulator, for tests that want their own state. */
  newEmulator(platform: string): Emulator | undefined;
}

/** A registry with no platforms (the real one is createRegistry() in src/platform/host/registry.ts). */
export const emptyCatalog: PlatformRegistry = {
  describe: () => undefined,
  list: () => [],
  get: () => undefined,
  statusOf: () => undefined,
  connectionMode: () => undefined,
  hasEmulator: () => false,
  emulatorFor: () => undefined,
  loadEmulator: async () => undefined,
  newEmulator: () => undefined,
};
