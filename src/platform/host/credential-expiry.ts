/**
 * When an account's stored credentials stop working without its user, read from what the plugin stored
 * (src/platform/oauth.ts tokenCredentials): kept in the clear beside the encrypted credentials so the
 * token-refresh job (src/engine/token-refresh.ts) finds the accounts to refresh ahead of that moment.
 */
import type { Credentials } from "../sdk.ts";

const at = (v: unknown): Date | null => {
  const ms = typeof v === "string" ? Date.parse(v) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : null;
};

/**
 * With a refresh token, the access token is renewed from it whenever it runs out, so what ends the
 * account's access is the refresh token's own end (refresh_expires_at), when the platform tells it.
 * Without one, a token refreshed by presenting itself (Instagram's and Threads' 60-day tokens) ends at
 * its expires_at. Null when nothing is known to end.
 */
export function credentialsExpireAt(c: Credentials | null | undefined): Date | null {
  if (!c) return null;
  if (typeof c.refresh_token === "string") return at(c.refresh_expires_at);
  return at(c.expires_at);
}
