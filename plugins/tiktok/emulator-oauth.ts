/**
 * TikTok's OAuth v2 as the emulator serves it: the consent page, the token endpoint (client_key and
 * secret in the form, code and rotating refresh grants) and, for each token, the scopes its user granted,
 * which the API endpoints check. Sources and dates: ./emulator-rules.ts.
 */
import { randomBytes } from "node:crypto";
import { OAuthServer, type OAuthRefusal } from "../../src/platform/emulator-kit.ts";
import { ACCESS_TTL_S, APP_SCOPES, REFRESH_TTL_S } from "./emulator-rules.ts";

// TikTok's OAuth errors: {error, error_description, log_id} ("OAuth Error Handling", oauth-error-handling).
const REFUSALS: Record<OAuthRefusal, [number, string, string]> = {
  invalid_client: [401, "invalid_client", "Client key or secret is incorrect."],
  invalid_code: [400, "invalid_grant", "Authorization code is expired."],
  redirect_mismatch: [400, "invalid_grant", "Authorization code is expired."],
  verifier_mismatch: [400, "invalid_grant", "Code verifier is invalid."],
  invalid_refresh_token: [400, "invalid_grant", "Refresh token is invalid or expired."],
  unsupported_grant_type: [400, "unsupported_grant_type", "grant_type is not supported."],
};

function refuse(why: OAuthRefusal): Response {
  const [status, error, error_description] = REFUSALS[why];
  return Response.json({ error, error_description, log_id: randomBytes(16).toString("hex") }, { status });
}

/** TikTok's authorization server: the consent grants only scopes the app is approved for, narrowed by the user. */
export function tiktokOAuth(openId: string): OAuthServer {
  return new OAuthServer({
    clientAuth: "body",
    clientIdParam: "client_key",
    accessTtlS: ACCESS_TTL_S,
    refresh: "rotating",
    refreshTtlS: REFRESH_TTL_S,
    newToken: (kind) => `${kind === "access" ? "act" : "rft"}.${randomBytes(20).toString("hex")}`,
    answer: { open_id: openId, refresh_expires_in: REFRESH_TTL_S, token_type: "Bearer" },
    // The token answer lists the granted scopes, comma-separated.
    grantable: APP_SCOPES,
    scopeSeparator: ",",
    refuse,
  });
}
