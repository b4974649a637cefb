import type { Capabilities, MediaRequirements } from "../modules/accounts/model.ts";

/** What the account routes need to know of a platform; the plugin registry provides it. */
export interface PlatformDescription {
  capabilities: Capabilities;
  media_requirements: MediaRequirements;
  /** How disconnecting is reported (spec: some platforms need the user to revoke access remotely). */
  disconnect?: { disableRecord?: boolean; providerRevocationRequired?: boolean; providerRevocationUrl?: string | null; message?: string };
}

export interface PlatformCatalog {
  describe(platform: string): PlatformDescription | undefined;
}

export const emptyCatalog: PlatformCatalog = { describe: () => undefined };
