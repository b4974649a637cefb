/**
 * YouTube Data API v3: one video per post by resumable upload (Crier streams the bytes), "submitted"
 * until YouTube has processed it. The content becomes the description; the title is
 * platform_options.title or the content's first line. Request bodies and the answers read are typed by
 * YouTube's own contract (./contract.ts, from @googleapis/youtube).
 */
import { t } from "elysia";
import {
  ConnectError,
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
  type CommentJob,
  type CommentOutcome,
} from "../../src/platform/sdk.ts";
import { findAmongRecent } from "../../src/platform/find-published.ts";
import { findComment, oldestOf } from "../../src/platform/find-comment.ts";
import { connectCall, oauthFlow, tokenCredentials, bearerAuth, refreshAhead } from "../../src/platform/oauth.ts";
import {
  GOOGLE_AUTHORIZE_URL,
  GOOGLE_OFFLINE_PARAMS,
  GOOGLE_TOKEN_ENDPOINT,
  googleRefresh,
} from "../../src/platform/google.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";
import { parseRetryAfter } from "../../src/platform/retry-after.ts";
import { utf16Prefix, utf8Length } from "../../src/platform/text.ts";
import type {
  ChannelListResponse,
  CommentThread,
  CommentThreadListResponse,
  PlaylistItemListResponse,
  Video,
  VideoListResponse,
} from "./contract.ts";

const TITLE_MAX = 100;
const UPLOAD_SCOPE = "https://www.googleapis.com/auth/youtube.upload";
const READ_SCOPE = "https://www.googleapis.com/auth/youtube.readonly";
/** Granted instead of the two above when the app asks for it; Crier does not. */
const FULL_SCOPE = "https://www.googleapis.com/auth/youtube";
/**
 * commentThreads.insert accepts this scope only (its Authorization section, developers.google.com/youtube/
 * v3/docs/commentThreads/insert, read 2026-11-26): the upload scope does not allow comments.
 */
const COMMENT_SCOPE = "https://www.googleapis.com/auth/youtube.force-ssl";
/**
 * A comment's longest text. commentThreads.insert refuses a textOriginal with "too many characters"
 * (commentTextTooLong, read 2026-11-26) without naming the number; 10,000 characters is the length
 * YouTube's own comment box takes, so Crier refuses a longer text at creation.
 */
const COMMENT_MAX = 10_000;
const DESCRIPTION_MAX_BYTES = 5000;
const SHORTS_MAX_SECONDS = 180;

/**
 * Titles and descriptions "may contain all valid UTF-8 characters except < and >" (YouTube Data API,
 * videos resource, snippet.title and snippet.description; checked 2026-11-26). They become the look-alike
 * single angle quotation marks ‹ and ›, so "->" and "<3" still read as the author meant.
 */
const lookAlike = (text: string) => text.replace(/</g, "\u2039").replace(/>/g, "\u203a");

/**
 * platform_options.title, else the first line of the content, without < and > (see lookAlike), at most
 * 100 characters. Counted in UTF-16 units, the stricter reading of YouTube's "characters", so no emoji
 * can push a title past the limit.
 */
export function titleOf(job: Pick<PublishJob, "content" | "options">): string {
  const given = (job.options as { title?: string }).title;
  const line =
    given ??
    job.content
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ??
    "";
  return utf16Prefix(lookAlike(line), TITLE_MAX).trim() || "Untitled";
}

/**
 * The description YouTube takes: the text with < and > as look-alikes. Those are 3 bytes in UTF-8 where
 * < and > were 1, so a text they would push past YouTube's 5,000 bytes loses its < and > instead.
 */
export function descriptionOf(text: string): string {
  const shown = lookAlike(text);
  return utf8Length(shown) <= DESCRIPTION_MAX_BYTES ? shown : text.replace(/[<>]/g, "");
}

/** The video resource the upload sets (snippet and status), held to YouTube's contract by its type. */
export function videoResource(job: Pick<PublishJob, "content" | "options">, description: string) {
  const options = job.options as { privacy_status?: string; ai_generated?: boolean };
  return {
    snippet: { title: titleOf(job), description, categoryId: "22" },
    status: {
      privacyStatus: options.privacy_status ?? "public",
      selfDeclaredMadeForKids: false,
      ...(options.ai_generated !== undefined && { containsSyntheticMedia: options.ai_generated }),
    },
  } satisfies Video;
}

interface Handle {
  id: string;
  shorts: boolean;
  /** The privacyStatus asked for (absent in handles written before it was kept). */
  privacy?: string;
  /** Why the cover (media[].thumbnail_url) was not set, told when the video is published. */
  cover?: Notice;
}

type Notice = { code: string; message: string };

/**
 * Sets media[].thumbnail_url as the video's custom thumbnail with thumbnails.set
 * (developers.google.com/youtube/v3/docs/thumbnails/set, checked 2026-11-26: POST
 * /upload/youtube/v3/thumbnails/set?videoId=…, the image as the body, JPEG or PNG of at most 2 MB). The
 * video exists already, so a cover that cannot be set never fails it: the reason is a notice on the
 * published target. A channel may not use custom thumbnails until it is verified (403 forbidden).
 */
async function setThumbnail(ctx: PluginContext, videoId: string, url: string): Promise<Notice | undefined> {
  let image: { contentType: string; bytes: Uint8Array };
  try {
    const body = await ctx.media.open({ url, type: "image" });
    image = { contentType: body.contentType.split(";")[0].trim(), bytes: await body.bytes() };
  } catch (e) {
    return { code: "cover_not_set", message: `The cover image could not be read: ${(e as Error).message}.` };
  }
  const res = await ctx.http.request("POST", "/upload/youtube/v3/thumbnails/set", {
    query: { videoId, uploadType: "media" },
    headers: { ...bearerAuth(ctx), "content-type": image.contentType },
    body: image.bytes as Uint8Array<ArrayBuffer>,
  });
  if (res.ok) return undefined;
  const forbidden = res.status === 403;
  return {
    code: forbidden ? "cover_not_allowed" : "cover_not_set",
    message: forbidden
      ? "YouTube did not set the cover: this channel may not use custom thumbnails (verify the channel in YouTube Studio); YouTube picked a frame instead."
      : `YouTube did not set the cover (${res.outcome.reason}); it picked a frame instead.`,
  };
}

/** The notices of one publish, as the one a target carries. */
const joinNotices = (notices: (Notice | undefined)[]): Notice | undefined => {
  const all = notices.filter((n): n is Notice => !!n);
  return all.length ? { code: all[0].code, message: all.map((n) => n.message).join(" ") } : undefined;
};

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
  const description = descriptionOf(options.description ?? job.content);
  // The content was measured when the post was made; a description given as an option was not.
  if (utf8Length(description) > DESCRIPTION_MAX_BYTES)
    return {
      kind: "permanent",
      reason: `The description is ${utf8Length(description)} bytes in UTF-8; YouTube takes at most ${DESCRIPTION_MAX_BYTES}.`,
      code: "description_too_long",
    };
  const resource = videoResource(job, description);
  const privacy = resource.status.privacyStatus;
  const session = await ctx.http.request("POST", "/upload/youtube/v3/videos", {
    // part names the parts the body sets: YouTube writes only those.
    query: { uploadType: "resumable", part: Object.keys(resource).join(",") },
    headers: { ...bearerAuth(ctx), "x-upload-content-length": String(size), "x-upload-content-type": body.contentType },
    json: resource,
  });
  if (!session.ok) return session.outcome;
  const location = session.headers.get("location");
  if (!location) return { kind: "retryable", reason: "YouTube opened no upload session" };
  // Sending the bytes is what creates the video.
  const uploaded = await ctx.http.request<Video>("PUT", location, {
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
  if (!uploaded.body.id) return { kind: "unknown", reason: "YouTube took the upload but named no video id" };
  const cover = video.thumbnail_url ? await setThumbnail(ctx, uploaded.body.id, video.thumbnail_url) : undefined;
  const handle: Handle = { id: uploaded.body.id, shorts, privacy, ...(cover && { cover }) };
  return checkStatus(ctx, JSON.stringify(handle));
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const h = JSON.parse(handle) as Handle;
  const res = await ctx.http.request<VideoListResponse>("GET", "/youtube/v3/videos", {
    query: { part: "status,processingDetails", id: h.id },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  const status = res.body.items?.[0]?.status;
  if (!status)
    return { kind: "permanent", reason: "YouTube no longer knows the uploaded video", code: "video_missing" };
  if (status.uploadStatus === "processed") {
    const published = { kind: "published" as const, platformPostId: h.id, url: watchUrl(h) };
    // "All videos uploaded via the videos.insert endpoint from unverified API projects created after
    // 28 July 2020 will be restricted to private viewing mode" (videos.insert reference, 2026-11-26).
    const unaudited =
      h.privacy && h.privacy !== "private" && status.privacyStatus === "private"
        ? {
            code: "youtube_private_unaudited",
            message: `YouTube made the video private though it was uploaded as ${h.privacy}: uploads from a Google API project that has not passed YouTube's API audit are restricted to private viewing. Only the channel owner can watch it until the project is audited and the video made ${h.privacy} in YouTube Studio.`,
          }
        : undefined;
    const notice = joinNotices([unaudited, h.cover]);
    return notice ? { ...published, notice } : published;
  }
  if (status.uploadStatus === "failed" || status.uploadStatus === "rejected" || status.uploadStatus === "deleted") {
    return {
      kind: "permanent",
      reason: `YouTube ${status.uploadStatus} the video: ${status.failureReason ?? status.rejectionReason ?? "no reason given"}`,
      code: "video_processing_failed",
    };
  }
  return { kind: "submitted", handle };
}

const refresh = googleRefresh("channel");

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const channel = await ctx.http.request<ChannelListResponse>("GET", "/youtube/v3/channels", {
    query: { part: "contentDetails", mine: true },
    headers: bearerAuth(ctx),
  });
  if (!channel.ok) throw new Error(`YouTube channel: ${channel.outcome.reason}`);
  const uploads = channel.body.items?.[0]?.contentDetails?.relatedPlaylists?.uploads;
  if (!uploads) return [];
  const res = await ctx.http.request<PlaylistItemListResponse>("GET", "/youtube/v3/playlistItems", {
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

const commentUrl = (videoId: string, commentId: string) =>
  `https://www.youtube.com/watch?v=${videoId}&lc=${encodeURIComponent(commentId)}`;

/**
 * The first comment: commentThreads.insert (`POST /youtube/v3/commentThreads?part=snippet`) with the
 * channel, the video and the top-level comment's textOriginal, answered with the new thread, whose id is
 * its top-level comment's (developers.google.com/youtube/v3/docs/commentThreads/insert, read 2026-11-26).
 */
async function publishComment(ctx: PluginContext, job: CommentJob): Promise<CommentOutcome> {
  const stale = await refreshAhead(ctx, refresh);
  if (stale) return stale;
  const videoId = job.parent.platformPostId;
  const thread = {
    snippet: { channelId: ctx.account.remoteId, videoId, topLevelComment: { snippet: { textOriginal: job.text } } },
  } satisfies CommentThread;
  const res = await ctx.http.request<CommentThread>("POST", "/youtube/v3/commentThreads", {
    query: { part: "snippet" },
    headers: bearerAuth(ctx),
    json: thread,
    creates: true,
  });
  if (!res.ok) return res.outcome;
  const id = res.body.snippet?.topLevelComment?.id ?? res.body.id;
  if (!id) return { kind: "unknown", reason: "YouTube took the comment but named no comment id" };
  return { kind: "published", platformPostId: id, url: commentUrl(videoId, id) };
}

/** The channel's own top-level comments on the video (commentThreads.list by videoId, newest first). */
async function findPostedComment(
  ctx: PluginContext,
  job: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  const stale = await refreshAhead(ctx, refresh);
  if (stale) return { kind: "cannot_tell", reason: stale.reason };
  const videoId = job.parent.platformPostId;
  return findComment(job, window, "top-level comment(s) on the video", async () => {
    const res = await ctx.http.request<CommentThreadListResponse>("GET", "/youtube/v3/commentThreads", {
      query: { part: "snippet", videoId, order: "time", textFormat: "plainText", maxResults: 100 },
      headers: bearerAuth(ctx),
    });
    if (!res.ok) throw new Error(res.outcome.reason);
    const items = (res.body.items ?? []).flatMap((t) => {
      const c = t.snippet?.topLevelComment;
      return c?.id && c.snippet ? [{ id: c.id, s: c.snippet }] : [];
    });
    const at = (s: { publishedAt?: string | null }) => new Date(s.publishedAt ?? 0);
    return {
      comments: items
        .filter((c) => c.s.authorChannelId?.value === ctx.account.remoteId)
        .map((c) => ({
          id: c.id,
          url: commentUrl(videoId, c.id),
          // The original text is returned to its author; the display text otherwise.
          text: c.s.textOriginal ?? c.s.textDisplay ?? "",
          createdAt: at(c.s),
        })),
      more: !!res.body.nextPageToken,
      oldest: oldestOf(items.map((c) => at(c.s))),
    };
  });
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += 50) {
    const res = await ctx.http.request<VideoListResponse>("GET", "/youtube/v3/videos", {
      query: { part: "statistics", id: ids.slice(i, i + 50).join(",") },
      headers: bearerAuth(ctx),
    });
    if (!res.ok) throw new Error(`YouTube videos: ${res.outcome.reason}`);
    const num = (v?: string | null) => (v === undefined || v === null ? null : Number(v));
    for (const v of res.body.items ?? []) {
      if (!v.id) continue;
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
  const res = await ctx.http.request<ChannelListResponse>("GET", "/youtube/v3/channels", {
    query: { part: "statistics", mine: true },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`YouTube channel statistics: ${res.outcome.reason}`);
  const s = res.body.items?.[0]?.statistics;
  // A channel may hide its subscriber count: then there is no number, not zero.
  return {
    followers:
      s && !s.hiddenSubscriberCount && typeof s.subscriberCount === "string" ? Number(s.subscriberCount) : null,
  };
}

export default definePlugin({
  platform: "youtube",
  displayName: "YouTube",
  defaultApiUrl: "https://www.googleapis.com",
  // The description: 5,000 bytes.
  textLimit: { max: DESCRIPTION_MAX_BYTES, unit: "bytes" },
  // No alt text: the YouTube Data API takes no alt text for a video (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
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
    // Up to 12 hours for a verified channel (support.google.com/youtube/answer/71673, checked 2026-11-26).
    // Crier uploads videos, not Shorts as such (YouTube makes a Short of a vertical or square video of 3
    // minutes or less, which needs no bound here), so no Shorts duration or aspect ratio is declared.
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
  // The Authorization section of each method (YouTube Data API v3 reference, checked 2026-11-26).
  requiredScopes: {
    publish: [UPLOAD_SCOPE],
    metrics: [READ_SCOPE],
    account_stats: [READ_SCOPE],
    workflow_source: [READ_SCOPE],
    first_comment: [COMMENT_SCOPE],
  },
  connect: oauthFlow({
    authorizeUrl: GOOGLE_AUTHORIZE_URL,
    ...GOOGLE_TOKEN_ENDPOINT,
    pkce: true,
    // Uploading, reading the channel, its uploads and their statistics (Data API), and first comments
    // (force-ssl, the only scope commentThreads.insert takes). Nothing reads the YouTube Analytics API, so
    // its scope is not asked for: every sensitive scope must be justified in Google's app verification.
    // A user who unticks force-ssl still connects; that channel's first comments are refused.
    scopes: [UPLOAD_SCOPE, READ_SCOPE, COMMENT_SCOPE],
    extraAuthorizeParams: GOOGLE_OFFLINE_PARAMS,
    async identity(c, token) {
      // Google's consent screen lets the user untick scopes: without both, Crier could not work.
      const granted = typeof token.scope === "string" ? token.scope.split(" ") : null;
      const missing = granted
        ? [UPLOAD_SCOPE, READ_SCOPE].filter((s) => !granted.includes(s) && !granted.includes(FULL_SCOPE))
        : [];
      if (missing.length)
        throw new ConnectError(
          `Google did not grant ${missing.map((s) => (s === UPLOAD_SCOPE ? "managing your YouTube videos (upload)" : "viewing your YouTube account")).join(" and ")}. Connect again and leave every permission ticked on Google's consent screen.`,
        );
      const list = await connectCall<ChannelListResponse>(
        c,
        "Reading the YouTube channel",
        "GET",
        "/youtube/v3/channels",
        {
          query: { part: "snippet", mine: true },
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      const ch = list.items?.[0];
      if (!ch?.id)
        throw new ConnectError(
          "This Google account has no YouTube channel. Create one on YouTube, then connect again.",
        );
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
  firstComment: {
    textLimit: { max: COMMENT_MAX, unit: "characters" },
    kind: "comment",
    scopes: [COMMENT_SCOPE],
    publish: publishComment,
    find: findPostedComment,
  },
  refresh,
  fetchRecent,
  findPublished,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments"],
});
