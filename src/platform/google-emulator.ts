/**
 * Google's OAuth 2.0 authorization server as the emulators of Google platforms serve it: authorize
 * (PKCE), token (client id and secret in the body; code and refresh grants; one-hour access tokens;
 * refresh tokens kept and not sent again), and, for each token, the scopes its user granted: Google's
 * consent screen lets a user untick some of the scopes an app asks for, and the token answer's `scope`
 * lists the granted ones, space-separated (developers.google.com/identity/protocols/oauth2/resources/
 * granular-permissions, checked 2026-11-26). Refusals are `{error, error_description}` as Google answers.
 */
import { randomBytes } from "node:crypto";
import { OAuthServer } from "./emulator-kit.ts";

const ACCESS_TTL_S = 3600;

/** The authorization server of an emulated Google project that may ask for `grantable` scopes. */
export function googleOAuthServer(grantable: readonly string[]): OAuthServer {
  return new OAuthServer({
    clientAuth: "body",
    accessTtlS: ACCESS_TTL_S,
    refresh: "kept",
    newToken: (kind) =>
      kind === "access" ? `ya29.${randomBytes(16).toString("hex")}` : `1//${randomBytes(16).toString("hex")}`,
    answer: { token_type: "Bearer" },
    grantable,
    refuse(why) {
      if (why === "invalid_client")
        return Response.json({ error: why, error_description: "The OAuth client was not found." }, { status: 401 });
      if (why === "unsupported_grant_type") return Response.json({ error: why }, { status: 400 });
      const description =
        why === "verifier_mismatch"
          ? "Invalid code verifier."
          : why === "invalid_refresh_token"
            ? "Token has been expired or revoked."
            : "Malformed auth code.";
      return Response.json({ error: "invalid_grant", error_description: description }, { status: 400 });
    },
  });
}
