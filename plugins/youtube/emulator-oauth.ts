/**
 * Google's OAuth as the YouTube emulator serves it (src/platform/google-emulator.ts): granular consent over
 * the YouTube scopes.
 */
import type { OAuthServer } from "../../src/platform/emulator-kit.ts";
import { googleOAuthServer } from "../../src/platform/google-emulator.ts";

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
  return googleOAuthServer(KNOWN_SCOPES);
}
