/**
 * Threads API: a post is a media container (text, image, video or a carousel of 2–20) that Threads
 * prepares, then threads_publish. Threads downloads images and videos itself, so media URLs must be
 * publicly reachable (the server's own storage is, at PUBLIC_URL). A thread is a reply_to_id chain.
 */
import { t } from "elysia";
import {
  definePlugin,
  type Credentials,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type PostMetrics,
  type PublishJob,
  type RecentMedia,
  type RecentPost,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, bearerAuth } from "../../src/platform/oauth.ts";
import {
  alreadyPublished,
  classifyGraph,
  createCarousel,
  createContainer,
  longLivedToken,
  publishContainer,
  readInsights,
  refreshLongLivedToken,
} from "../../src/platform/graph.ts";
import { GB, MB } from "../../src/platform/limits.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";

const V = "/v1.0";
const TEXT_MAX = 500;
const CAROUSEL_MAX = 20;

type Fail = FailureOutcome;

const container = (ctx: PluginContext, fields: Record<string, string>) =>
  createContainer(ctx, `${V}/me/threads`, fields);

/**
 * An image or video container, with its alt text where one is given: "alt_text — (For images and videos
 * only.)" on POST /threads (developers.facebook.com/docs/threads/posts/accessibility, 2026-11-26).
 */
const mediaFields = (m: MediaItem): Record<string, string> => ({
  ...(m.type === "video" ? { media_type: "VIDEO", video_url: m.url } : { media_type: "IMAGE", image_url: m.url }),
  ...(m.alt_text && { alt_text: m.alt_text }),
});

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const common: Record<string, string> = {
    ...(job.content && { text: job.content }),
    ...(job.replyTo && { reply_to_id: job.replyTo.platformPostId }),
  };
  let id: string | Fail;
  if (job.media.length === 0) id = await container(ctx, { media_type: "TEXT", ...common });
  else if (job.media.length === 1) id = await container(ctx, { ...mediaFields(job.media[0]), ...common });
  else id = await createCarousel(ctx, `${V}/me/threads`, job.media.map(mediaFields), common);
  if (typeof id !== "string") return id;
  // Containers are published once Threads has fetched and checked the media.
  return checkStatus(ctx, id);
}

async function checkStatus(ctx: PluginContext, creationId: string): Promise<Outcome> {
  const st = await ctx.http.request<{ status?: string; error_message?: string }>("GET", `${V}/${creationId}`, {
    query: { fields: "status,error_message" },
    headers: bearerAuth(ctx),
  });
  if (!st.ok) return st.outcome.kind === "retryable" ? { kind: "submitted", handle: creationId } : st.outcome;
  if (st.body.status === "IN_PROGRESS") return { kind: "submitted", handle: creationId };
  if (st.body.status === "ERROR" || st.body.status === "EXPIRED") {
    return {
      kind: "permanent",
      reason: `Threads could not prepare the post: ${st.body.error_message ?? st.body.status}`,
      code: st.body.error_message ?? st.body.status,
    };
  }
  if (st.body.status === "PUBLISHED") return alreadyPublished;
  return publishContainer(ctx, `${V}/me/threads_publish`, creationId, V);
}

const refresh = (ctx: PluginContext): Promise<Credentials> => refreshLongLivedToken(ctx, "th_refresh_token", "Threads");

interface ThreadsPost {
  id: string;
  media_type?: string;
  media_url?: string;
  permalink?: string;
  text?: string;
  timestamp?: string;
  is_quote_post?: boolean;
  children?: { data?: { media_type?: string; media_url?: string }[] };
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{ data: ThreadsPost[] }>("GET", `${V}/me/threads`, {
    query: {
      fields: "id,media_type,media_url,permalink,text,timestamp,is_quote_post,children{media_type,media_url}",
      limit: 50,
      ...(since && { since: Math.floor(since.getTime() / 1000) + 1 }),
    },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`Threads posts: ${res.outcome.reason}`);
  // media_url is the file on Threads' CDN.
  const item = (type?: string, url?: string): RecentMedia[] =>
    url ? [{ url, type: type === "VIDEO" ? "video" : "image", downloadable: true }] : [];
  return res.body.data.map((p) => {
    const media =
      p.media_type === "CAROUSEL_ALBUM"
        ? (p.children?.data ?? []).flatMap((c) => item(c.media_type, c.media_url))
        : item(p.media_type, p.media_url);
    return {
      platformPostId: p.id,
      url: p.permalink ?? null,
      content: p.text ?? "",
      media,
      createdAt: new Date(p.timestamp ?? Date.now()),
      kind: p.is_quote_post
        ? "quote"
        : media.some((m) => m.type === "video")
          ? "video"
          : media.length
            ? "image"
            : "text",
    };
  });
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const v = await readInsights(ctx, V, id, ["views", "likes", "replies", "reposts", "quotes", "shares"], "Threads");
    // Threads shares are sends to others; reposts are the closer match to "shares" elsewhere.
    out[id] = {
      views: v("views"),
      likes: v("likes"),
      comments: v("replies"),
      shares: v("reposts"),
      saves: null,
      quotes: v("quotes"),
    };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{ data: { name: string; total_value?: { value: number } }[] }>(
    "GET",
    `${V}/me/threads_insights`,
    {
      query: { metric: "followers_count" },
      headers: bearerAuth(ctx),
    },
  );
  if (!res.ok) throw new Error(`Threads insights: ${res.outcome.reason}`);
  return { followers: res.body.data.find((d) => d.name === "followers_count")?.total_value?.value ?? null };
}

export default definePlugin({
  platform: "threads",
  displayName: "Threads",
  defaultApiUrl: "https://graph.threads.net",
  // "Text posts are limited to 500 characters. Emojis are counted as the number of UTF-8 bytes."
  // (developers.facebook.com/docs/threads/posts, Limitations; checked 2026-11-26)
  textLimit: { max: TEXT_MAX, unit: "emoji_bytes" },
  // Images and videos take alt_text; the accessibility guide gives no length limit.
  altText: { image: { max_length: null, unit: "characters" }, video: { max_length: null, unit: "characters" } },
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
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "video/mp4", "video/quicktime"],
    convertible_formats: {
      // Images: JPEG or PNG; video: MOV or MP4 (https://developers.facebook.com/docs/threads/overview#media-specifications, read 2026-11-26).
      "image/webp": "image/jpeg",
      "video/webm": "video/mp4",
    },
    max_size_bytes: { image: 8 * MB, video: 1 * GB, gif: 0 },
    file_constraints: {
      maxFiles: CAROUSEL_MAX,
      maxImageFiles: CAROUSEL_MAX,
      maxVideoFiles: CAROUSEL_MAX,
      maxGifFiles: 0,
      allowMixedMedia: true,
      gifBehavior: "not supported",
      imageWidth: { min: 320, max: 1440 },
      // Video: 23-60 FPS, at most 1920 columns, HEVC or H.264 (developers.facebook.com/docs/threads/overview#media-specifications, checked 2026-11-26).
      minFrameRate: 23,
      maxFrameRate: 60,
      maxVideoWidth: 1920,
      videoCodecs: ["h264", "hevc"],
      // Wider images are scaled down by Crier before they leave (own media); same source as imageWidth.
      maxImageWidth: 1440,
      mediaUrls: "must be publicly reachable",
    },
    required_media: null,
    max_hashtags: 1,
    min_video_duration_seconds: null,
    // Video: at most 300 s, any length above 0 (developers.facebook.com/docs/threads/overview#media-specifications, checked 2026-11-26).
    max_video_duration_seconds: 300,
    // Images: an aspect ratio limit of 10:1 either way; video 0.01:1 to 10:1, 9:16 recommended (developers.facebook.com/docs/threads/overview#media-specifications,
    // checked 2026-11-26).
    aspect_ratio: { image: { min: "1:10", max: "10:1" }, video: { min: "0.01:1", max: "10:1" }, recommended: "9:16" },
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  // Each Threads API reference's permissions (checked 2026-11-26); replies need threads_manage_replies.
  requiredScopes: {
    publish: ["threads_basic", "threads_content_publish", "threads_manage_replies"],
    metrics: ["threads_basic", "threads_manage_insights"],
    account_stats: ["threads_basic", "threads_manage_insights"],
    workflow_source: ["threads_basic"],
    first_comment: ["threads_basic", "threads_manage_replies"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://threads.net/oauth/authorize",
    tokenUrl: "https://graph.threads.net/oauth/access_token",
    clientAuth: "body",
    // threads_basic for every call, threads_content_publish to publish, threads_manage_replies to publish
    // a thread's next posts (reply_to_id), threads_manage_insights for numbers (docs/threads/get-started).
    // threads_read_replies is for GET calls to reply endpoints, which Crier never makes.
    scopes: ["threads_basic", "threads_content_publish", "threads_manage_replies", "threads_manage_insights"],
    scopeSeparator: ",",
    async identity(c, token) {
      const long = await longLivedToken(c, "th_exchange_token", token);
      const me = await connectCall<{ id: string; username: string; threads_profile_picture_url?: string }>(
        c,
        "Reading the Threads account",
        "GET",
        "/v1.0/me",
        {
          query: { fields: "id,username,threads_profile_picture_url", access_token: long.access_token },
        },
      );
      return {
        remoteId: me.id,
        username: me.username,
        avatarUrl: me.threads_profile_picture_url ?? null,
        credentials: tokenCredentials(long, c.now()),
      };
    },
  }),
  classifyResponse: classifyGraph,
  publish,
  // The first comment is a reply: a container with reply_to_id, then threads_publish; POST calls to
  // reply endpoints need threads_manage_replies (asked for at connect), and the owner of the root post
  // may reply to it (developers.facebook.com/documentation/threads/retrieve-and-manage-replies and
  // .../create-replies, checked 2026-11-26). A reply is a post: 500 characters, emoji as UTF-8 bytes.
  // A container not ready yet was never published, so that attempt is retryable.
  firstComment: {
    kind: "reply",
    textLimit: { max: TEXT_MAX, unit: "emoji_bytes" },
    scopes: ["threads_basic", "threads_manage_replies"],
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment, "retryable"),
  },
  checkStatus,
  refresh,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares"],
});
