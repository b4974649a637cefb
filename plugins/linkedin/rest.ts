/**
 * What every call of LinkedIn's versioned REST API shares: the LinkedIn-Version and its support window,
 * the headers, little text, and the address of a post.
 */
import type { PluginContext } from "../../src/platform/sdk.ts";

/**
 * The LinkedIn-Version sent by default: Marketing July 2026, the latest version the versioning page names
 * (learn.microsoft.com/en-us/linkedin/marketing/versioning, checked 2026-11-26). LinkedIn supports each
 * monthly version "for a minimum of one year" and lists each sunset on the migrations page
 * (learn.microsoft.com/en-us/linkedin/marketing/integrations/migrations: 202510 on October 15, 2026,
 * 202511 on November 16, 2026, 202603 on March 16, 2027), after which calls get 426 NONEXISTENT_VERSION.
 */
export const DEFAULT_VERSION = "202607";

/** When LinkedIn will stop serving a YYYYMM version: about the middle of the same month a year on. */
export function versionSunset(version: string): Date | null {
  const m = /^(\d{4})(\d{2})(?:\.\d{2})?$/.exec(version);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 12) return null;
  return new Date(Date.UTC(Number(m[1]) + 1, Number(m[2]) - 1, 15));
}

const WARN_BEFORE_MS = 61 * 86400_000;

/** A warning for the log at start when the configured version is sunset or within two months of it. */
export function versionWarnings(settings: Record<string, string | undefined>, now: Date): string[] {
  const version = settings.VERSION ?? DEFAULT_VERSION;
  const sunset = versionSunset(version);
  if (!sunset)
    return [`CRIER_LINKEDIN_VERSION=${version} is not a LinkedIn version (YYYYMM): every LinkedIn call will fail`];
  const day = sunset.toISOString().slice(0, 10);
  if (now >= sunset)
    return [
      `LinkedIn-Version ${version} is past its sunset (about ${day}): LinkedIn refuses it; set CRIER_LINKEDIN_VERSION to a version LinkedIn lists as active`,
    ];
  if (sunset.getTime() - now.getTime() <= WARN_BEFORE_MS)
    return [
      `LinkedIn-Version ${version} is sunset about ${day}: set CRIER_LINKEDIN_VERSION to a newer version LinkedIn lists as active before then`,
    ];
  return [];
}

export const headers = (ctx: PluginContext) => ({
  authorization: `Bearer ${String(ctx.credentials.access_token)}`,
  "linkedin-version": ctx.settings.VERSION ?? DEFAULT_VERSION,
  "x-restli-protocol-version": "2.0.0",
});

/** Little text: these characters are markup unless escaped with a backslash. */
export function escapeLittleText(text: string): string {
  return text.replace(/[\\|{}@[\]()<>#*_~]/g, (c) => `\\${c}`);
}

export const postUrl = (urn: string) => `https://www.linkedin.com/feed/update/${urn}`;

/** What a reader sees of little text: the escapes removed. */
export const unescapeLittleText = (text: string) => text.replace(/\\(.)/g, "$1");
