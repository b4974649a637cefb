/**
 * Google's OAuth as the YouTube emulator serves it: authorize (PKCE), token (client id and secret in the
 * body; code and refresh grants; one-hour access tokens; refresh tokens kept), and, for each token, the
 * scopes its user granted. Google's consent screen lets a user untick some of the scopes an app asks for
 * ("granular permissions": "the application must check what scopes are granted by the users and can't
 * assume users grant all requested scopes", developers.google.com/identity/protocols/oauth2/resources/
 * granular-permissions, checked 2026-11-26); the token answer's `scope` lists the granted ones,
 * space-separated.
 */
import { randomBytes } from "node:crypto";
import { OAuthServer } from "../../src/platform/emulator-kit.ts";

const ACCESS_TTL_S = 3600;

/** What the emulated Google project may ask for: every YouTube Data API scope. */
const KNOWN_SCOPES = [
  "https://www.googleapis.com/auth/youtube",
  "https://www.googleapis.com/auth/youtube.force-ssl",
  "https://www.googleapis.com/auth/youtube.readonly",
  "https://www.googleapis.com/auth/youtube.upload",
  "https://www.googleapis.com/auth/youtubepartner",
  "https://www.googleapis.com/auth/yt-analytics.readonly",
];

/** Google's authorization server for the emulated project: granular consent over the YouTube scopes. */
export function googleOAuth(): OAuthServer {
  return new OAuthServer({
    clientAuth: "body",
    accessTtlS: ACCESS_TTL_S,
    refresh: "kept",
    newToken: (kind) =>
      kind === "access" ? `ya29.${randomBytes(16).toString("hex")}` : `1//${randomBytes(16).toString("hex")}`,
    answer: { token_type: "Bearer" },
    grantable: KNOWN_SCOPES,
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
