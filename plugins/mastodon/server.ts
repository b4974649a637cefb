/**
 * The server an account lives on: naming it from what a user types, where its API is reached, and its own
 * limits (GET /api/v2/instance, whose `configuration` says how long a status may be, how many files and how
 * large, which types, and the poll rules; docs.joinmastodon.org/methods/instance/#v2 and
 * /entities/Instance/#configuration, read 2026-11-26). Servers differ: the defaults below are Mastodon's
 * own, for servers that do not say.
 */
import type { ConnectContext, PluginContext, ProviderHttp } from "../../src/platform/sdk.ts";
import type { InstanceConfiguration } from "./contract.ts";

/** The real API's default; every account's calls go to its own server instead (serverBase). */
export const DEFAULT_API_URL = "https://mastodon.social";

/**
 * What Crier relies on of a server's configuration. Mastodon's defaults (the documented example of
 * /api/v2/instance and docs.joinmastodon.org/user/posting/, read 2026-11-26): 500 characters, a link as
 * 23, 4 files, images to 16 MB and 33,177,600 pixels, video to 99 MB (103,809,024 bytes), 8,294,400 pixels
 * and 120 fps, alt text to 1,500 characters, polls of at most 4 options of 50 characters, open 5 minutes
 * to a month.
 */
export interface ServerLimits {
  maxCharacters: number;
  reservedPerUrl: number;
  maxMedia: number;
  supportedTypes: string[];
  imageBytes: number;
  videoBytes: number;
  imagePixels: number;
  videoPixels: number;
  videoFrameRate: number;
  descriptionLimit: number;
  pollOptions: number;
  pollOptionCharacters: number;
  pollMinSeconds: number;
  pollMaxSeconds: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxCharacters: 500,
  reservedPerUrl: 23,
  maxMedia: 4,
  supportedTypes: [
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/heic",
    "image/heif",
    "image/webp",
    "image/avif",
    "video/webm",
    "video/mp4",
    "video/quicktime",
    "video/ogg",
  ],
  imageBytes: 16_777_216,
  videoBytes: 103_809_024,
  imagePixels: 33_177_600,
  videoPixels: 8_294_400,
  videoFrameRate: 120,
  descriptionLimit: 1_500,
  pollOptions: 4,
  pollOptionCharacters: 50,
  pollMinSeconds: 300,
  pollMaxSeconds: 2_629_746,
};

const num = (v: unknown, fallback: number) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : fallback);

/** The limits a configuration states, each missing one at Mastodon's default (older servers, forks). */
export function limitsOf(conf: Partial<InstanceConfiguration> | undefined | null): ServerLimits {
  const d = DEFAULT_LIMITS;
  const st = conf?.statuses;
  const ma = conf?.media_attachments;
  const po = conf?.polls;
  return {
    maxCharacters: num(st?.max_characters, d.maxCharacters),
    reservedPerUrl: num(st?.characters_reserved_per_url, d.reservedPerUrl),
    maxMedia: num(st?.max_media_attachments, d.maxMedia),
    supportedTypes:
      Array.isArray(ma?.supported_mime_types) && ma.supported_mime_types.length
        ? [...ma.supported_mime_types]
        : d.supportedTypes,
    imageBytes: num(ma?.image_size_limit, d.imageBytes),
    videoBytes: num(ma?.video_size_limit, d.videoBytes),
    imagePixels: num(ma?.image_matrix_limit, d.imagePixels),
    videoPixels: num(ma?.video_matrix_limit, d.videoPixels),
    videoFrameRate: num(ma?.video_frame_rate_limit, d.videoFrameRate),
    descriptionLimit: num((ma as { description_limit?: number } | undefined)?.description_limit, d.descriptionLimit),
    pollOptions: num(po?.max_options, d.pollOptions),
    pollOptionCharacters: num(po?.max_characters_per_option, d.pollOptionCharacters),
    pollMinSeconds: num(po?.min_expiration, d.pollMinSeconds),
    pollMaxSeconds: num(po?.max_expiration, d.pollMaxSeconds),
  };
}

/**
 * The server's host from what a user typed: "mastodon.social", "@me@mastodon.social",
 * "https://mastodon.social/@me". Null when it names no host.
 */
export function serverName(input: string): string | null {
  let text = input.trim();
  const handle = /^@?[^@\s/]+@([^@\s/]+)$/.exec(text);
  if (handle) text = handle[1];
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) text = `https://${text}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  const host = url.host.toLowerCase();
  // A dotted name (or an address with a port): "localhost" and bare words are not servers.
  return /^[a-z0-9.-]+\.[a-z0-9-]+(:\d+)?$/.test(host) || /^\[[0-9a-f:.]+\](:\d+)?$/.test(host) ? host : null;
}

/**
 * Where a server's API is reached. CRIER_MASTODON_API_URL, when set, points every server at that one URL
 * (the tests' emulator, a proxy); a sandbox profile's calls go to its emulator; otherwise each server is
 * reached at its own https:// address.
 */
export function serverBase(c: { http: ProviderHttp; settings: Record<string, string | undefined> }, server: string) {
  return overridden(c) ? c.http.baseUrl : `https://${server}`;
}

/** The base URL is not the real one: every server is the one place it names, already trusted by the operator. */
export const overridden = (c: { http: ProviderHttp; settings: Record<string, string | undefined> }) =>
  Boolean(c.settings.API_URL) || c.http.baseUrl !== DEFAULT_API_URL;

/** The account's server and base URL, from its metadata. */
export function accountBase(ctx: PluginContext): string {
  return serverBase(ctx, String(ctx.account.metadata.server ?? new URL(DEFAULT_API_URL).host));
}

const INSTANCE_TTL_MS = 60 * 60_000;
const instances = new Map<string, { at: number; limits: ServerLimits }>();

/**
 * The server's limits, read from /api/v2/instance at most hourly per server (a public call), else
 * /api/v1/instance's configuration (servers before 4.0, Pleroma), else what was read at connect.
 */
export async function serverLimits(c: PluginContext | ConnectContext, base: string, stored?: unknown) {
  const hit = instances.get(base);
  const now = c.now().getTime();
  if (hit && now - hit.at < INSTANCE_TTL_MS) return hit.limits;
  for (const path of ["/api/v2/instance", "/api/v1/instance"]) {
    const res = await c.http.request<{ configuration?: InstanceConfiguration }>("GET", `${base}${path}`);
    if (res.ok && res.body?.configuration) {
      const limits = limitsOf(res.body.configuration);
      instances.set(base, { at: now, limits });
      return limits;
    }
  }
  return stored && typeof stored === "object"
    ? { ...DEFAULT_LIMITS, ...(stored as Partial<ServerLimits>) }
    : DEFAULT_LIMITS;
}

/** Forgets what was read of the servers' limits (tests change an emulator's configuration). */
export function forgetServerLimits(): void {
  instances.clear();
}
