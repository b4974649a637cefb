/**
 * YouTube Data API v3: one video per post by resumable upload (Crier streams the bytes), "submitted"
 * until YouTube has processed it. The content becomes the description; the title is
 * platform_options.title or the content's first line.
 */
import { t } from "elysia";
import {
  definePlugin,
  unreadableMedia,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type PostMetrics,
  type PublishJob,
  type RecentPost,
  type FindQuery,
  type FindResult,
} from "../../src/platform/sdk.ts";
import { findAmongRecent } from "../../src/platform/find-published.ts";
import {
  connectCall,
  oauthFlow,
  tokenCredentials,
  bearerAuth,
  refreshTokenGrant,
  refreshAhead,
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";
import { parseRetryAfter } from "../../src/platform/retry-after.ts";

const TOKEN_URL = "https://oauth2.googleapis.com/token";
const TOKEN_ENDPOINT: TokenEndpoint = { tokenUrl: TOKEN_URL, clientAuth: "body" };
const TITLE_MAX = 100;
const DESCRIPTION_MAX_BYTES = 5000;
const SHORTS_MAX_SECONDS = 180;

/** platform_options.title, else the first line of the content; YouTube refuses < and > in titles. */
export function titleOf(job: Pick<PublishJob, "content" | "options">): string {
  const given = (job.options as { title?: string }).title;
  const line =
    given ??
    job.content
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ??
    "";
  return [...line.replace(/[<>]/g, "")].slice(0, TITLE_MAX).join("") || "Untitled";
}

interface Handle {
  id: string;
  shorts: boolean;
}

const watchUrl = (h: Handle) =>
  h.shorts ? `https://www.youtube.com/shorts/${h.id}` : `https://www.youtube.com/watch?v=${h.id}`;

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const video = job.media[0];
  const stale = await refreshAhead(ctx, refresh);
  if (stale) return stale;
  let body: Awaited<ReturnType<PluginContext["media"]["open"]>>;
  let size: number;
  let bytes: Uint8Array | null = null;
  try {
    body = await ctx.media.open(video);
    size = body.size ?? (bytes = await body.bytes()).length;
  } catch (e) {
    return unreadableMedia(e);
  }
  if (!body.contentType.startsWith("video/"))
    return { kind: "permanent", reason: `${body.contentType} is not a video`, code: "unsupported_media" };
  const options = job.options as { privacy_status?: string; ai_generated?: boolean; description?: string };
  const session = await ctx.http.request("POST", "/upload/youtube/v3/videos", {
    query: { uploadType: "resumable", part: "snippet,status" },
    headers: { ...bearerAuth(ctx), "x-upload-content-length": String(size), "x-upload-content-type": body.contentType },
    json: {
      snippet: { title: titleOf(job), description: options.description ?? job.content, categoryId: "22" },
      status: {
        privacyStatus: options.privacy_status ?? "public",
        selfDeclaredMadeForKids: false,
        ...(options.ai_generated !== undefined && { containsSyntheticMedia: options.ai_generated }),
      },
    },
  });
  if (!session.ok) return session.outcome;
  const location = session.headers.get("location");
  if (!location) return { kind: "retryable", reason: "YouTube opened no upload session" };
  // Sending the bytes is what creates the video.
  const uploaded = await ctx.http.request<{ id: string }>("PUT", location, {
    headers: { ...bearerAuth(ctx), "content-type": body.contentType },
    body: (bytes ?? body.stream()) as BodyInit,
    creates: true,
    timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 30 * 60_000),
  });
  if (!uploaded.ok) return uploaded.outcome;
  const shorts =
    (video.duration ?? Infinity) <= SHORTS_MAX_SECONDS &&
    !!video.width &&
    !!video.height &&
    video.height >= video.width;
  return checkStatus(ctx, JSON.stringify({ id: uploaded.body.id, shorts } satisfies Handle));
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const h = JSON.parse(handle) as Handle;
  const res = await ctx.http.request<{
    items?: { id: string; status?: { uploadStatus?: string; failureReason?: string; rejectionReason?: string } }[];
  }>("GET", "/youtube/v3/videos", { query: { part: "status,processingDetails", id: h.id }, headers: bearerAuth(ctx) });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  const status = res.body.items?.[0]?.status;
  if (!status)
    return { kind: "permanent", reason: "YouTube no longer knows the uploaded video", code: "video_missing" };
  if (status.uploadStatus === "processed") return { kind: "published", platformPostId: h.id, url: watchUrl(h) };
  if (status.uploadStatus === "failed" || status.uploadStatus === "rejected" || status.uploadStatus === "deleted") {
    return {
      kind: "permanent",
      reason: `YouTube ${status.uploadStatus} the video: ${status.failureReason ?? status.rejectionReason ?? "no reason given"}`,
      code: "video_processing_failed",
    };
  }
  return { kind: "submitted", handle };
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "Google", holder: "channel" });

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const channel = await ctx.http.request<{
    items?: { contentDetails?: { relatedPlaylists?: { uploads?: string } } }[];
  }>("GET", "/youtube/v3/channels", {
    query: { part: "contentDetails", mine: true },
    headers: bearerAuth(ctx),
  });
  if (!channel.ok) throw new Error(`YouTube channel: ${channel.outcome.reason}`);
  const uploads = channel.body.items?.[0]?.contentDetails?.relatedPlaylists?.uploads;
  if (!uploads) return [];
  const res = await ctx.http.request<{
    items?: {
      snippet?: {
        title?: string;
        description?: string;
        publishedAt?: string;
        thumbnails?: { high?: { url?: string } };
      };
      contentDetails?: { videoId?: string; videoPublishedAt?: string };
    }[];
  }>("GET", "/youtube/v3/playlistItems", {
    query: { part: "snippet,contentDetails", playlistId: uploads, maxResults: 50 },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`YouTube uploads: ${res.outcome.reason}`);
  return (res.body.items ?? [])
    .filter((i) => i.contentDetails?.videoId)
    .map((i): RecentPost => {
      const id = i.contentDetails!.videoId!;
      return {
        platformPostId: id,
        url: `https://www.youtube.com/watch?v=${id}`,
        // The spec: for YouTube videos posted elsewhere the caption is the video title.
        content: i.snippet?.title ?? "",
        // The Data API never hands out the video file: the watch page is all there is.
        media: [
          {
            url: `https://www.youtube.com/watch?v=${id}`,
            type: "video",
            downloadable: false,
            ...(i.snippet?.thumbnails?.high?.url && { thumbnail_url: i.snippet.thumbnails.high.url }),
          },
        ],
        createdAt: new Date(i.contentDetails?.videoPublishedAt ?? i.snippet?.publishedAt ?? Date.now()),
        kind: "video",
      };
    })
    .filter((p) => !since || p.createdAt > since);
}

/** The uploads listing shows titles: look for the title the publish gave the video. */
function findPublished(ctx: PluginContext, q: FindQuery): Promise<FindResult> {
  return findAmongRecent(ctx, { ...q, content: titleOf(q) }, fetchRecent);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += 50) {
    const res = await ctx.http.request<{
      items?: { id: string; statistics?: { viewCount?: string; likeCount?: string; commentCount?: string } }[];
    }>("GET", "/youtube/v3/videos", {
      query: { part: "statistics", id: ids.slice(i, i + 50).join(",") },
      headers: bearerAuth(ctx),
    });
    if (!res.ok) throw new Error(`YouTube videos: ${res.outcome.reason}`);
    const num = (v?: string) => (v === undefined ? null : Number(v));
    for (const v of res.body.items ?? []) {
      out[v.id] = {
        views: num(v.statistics?.viewCount),
        likes: num(v.statistics?.likeCount),
        comments: num(v.statistics?.commentCount),
        shares: null,
        saves: null,
      };
    }
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{
    items?: { statistics?: { subscriberCount?: string; hiddenSubscriberCount?: boolean } }[];
  }>("GET", "/youtube/v3/channels", {
    query: { part: "statistics", mine: true },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`YouTube channel statistics: ${res.outcome.reason}`);
  const s = res.body.items?.[0]?.statistics;
  // A channel may hide its subscriber count: then there is no number, not zero.
  return {
    followers: s && !s.hiddenSubscriberCount && s.subscriberCount !== undefined ? Number(s.subscriberCount) : null,
  };
}

export default definePlugin({
  platform: "youtube",
  displayName: "YouTube",
  defaultApiUrl: "https://www.googleapis.com",
  // The description: 5,000 bytes.
  textLimit: { max: DESCRIPTION_MAX_BYTES, unit: "bytes" },
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: false,
    images: false,
    video: true,
    replies: false,
    threads: false,
  },
  mediaRequirements: {
    supported_formats: ["video/mp4", "video/quicktime", "video/webm"],
    convertible_formats: {},
    max_size_bytes: { image: 0, video: 256 * GB, gif: 0 },
    file_constraints: {
      maxFiles: 1,
      maxImageFiles: 0,
      maxVideoFiles: 1,
      maxGifFiles: 0,
      allowMixedMedia: false,
      shorts: "3 minutes or less, vertical or square",
    },
    required_media: mediaRequired("YouTube", ["video"], "exactly one video"),
    max_hashtags: 60,
    min_video_duration_seconds: null,
    max_video_duration_seconds: 12 * 3600,
    aspect_ratio: null,
    thumbnail: { formats: ["image/jpeg", "image/png"], max_size_bytes: 2 * MB },
  },
  optionsSchema: t.Object(
    {
      title: t.Optional(
        t.String({
          minLength: 1,
          maxLength: TITLE_MAX,
          pattern: "^[^<>]*$",
          description: "Defaults to the first line of the content.",
        }),
      ),
      privacy_status: t.Optional(t.UnionEnum(["public", "unlisted", "private"], { default: "public" })),
      privacy: t.Optional(
        t.UnionEnum(["public", "unlisted", "private"], {
          description: "Another name for privacy_status (the hosted service's); send one or the other.",
        }),
      ),
      description: t.Optional(
        t.String({
          maxLength: DESCRIPTION_MAX_BYTES,
          description: "The video description (the hosted service's name); defaults to the content.",
        }),
      ),
      ai_generated: t.Optional(t.Boolean({ description: "Sets status.containsSyntheticMedia." })),
    },
    { additionalProperties: true },
  ),
  optionAliases: { privacy: { option: "privacy_status" } },
  connect: oauthFlow({
    authorizeUrl: "https://accounts.google.com/o/oauth2/v2/auth",
    ...TOKEN_ENDPOINT,
    pkce: true,
    scopes: [
      "https://www.googleapis.com/auth/youtube.upload",
      "https://www.googleapis.com/auth/youtube.readonly",
      "https://www.googleapis.com/auth/yt-analytics.readonly",
    ],
    extraAuthorizeParams: { access_type: "offline", prompt: "consent" },
    async identity(c, token) {
      const list = await connectCall<{
        items?: {
          id: string;
          snippet?: { title?: string; customUrl?: string; thumbnails?: { default?: { url?: string } } };
        }[];
      }>(c, "Reading the YouTube channel", "GET", "/youtube/v3/channels", {
        query: { part: "snippet", mine: true },
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      const ch = list.items?.[0];
      if (!ch) throw new Error("This Google account has no YouTube channel");
      return {
        remoteId: ch.id,
        username: ch.snippet?.customUrl ?? ch.snippet?.title ?? ch.id,
        avatarUrl: ch.snippet?.thumbnails?.default?.url ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    const body = res.body as { error?: { message?: string; errors?: { reason?: string }[] } } | null;
    const reason = body?.error?.errors?.[0]?.reason ?? "";
    const message = body?.error?.message ?? `HTTP ${res.status}`;
    // Quotas reset daily and rate limits within minutes: both are worth another try later.
    if (["quotaExceeded", "uploadLimitExceeded"].includes(reason))
      return { kind: "retryable", reason: `${reason}: ${message}`, retryAfterMs: 3600_000 };
    if (res.status === 429 || reason === "rateLimitExceeded" || reason === "userRateLimitExceeded") {
      return {
        kind: "retryable",
        reason: `rate limited: ${message}`,
        retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), new Date()) ?? 60_000,
      };
    }
    if (
      res.status === 400 &&
      ["invalidTitle", "invalidDescription", "invalidTags", "invalidCategoryId"].includes(reason)
    )
      return { kind: "permanent", reason: message, code: reason };
    return undefined;
  },
  publish,
  checkStatus,
  refresh,
  fetchRecent,
  findPublished,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments"],
});
