/**
 * Mastodon, and the servers that speak its client API (GoToSocial, Akkoma, Pleroma as far as they do).
 * Every account lives on a server its user names at connect (connect.ts); each server has its own limits
 * (server.ts), read from GET /api/v2/instance and checked before a status goes out (publish.ts). A thread
 * is a chain of in_reply_to_id; the first comment is a reply. Reference: docs.joinmastodon.org (read
 * 2026-11-26), with the entities' shapes from `masto` (contract.ts).
 */
import { t } from "elysia";
import { parseRetryAfter } from "../../src/platform/http.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";
import { MB } from "../../src/platform/limits.ts";
import { reasonOf } from "../../src/platform/http.ts";
import {
  definePlugin,
  type AccountLimits,
  type DeclaredMediaRequirements,
  type FailureOutcome,
  type PluginContext,
  type ProviderResponse,
} from "../../src/platform/sdk.ts";
import { connect } from "./connect.ts";
import { checkStatus, publish } from "./publish.ts";
import { accountStats, fetchRecent, findPublished, metrics } from "./reads.ts";
import { accountBase, DEFAULT_API_URL, DEFAULT_LIMITS, limitsOf, type ServerLimits } from "./server.ts";

/**
 * Mastodon's 429 carries X-RateLimit-Reset, a timestamp (docs.joinmastodon.org/api/rate-limits/, read
 * 2026-11-26), rather than Retry-After; 403 is a scope the token lacks; 422 a status the server refused.
 */
function classifyResponse(res: ProviderResponse): FailureOutcome | undefined {
  if (res.status === 429) {
    const reset = Date.parse(res.headers.get("x-ratelimit-reset") ?? "");
    const retryAfterMs = Number.isFinite(reset)
      ? Math.max(1_000, reset - Date.now())
      : parseRetryAfter(res.headers.get("retry-after"), new Date());
    return { kind: "retryable", reason: `rate limited: ${reasonOf(res.body, 429)}`, retryAfterMs };
  }
  if (res.status === 403)
    return {
      kind: "permanent",
      code: "forbidden",
      reason: `${reasonOf(res.body, 403)} (connect the account again to grant it)`,
    };
  if (res.status === 422) return { kind: "permanent", code: "unprocessable", reason: reasonOf(res.body, 422) };
  return undefined;
}

/** Disconnecting revokes Crier's token on the server (POST /oauth/revoke, docs.joinmastodon.org/methods/oauth/#revoke). */
async function onDisconnect(ctx: PluginContext): Promise<void> {
  const app = ctx.credentials.app as { client_id?: string; client_secret?: string } | undefined;
  if (!app?.client_id || !app.client_secret) return;
  const res = await ctx.http.request("POST", `${accountBase(ctx)}/oauth/revoke`, {
    form: { client_id: app.client_id, client_secret: app.client_secret, token: String(ctx.credentials.access_token) },
  });
  if (!res.ok) ctx.log.warn("mastodon: could not revoke the token", { reason: res.outcome.reason });
}

const withoutPoll = (options: Record<string, unknown>) => {
  const { poll: _poll, ...rest } = options;
  return rest;
};

// Mastodon's defaults (docs.joinmastodon.org/user/posting/#attachments and the /api/v2/instance example,
// read 2026-11-26): images (PNG, JPEG, HEIF, WebP, AVIF) up to 16 MB, one animated GIF up to 16 MB
// (made a looping video), one video (MP4, MOV, WebM) up to 99 MB, up to 4 files, a video never beside
// images ("images_and_video" in PostStatusService). Servers may differ: publish checks each account's.
const DECLARED_MEDIA: DeclaredMediaRequirements = {
  supported_formats: [
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/heic",
    "image/avif",
    "video/mp4",
    "video/quicktime",
    "video/webm",
  ],
  convertible_formats: {},
  max_size_bytes: { image: 16 * MB, video: DEFAULT_LIMITS.videoBytes, gif: 16 * MB },
  file_constraints: {
    maxFiles: DEFAULT_LIMITS.maxMedia,
    maxImageFiles: DEFAULT_LIMITS.maxMedia,
    maxVideoFiles: 1,
    maxGifFiles: 1,
    allowMixedMedia: false,
    gifBehavior: "converted to a looping soundless video",
    maxImagePixels: DEFAULT_LIMITS.imagePixels,
    maxFrameRate: DEFAULT_LIMITS.videoFrameRate,
    maxVideoPixels: DEFAULT_LIMITS.videoPixels,
    perServer:
      "Each server sets its own limits (GET /api/v2/instance); these are Mastodon's defaults, and a status is checked against its account's server before it is sent.",
  },
  required_media: null,
  max_hashtags: null,
  min_video_duration_seconds: null,
  max_video_duration_seconds: null,
  aspect_ratio: null,
  thumbnail: null,
};

/**
 * The account's own server's limits (read from /api/v2/instance at connect and stored with the account),
 * as its media_requirements and text limit: what the account shows and what creation checks.
 */
function serverRequirements(stored: unknown): AccountLimits | undefined {
  if (!stored || typeof stored !== "object") return undefined;
  const l = limitsOf(undefined);
  Object.assign(l, stored as Partial<ServerLimits>);
  const fc = DECLARED_MEDIA.file_constraints;
  return {
    textMax: l.maxCharacters,
    mediaRequirements: {
      ...DECLARED_MEDIA,
      supported_formats: DECLARED_MEDIA.supported_formats.filter((f) => l.supportedTypes.includes(f)),
      max_size_bytes: { image: l.imageBytes, video: l.videoBytes, gif: l.imageBytes },
      file_constraints: {
        ...fc,
        maxFiles: l.maxMedia,
        maxImageFiles: l.maxMedia,
        maxImagePixels: l.imagePixels,
        maxFrameRate: l.videoFrameRate,
        maxVideoPixels: l.videoPixels,
        perServer: "This account's server's own limits, read from its GET /api/v2/instance when it was connected.",
      },
    },
  };
}

export default definePlugin({
  platform: "mastodon",
  displayName: "Mastodon",
  defaultApiUrl: DEFAULT_API_URL,
  // Mastodon's default of 500, counted its way (src/platform/text.ts mastodonLength); a server may set
  // another, which publish checks against the server's own configuration (configuration.statuses).
  textLimit: { max: DEFAULT_LIMITS.maxCharacters, unit: "mastodon" },
  // `description` of POST /api/v2/media, up to configuration.media_attachments.description_limit (1,500 by
  // default: docs.joinmastodon.org/entities/Instance/#description_limit, read 2026-11-26), for every kind.
  altText: {
    image: { max_length: DEFAULT_LIMITS.descriptionLimit, unit: "graphemes" },
    video: { max_length: DEFAULT_LIMITS.descriptionLimit, unit: "graphemes" },
  },
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: true,
    images: true,
    video: true,
    replies: true,
    threads: true,
  },
  mediaRequirements: DECLARED_MEDIA,
  accountLimits: (metadata) => serverRequirements(metadata.limits),
  optionsSchema: t.Object(
    {
      visibility: t.Optional(
        t.UnionEnum(["public", "unlisted", "private", "direct"], {
          description:
            "Extension (Mastodon): who sees the status: public, unlisted (not in public timelines), private (followers only) or direct (the people it mentions). Default: the account's own preference.",
        }),
      ),
      spoiler_text: t.Optional(
        t.String({
          maxLength: 1000,
          description:
            "Extension (Mastodon): a content warning shown before the status, which stays collapsed behind it. It counts toward the server's character limit.",
        }),
      ),
      sensitive: t.Optional(
        t.Boolean({ description: "Extension (Mastodon): mark the media as sensitive (hidden behind a warning)." }),
      ),
      language: t.Optional(
        t.String({
          pattern: "^[a-z]{2,3}$",
          description: "Extension (Mastodon): the status's ISO 639 language code, e.g. en.",
        }),
      ),
      poll: t.Optional(
        t.Object(
          {
            options: t.Array(t.String({ minLength: 1 }), {
              minItems: 2,
              description: "The answers (a server's default: at most 4 of 50 characters).",
            }),
            expires_in: t.Integer({
              minimum: 1,
              description: "Seconds the poll stays open (a server's default: 300 to 2,629,746).",
            }),
            multiple: t.Optional(t.Boolean({ description: "Voters may pick several answers." })),
            hide_totals: t.Optional(t.Boolean({ description: "Hide the counts until the poll ends." })),
          },
          {
            additionalProperties: false,
            description:
              "Extension (Mastodon): a poll on the status; a status carries either files or a poll, not both.",
          },
        ),
      ),
    },
    { additionalProperties: true },
  ),
  requiredScopes: {
    publish: ["write:statuses", "write:media"],
    metrics: ["read:statuses"],
    account_stats: ["read:accounts"],
    workflow_source: ["read:statuses"],
    first_comment: ["write:statuses"],
  },
  connect,
  disconnect: {
    message: "Crier revoked its access token on your server and forgot it; nothing is left to revoke there.",
  },
  onDisconnect,
  classifyResponse,
  publish,
  checkStatus,
  // The first comment is a reply by the same account (in_reply_to_id), a status like any other: the
  // target's visibility, language and content warning, never its poll.
  firstComment: {
    kind: "reply",
    textLimit: { max: DEFAULT_LIMITS.maxCharacters, unit: "mastodon" },
    scopes: ["write:statuses"],
    publish: (ctx, comment) => publishAsReply(publish, ctx, { ...comment, options: withoutPoll(comment.options) }),
  },
  // Mastodon tokens have no expiry and no refresh token (docs.joinmastodon.org/entities/Token/, read
  // 2026-11-26): there is nothing to refresh; a revoked token means connecting again.
  fetchRecent,
  findPublished,
  metrics,
  metricNames: ["likes", "comments", "shares"],
  accountStats,
});
