/**
 * What the Google plugins (YouTube, Google Business Profile) share of Google's OAuth 2.0 for web server
 * apps (developers.google.com/identity/protocols/oauth2/web-server, checked 2026-11-26): the endpoints,
 * client id and secret in the token request's body, offline access for a refresh token, and the scopes
 * the user actually granted. Google's consent screen lets a user untick scopes an app asks for
 * ("granular permissions": the app "must check what scopes are granted by the users",
 * developers.google.com/identity/protocols/oauth2/resources/granular-permissions, checked 2026-11-26).
 */
import { refreshTokenGrant, type TokenEndpoint, type TokenResponse } from "./oauth.ts";
import type { Credentials, PluginContext } from "./sdk.ts";

export const GOOGLE_AUTHORIZE_URL = "https://accounts.google.com/o/oauth2/v2/auth";
export const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";
export const GOOGLE_TOKEN_ENDPOINT: TokenEndpoint = { tokenUrl: GOOGLE_TOKEN_URL, clientAuth: "body" };

/**
 * access_type=offline gives a refresh token; prompt=consent gives one again on a reconnect (Google sends
 * a refresh token only on the first consent otherwise).
 */
export const GOOGLE_OFFLINE_PARAMS = { access_type: "offline", prompt: "consent" } as const;

/** refresh() of a Google plugin: the refresh_token grant; Google keeps the refresh token and sends none back. */
export const googleRefresh = (holder: string): ((ctx: PluginContext) => Promise<Credentials>) =>
  refreshTokenGrant({ ...GOOGLE_TOKEN_ENDPOINT, name: "Google", holder });

/**
 * Which of `needed` the token answer does not list as granted: each entry of `needed` is a list of scopes
 * any one of which will do. Empty when the answer names no scope (nothing to compare against).
 */
export function ungrantedScopes(token: TokenResponse, needed: readonly (readonly string[])[]): string[][] {
  if (typeof token.scope !== "string") return [];
  const granted = token.scope.split(" ");
  return needed.filter((anyOf) => !anyOf.some((s) => granted.includes(s))).map((anyOf) => [...anyOf]);
}
