/**
 * The host's side of ServerApps (src/platform/sdk.ts): the OAuth apps connect flows registered on servers
 * users named (Mastodon). Kept in this process per platform and target (a sandbox profile's emulator knows
 * only its own apps), and found again after a restart through `lookup`, which the connect module answers
 * from the encrypted credentials of accounts connected through an app. No table of their own: an app not
 * yet used by any account is registered again after a restart, which the servers allow.
 */
import type { Credentials, ServerApps } from "../sdk.ts";
import type { HostContext, Target } from "./provider.ts";

/** Reads a server's app from stored accounts; null when no connected account used one. */
export type StoredAppLookup = (platform: string, target: Target, server: string) => Promise<Credentials | null>;

const known = new WeakMap<HostContext, Map<string, Credentials>>();

export function serverApps(ctx: HostContext, platform: string, target: Target, lookup?: StoredAppLookup): ServerApps {
  let apps = known.get(ctx);
  if (!apps) known.set(ctx, (apps = new Map()));
  const memo = apps;
  const keyOf = (server: string) =>
    `${target.sandbox ? `sandbox:${target.profileId}` : "live"}:${platform}:${server.toLowerCase()}`;
  return {
    async find(server) {
      const hit = memo.get(keyOf(server));
      if (hit) return hit;
      const stored = (await lookup?.(platform, target, server.toLowerCase())) ?? null;
      if (stored) memo.set(keyOf(server), stored);
      return stored;
    },
    remember(server, app) {
      memo.set(keyOf(server), app);
    },
    forget(server) {
      memo.delete(keyOf(server));
    },
  };
}
