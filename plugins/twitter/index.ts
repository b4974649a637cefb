/**
 * X (Twitter) API v2: OAuth 2 with PKCE and rotating refresh tokens; posts with up to 4 images (one-shot
 * upload) or one video or animated GIF (chunked upload, then processing: the post waits in "submitted"
 * until X has processed it); threads by reply chain; the user's timeline and public metrics. Requests
 * and answers are typed as X's SDK declares them (./contract.ts, OpenAPI 2.167).
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
  type RecentMedia,
  type RecentPost,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import {
  connectCall,
  oauthFlow,
  tokenCredentials,
  refreshTokenGrant,
  refreshAhead,
  bearerAuth,
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { MB } from "../../src/platform/limits.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";
import {
  query,
  type AppendUploadFields,
  type CreateMetadataBody,
  type CreatePostBody,
  type InitializeUploadBody,
  type MeQuery,
  type PostsByIdsQuery,
  type TimelineQuery,
  type UploadFields,
  type UploadStatusQuery,
  type WirePost,
  type WireUploadData,
} from "./contract.ts";

/** X's limit in weighted characters (src/platform/text.ts: URLs 23, CJK and emoji 2). */
const MAX_WEIGHT = 280;

const TOKEN_URL = "https://api.x.com/2/oauth2/token";
const TOKEN_ENDPOINT: TokenEndpoint = { tokenUrl: TOKEN_URL, clientAuth: "basic" };
const MAX_IMAGE_BYTES = 5 * MB;
const MAX_GIF_BYTES = 15 * MB;
const MAX_VIDEO_BYTES = 512 * MB;
const CHUNK_BYTES = 4 * MB;
/** Refresh a little before the access token runs out rather than fail a publish on it. */

type Fail = FailureOutcome;
const permanent = (reason: string, code: string): Fail => ({ kind: "permanent", reason, code });
const postUrl = (username: string, id: string) => `https://x.com/${username}/status/${id}`;

async function readMedia(
  ctx: PluginContext,
  item: MediaItem,
): Promise<{ contentType: string; bytes: Uint8Array } | Fail> {
  try {
    const body = await ctx.media.open(item);
    return { contentType: body.contentType.split(";")[0].trim().toLowerCase(), bytes: await body.bytes() };
  } catch (e) {
    return unreadableMedia(e);
  }
}

const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v;

/** A media id, and whether X processes it before a post may carry it (GIFs and videos). */
interface Uploaded {
  id: string;
  processed: boolean;
}

/** An image through the one-shot upload, which X keeps for still images (docs.x.com/x-api/media). */
async function uploadImage(
  ctx: PluginContext,
  media: { contentType: string; bytes: Uint8Array },
  n: number,
): Promise<Uploaded | Fail> {
  if (media.bytes.length > MAX_IMAGE_BYTES)
    return permanent(
      `media ${n}: ${media.bytes.length} bytes; X takes images up to ${MAX_IMAGE_BYTES} bytes`,
      "media_too_large",
    );
  const category: UploadFields["media_category"] = "tweet_image";
  const form = new FormData();
  form.set("media", new Blob([media.bytes as Uint8Array<ArrayBuffer>], { type: media.contentType }), `media-${n}`);
  form.set("media_category" satisfies keyof UploadFields, category);
  const res = await ctx.http.request<{ data: WireUploadData }>("POST", "/2/media/upload", {
    multipart: form,
    headers: bearerAuth(ctx),
  });
  return res.ok ? { id: res.body.data.id, processed: false } : res.outcome;
}

/**
 * The chunked upload (initialize, append, finalize), which X's media guide prescribes for animated GIFs
 * (tweet_gif, up to 15 MB) and videos (tweet_video, up to 512 MB): X then processes the file, and the
 * post waits on the status check (docs.x.com/x-api/media/quickstart/media-upload-chunked, 2026-11-26).
 */
async function uploadChunked(
  ctx: PluginContext,
  media: { contentType: string; bytes: Uint8Array },
  kind: "gif" | "video",
): Promise<Uploaded | Fail> {
  const cap = kind === "gif" ? MAX_GIF_BYTES : MAX_VIDEO_BYTES;
  if (media.bytes.length > cap)
    return permanent(
      `${kind === "gif" ? "GIF" : "video"} is ${media.bytes.length} bytes; X takes up to ${cap}`,
      "media_too_large",
    );
  const body: InitializeUploadBody = {
    media_type: media.contentType as InitializeUploadBody["media_type"],
    total_bytes: media.bytes.length,
    media_category: kind === "gif" ? "tweet_gif" : "tweet_video",
  };
  const init = await ctx.http.request<{ data: WireUploadData }>("POST", "/2/media/upload/initialize", {
    json: body,
    headers: bearerAuth(ctx),
  });
  if (!init.ok) return init.outcome;
  const id = init.body.data.id;
  for (let i = 0, offset = 0; offset < media.bytes.length; i++, offset += CHUNK_BYTES) {
    const form = new FormData();
    form.set(
      "media" satisfies keyof AppendUploadFields,
      new Blob([media.bytes.subarray(offset, offset + CHUNK_BYTES) as Uint8Array<ArrayBuffer>]),
      `chunk-${i}`,
    );
    form.set("segment_index" satisfies keyof AppendUploadFields, String(i));
    const part = await ctx.http.request("POST", `/2/media/upload/${id}/append`, {
      multipart: form,
      headers: bearerAuth(ctx),
    });
    if (!part.ok) return part.outcome;
  }
  const fin = await ctx.http.request("POST", `/2/media/upload/${id}/finalize`, { headers: bearerAuth(ctx) });
  if (!fin.ok) return fin.outcome;
  return { id, processed: true };
}

async function upload(ctx: PluginContext, item: MediaItem, n: number): Promise<Uploaded | Fail> {
  const media = await readMedia(ctx, item);
  if (isFail(media)) return media;
  if (item.type === "video") {
    if (!media.contentType.startsWith("video/"))
      return permanent(`${media.contentType} is not a video`, "unsupported_media");
    return uploadChunked(ctx, media, "video");
  }
  if (!media.contentType.startsWith("image/"))
    return permanent(`media ${n}: ${media.contentType} is not an image`, "unsupported_media");
  if (media.contentType === "image/gif") return uploadChunked(ctx, media, "gif");
  return uploadImage(ctx, media, n);
}

/** X takes alt text of up to 1000 characters (docs.x.com/x-api/media/create-media-metadata, 2026-11-26). */
const MAX_ALT_TEXT = 1000;

/**
 * An image's alt text, set on the uploaded media before the post carries it (POST /2/media/metadata;
 * docs.x.com/x-api/media/create-media-metadata, 2026-11-26). X documents it for images and GIFs only.
 */
async function setAltText(ctx: PluginContext, mediaId: string, text: string): Promise<Fail | null> {
  const body: CreateMetadataBody = { id: mediaId, metadata: { alt_text: { text } } };
  const res = await ctx.http.request("POST", "/2/media/metadata", { json: body, headers: bearerAuth(ctx) });
  return res.ok ? null : res.outcome;
}

interface Pending {
  /** The post to create once the media is processed. */
  tweet: CreatePostBody;
  /** The media X is processing (`video` in handles stored before GIFs were processed too). */
  processing?: string;
  video?: string;
}

async function createTweet(ctx: PluginContext, tweet: CreatePostBody): Promise<Outcome> {
  const res = await ctx.http.request<{ data: { id: string } }>("POST", "/2/tweets", {
    json: tweet,
    headers: bearerAuth(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return { kind: "published", platformPostId: res.body.data.id, url: postUrl(ctx.account.username, res.body.data.id) };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const stale = await refreshAhead(ctx, refresh);
  if (stale) return stale;
  const tweet: CreatePostBody = { text: job.content };
  if (job.replyTo) tweet.reply = { in_reply_to_tweet_id: job.replyTo.platformPostId };
  const uploaded: Uploaded[] = [];
  for (const [i, item] of job.media.entries()) {
    const up = await upload(ctx, item, i + 1);
    if (isFail(up)) return up;
    if (item.alt_text && item.type === "image") {
      const failed = await setAltText(ctx, up.id, item.alt_text);
      if (failed) return failed;
    }
    uploaded.push(up);
  }
  if (uploaded.length) tweet.media = { media_ids: uploaded.map((u) => u.id) };
  // X processes a GIF or a video before a post may carry it: checkStatus creates the post once it is ready.
  const processing = uploaded.find((u) => u.processed);
  if (processing) return checkStatus(ctx, JSON.stringify({ tweet, processing: processing.id } satisfies Pending));
  return createTweet(ctx, tweet);
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const pending = JSON.parse(handle) as Pending;
  const q: UploadStatusQuery = { command: "STATUS", media_id: pending.processing ?? pending.video ?? "" };
  const res = await ctx.http.request<{ data: WireUploadData & { processing_info?: { error?: { message?: string } } } }>(
    "GET",
    "/2/media/upload",
    { query: query(q), headers: bearerAuth(ctx) },
  );
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  const info = res.body.data.processing_info;
  if (info && info.state === "failed")
    return permanent(`X could not process the media: ${info.error?.message ?? "failed"}`, "video_processing_failed");
  if (info && info.state !== "succeeded") return { kind: "submitted", handle };
  return createTweet(ctx, pending.tweet);
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "X" });

/** A post as X answers it: OpenAPI 2.167's names, and the names 2.166 used while X still sends them. */
type ApiTweet = WirePost & {
  id: string;
  text: string;
  referenced_tweets?: WirePost["referenced_posts"];
  public_metrics?: { retweet_count?: number };
};

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{
    data?: ApiTweet[];
    includes?: { media?: { media_key: string; type: string; url?: string; preview_image_url?: string }[] };
  }>("GET", `/2/users/${ctx.account.remoteId}/tweets`, {
    query: query({
      max_results: 100,
      exclude: ["replies", "retweets"],
      "post.fields": ["created_at", "attachments"],
      // 2.167 lists a post's references as an expansion; answers carry them as referenced_posts.
      expansions: ["attachments.media_keys", "referenced_posts"],
      "media.fields": ["type", "url", "preview_image_url"],
      ...(since && { start_time: new Date(since.getTime() + 1000).toISOString().replace(/\.\d{3}Z$/, "Z") }),
    } satisfies TimelineQuery),
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`X timeline: ${res.outcome.reason}`);
  const media = new Map((res.body.includes?.media ?? []).map((m) => [m.media_key, m]));
  return (res.body.data ?? []).map((tw) => {
    const items: RecentMedia[] = (tw.attachments?.media_keys ?? []).flatMap((k): RecentMedia[] => {
      const m = media.get(k);
      const url = m?.url ?? m?.preview_image_url;
      // url is a photo's file; a video or GIF comes with its preview image only, a stand-in.
      return m && url
        ? [{ url, type: m.type === "photo" ? "image" : "video", downloadable: m.type === "photo" && !!m.url }]
        : [];
    });
    const quote = (tw.referenced_posts ?? tw.referenced_tweets)?.some((r) => r.type === "quoted");
    return {
      platformPostId: tw.id,
      url: postUrl(ctx.account.username, tw.id),
      content: tw.text,
      media: items,
      createdAt: new Date(tw.created_at ?? Date.now()),
      kind: quote ? "quote" : items.some((i) => i.type === "video") ? "video" : items.length ? "image" : "text",
    };
  });
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += 100) {
    const res = await ctx.http.request<{ data?: ApiTweet[] }>("GET", "/2/tweets", {
      query: query({ ids: ids.slice(i, i + 100), "post.fields": ["public_metrics"] } satisfies PostsByIdsQuery & {
        ids: string[];
      }),
      headers: bearerAuth(ctx),
    });
    if (!res.ok) throw new Error(`X tweets: ${res.outcome.reason}`);
    for (const tw of res.body.data ?? []) {
      const m: Partial<NonNullable<ApiTweet["public_metrics"]>> = tw.public_metrics ?? {};
      out[tw.id] = {
        views: m.impression_count ?? null,
        likes: m.like_count ?? null,
        comments: m.reply_count ?? null,
        shares: m.retweet_count ?? m.repost_count ?? null,
        saves: m.bookmark_count ?? null,
        quotes: m.quote_count ?? null,
      };
    }
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{ data?: { public_metrics?: { followers_count?: number } } }>(
    "GET",
    "/2/users/me",
    {
      query: query({ "user.fields": ["public_metrics"] } satisfies MeQuery),
      headers: bearerAuth(ctx),
    },
  );
  if (!res.ok) throw new Error(`X user: ${res.outcome.reason}`);
  return { followers: res.body.data?.public_metrics?.followers_count ?? null };
}

export default definePlugin({
  platform: "twitter",
  displayName: "X (Twitter)",
  defaultApiUrl: "https://api.x.com",
  // 280 weighted: each URL counts 23, CJK characters and emoji count 2 (checked again at publish).
  textLimit: { max: MAX_WEIGHT, unit: "weighted" },
  altText: { image: { max_length: MAX_ALT_TEXT, unit: "characters" }, video: null },
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
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4", "video/quicktime"],
    convertible_formats: {
      // Video: MP4 or MOV (https://docs.x.com/x-api/media/quickstart/best-practices, read 2026-11-26).
      "video/webm": "video/mp4",
    },
    max_size_bytes: { image: MAX_IMAGE_BYTES, video: MAX_VIDEO_BYTES, gif: MAX_GIF_BYTES },
    file_constraints: {
      maxFiles: 4,
      maxImageFiles: 4,
      maxVideoFiles: 1,
      maxGifFiles: 1,
      allowMixedMedia: false,
      gifBehavior: "one animated GIF per post, alone",
      // Video: at most 60 FPS, at least 32x32 (docs.x.com/x-api/media/quickstart/best-practices, "Video specifications", Advanced, checked 2026-11-26).
      // The same page's upper bound of 1280x1024 is not declared: it contradicts the 720x1280 portrait
      // video the page recommends, so it cannot be a width and a height limit as written.
      maxFrameRate: 60,
      minVideoWidth: 32,
      minVideoHeight: 32,
    },
    required_media: null,
    max_hashtags: null,
    // Post video lasts 0.5 s to 20 min for an account without X Premium (the Premium cap, 125 min, is not
    // known before publishing), docs.x.com/x-api/media/quickstart/best-practices, "Size and duration limits", checked 2026-11-26.
    min_video_duration_seconds: 0.5,
    max_video_duration_seconds: 20 * 60,
    // Video between 1:3 and 3:1 (same page, "Video specifications"); images have no documented bound.
    aspect_ratio: { video: { min: "1:3", max: "3:1" } },
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  // The scopes X's OpenAPI lists under each operation's security (OAuth2UserToken), checked 2026-11-26.
  requiredScopes: {
    publish: ["tweet.read", "tweet.write", "users.read", "media.write"],
    metrics: ["tweet.read", "users.read"],
    account_stats: ["users.read"],
    workflow_source: ["tweet.read", "users.read"],
    first_comment: ["tweet.read", "tweet.write", "users.read"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://x.com/i/oauth2/authorize",
    ...TOKEN_ENDPOINT,
    scopes: ["tweet.read", "tweet.write", "users.read", "media.write", "offline.access"],
    pkce: true,
    async identity(c, token) {
      const me = await connectCall<{ data: { id: string; username: string; profile_image_url?: string } }>(
        c,
        "Reading the X account",
        "GET",
        "/2/users/me",
        {
          query: query({ "user.fields": ["profile_image_url"] } satisfies MeQuery),
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      return {
        remoteId: me.data.id,
        username: me.data.username,
        avatarUrl: me.data.profile_image_url ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    const body = res.body as { detail?: string; title?: string; type?: string } | null;
    if (res.status === 429) {
      // X sends no Retry-After: the window's end is x-rate-limit-reset, in epoch seconds.
      const reset = Number(res.headers.get("x-rate-limit-reset"));
      const retryAfterMs = Number.isFinite(reset) && reset > 0 ? Math.max(1000, reset * 1000 - Date.now()) : undefined;
      return {
        kind: "retryable",
        reason: `rate limited: ${body?.detail ?? body?.title ?? "Too Many Requests"}`,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      };
    }
    // X refuses a post whose text the account already posted: 403 with the detail "You are not allowed to
    // create a Tweet with duplicate content." (the X API v2 answer to POST /2/tweets; the window is not
    // documented, checked 2026-11-26). Trying again cannot help, so it is permanent: a recurring post's
    // occurrence fails once and the series goes on.
    if (res.status === 403 && /duplicate content/i.test(body?.detail ?? ""))
      return {
        kind: "permanent",
        reason: `X refused the text as a duplicate of a post this account already has (X: "${body!.detail!}"). Change the text (a recurring post needs different text for each occurrence on X).`,
        code: "duplicate_content",
      };
    return undefined;
  },
  publish,
  // The first comment is a reply from the same account: POST /2/tweets with reply.in_reply_to_tweet_id,
  // scope tweet.write (docs.x.com/x-api/posts/create-post, checked 2026-11-26). A reply is a post, so its
  // limit is the post's: 280 weighted.
  firstComment: {
    kind: "reply",
    textLimit: { max: MAX_WEIGHT, unit: "weighted" },
    scopes: ["tweet.read", "tweet.write", "users.read"],
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment),
  },
  checkStatus,
  refresh,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares", "saves"],
  disconnect: { providerRevocationRequired: false },
});
