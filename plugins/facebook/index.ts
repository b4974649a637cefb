/**
 * Facebook Pages through the Graph API. Connecting stores one account per Page the user granted, each
 * with its Page token (which does not expire when minted from a long-lived user token). A post is a
 * feed post: text (with a link preview), one photo, several photos attached to one post, or a video
 * ("submitted" until Facebook has processed it); platform_options.placement makes it a Reel or a Story
 * instead (placement.ts).
 */
import { t } from "elysia";
import {
  ConnectError,
  definePlugin,
  unreadableMedia,
  type MediaBody,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type PostMetrics,
  type PublishJob,
  type RecentMedia,
  type RecentPost,
  type FailureOutcome,
  type CommentJob,
  type CommentOutcome,
  type FindResult,
  type DeclaredMediaRequirements,
} from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, type TokenResponse } from "../../src/platform/oauth.ts";
import { classifyGraph, createGraphComment } from "../../src/platform/graph.ts";
import { findComment, oldestOf } from "../../src/platform/find-comment.ts";
import { GB, MB } from "../../src/platform/limits.ts";
import {
  optionProblems,
  PLACEMENTS,
  placementOf,
  publishReel,
  publishStory,
  requirementsFor,
  type Options,
} from "./placement.ts";

// Graph API version; CRIER_FACEBOOK_VERSION moves it without a release.
const VERSION = "v24.0";
const TEXT_MAX = 63206;
/**
 * A first comment's longest text. The Pages API's Comments guide (developers.facebook.com/documentation/
 * pages-api/comments-mentions) and the /{object-id}/comments reference (developers.facebook.com/docs/
 * graph-api/reference/object/comments), both read 2026-11-26, document no length limit; 8,000 characters
 * is what Facebook's own comment box takes, so a longer text is refused at creation instead of by Facebook.
 */
const COMMENT_MAX = 8000;
/**
 * Commenting as the Page needs pages_manage_engagement besides the publishing permissions (Comments and
 * @mentions guide, "Permissions", read 2026-11-26); reading the Page's comments back pages_read_engagement.
 */
const COMMENT_SCOPES = ["pages_manage_engagement"] as const;
const PHOTOS_MAX = 10;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v && "reason" in v;
const v = (ctx: PluginContext) => `/${ctx.settings.VERSION ?? VERSION}`;
const auth = (ctx: PluginContext) => ({ authorization: `Bearer ${String(ctx.credentials.page_access_token)}` });
const page = (ctx: PluginContext) => ctx.account.remoteId;

async function read(ctx: PluginContext, item: MediaItem): Promise<{ type: string; bytes: Uint8Array } | Fail> {
  try {
    const body = await ctx.media.open(item);
    return { type: body.contentType.split(";")[0].trim(), bytes: await body.bytes() };
  } catch (e) {
    return unreadableMedia(e);
  }
}

/** Photos are sent as bytes (no public URL needed); `published` false keeps them for one feed post. */
async function uploadPhoto(
  ctx: PluginContext,
  item: MediaItem,
  published: boolean,
  caption?: string,
): Promise<{ id: string; post_id?: string } | Fail> {
  const file = await read(ctx, item);
  if (isFail(file)) return file;
  const form = new FormData();
  form.set("source", new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type }), "photo");
  form.set("published", String(published));
  if (caption) form.set("message", caption);
  // The photo's own description, as the Photo node documents it (developers.facebook.com/docs/graph-api/
  // reference/photo/, alt_text_custom: "User provided accessible alternative description", 2026-11-26).
  if (item.alt_text) form.set("alt_text_custom", item.alt_text);
  const res = await ctx.http.request<{ id: string; post_id?: string }>("POST", `${v(ctx)}/${page(ctx)}/photos`, {
    multipart: form,
    headers: auth(ctx),
    creates: published,
  });
  return res.ok ? res.body : res.outcome;
}

const postUrl = (id: string) => `https://www.facebook.com/${id}`;

async function permalink(ctx: PluginContext, id: string): Promise<string> {
  const res = await ctx.http.request<{ permalink_url?: string }>("GET", `${v(ctx)}/${id}`, {
    query: { fields: "permalink_url" },
    headers: auth(ctx),
  });
  return res.ok && res.body.permalink_url ? res.body.permalink_url : postUrl(id);
}

/**
 * A video through the Resumable Upload API (developers.facebook.com/docs/graph-api/guides/upload and
 * docs/video-api/guides/publishing, checked 2026-11-26): an upload session on the app, the file streamed
 * to it from storage (never whole in memory; up to 10 GB), then the handle. Its file handle, or why not.
 * The guide asks for a user token; the Page token is the Page's admin acting for it, and unlike the
 * long-lived user token it does not expire after 60 days.
 */
async function uploadVideo(ctx: PluginContext, item: MediaItem): Promise<string | Fail> {
  let body: MediaBody;
  let size: number;
  let bytes: Uint8Array | null = null;
  try {
    body = await ctx.media.open(item);
    // Storage and most hosts say the size; otherwise the file must be read to learn it.
    size = body.size ?? (bytes = await body.bytes()).length;
  } catch (e) {
    return unreadableMedia(e);
  }
  const type = body.contentType.split(";")[0].trim();
  // The upload session takes video/mp4 only (the guide's file_type values).
  if (type !== "video/mp4")
    return {
      kind: "permanent",
      reason: `Facebook's video upload takes MP4 only, not ${type}`,
      code: "unsupported_media",
    };
  const session = await ctx.http.request<{ id: string }>("POST", `${v(ctx)}/${ctx.settings.CLIENT_ID ?? ""}/uploads`, {
    query: { file_name: "video.mp4", file_length: size, file_type: type },
    headers: auth(ctx),
  });
  if (!session.ok) return session.outcome;
  const upload = `${v(ctx)}/${session.body.id}`;
  const oauth = { authorization: `OAuth ${String(ctx.credentials.page_access_token)}` };
  let offset = 0;
  let from: ReadableStream<Uint8Array> | Uint8Array = bytes ?? body.stream();
  for (let resumes = 0; ; resumes++) {
    const sent = await ctx.http.request<{ h?: string }>("POST", upload, {
      headers: {
        ...oauth,
        file_offset: String(offset),
        "content-type": "application/octet-stream",
        "content-length": String(size - offset),
      },
      body: from as BodyInit,
      timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 30 * 60_000),
    });
    if (sent.ok && sent.body.h) return sent.body.h;
    const why: Fail = sent.ok
      ? { kind: "retryable", reason: "Facebook took the video's bytes but gave no file handle" }
      : sent.outcome;
    if (why.kind !== "retryable" || resumes >= UPLOAD_RESUMES) return why;
    // A transfer cut short resumes where Facebook's copy ends (GET upload:{id} answers its file_offset).
    const at = await ctx.http.request<{ file_offset?: number }>("GET", upload, { headers: oauth });
    if (!at.ok || typeof at.body.file_offset !== "number" || at.body.file_offset > size) return why;
    offset = at.body.file_offset;
    try {
      from = bytes ? bytes.subarray(offset) : skip((await ctx.media.open(item)).stream(), offset);
    } catch (e) {
      return unreadableMedia(e);
    }
  }
}

/** How often one attempt resumes a cut transfer before the engine retries the whole publish later. */
const UPLOAD_RESUMES = 2;

/** The stream without its first `n` bytes. */
function skip(stream: ReadableStream<Uint8Array>, n: number): ReadableStream<Uint8Array> {
  let left = n;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        if (left >= chunk.byteLength) {
          left -= chunk.byteLength;
          return;
        }
        out.enqueue(left ? chunk.subarray(left) : chunk);
        left = 0;
      },
    }),
  );
}

/**
 * A video's cover (media[].thumbnail_url) travels with the publishing call as `thumb`, the image file the
 * Page videos edge takes as the video's thumbnail (developers.facebook.com/docs/graph-api/reference/page/videos,
 * checked 2026-11-26), under the permissions publishing already has; the Video thumbnails edge would need
 * pages_manage_engagement as well. A cover that cannot be read fails the publish before anything is created.
 */
async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  if (!ctx.credentials.page_access_token)
    return { kind: "auth_expired", reason: "no Page token is stored for this Page; connect it again" };
  // A Reel or a Story: one media item, checked at creation (requirementsFor).
  const placement = placementOf(job.options as Options);
  if (placement === "reels") {
    const id = await publishReel(ctx, job.media[0], job.content, v(ctx));
    return typeof id === "string" ? checkStatus(ctx, `reel:${id}`) : id;
  }
  if (placement === "story") {
    const id = await publishStory(ctx, job.media[0], v(ctx), () => uploadPhoto(ctx, job.media[0], false));
    // A Story lasts 24 hours and has no public address of its own.
    return typeof id === "string" ? { kind: "published", platformPostId: id, url: null } : id;
  }
  const videos = job.media.filter((m) => m.type === "video");
  if (videos.length) {
    const handle = await uploadVideo(ctx, videos[0]);
    if (typeof handle !== "string") return handle;
    // Publishing the handle is the creating call; the bytes are already with Facebook.
    const form = new FormData();
    form.set("fbuploader_video_file_chunk", handle);
    if (job.content) form.set("description", job.content);
    if (videos[0].thumbnail_url) {
      const cover = await read(ctx, { url: videos[0].thumbnail_url, type: "image" });
      if (isFail(cover)) return cover;
      form.set("thumb", new Blob([cover.bytes as Uint8Array<ArrayBuffer>], { type: cover.type }), "cover");
    }
    const res = await ctx.http.request<{ id: string }>("POST", `${v(ctx)}/${page(ctx)}/videos`, {
      multipart: form,
      headers: auth(ctx),
      creates: true,
    });
    if (!res.ok) return res.outcome;
    return checkStatus(ctx, res.body.id);
  }
  if (job.media.length === 1) {
    const photo = await uploadPhoto(ctx, job.media[0], true, job.content);
    if (isFail(photo)) return photo;
    const id = photo.post_id ?? photo.id;
    return { kind: "published", platformPostId: id, url: await permalink(ctx, id) };
  }
  const form: Record<string, string> = {};
  if (job.content) form.message = job.content;
  if (job.media.length > 1) {
    const ids: string[] = [];
    for (const item of job.media) {
      const photo = await uploadPhoto(ctx, item, false);
      if (isFail(photo)) return photo;
      ids.push(photo.id);
    }
    ids.forEach((id, i) => (form[`attached_media[${i}]`] = JSON.stringify({ media_fbid: id })));
  } else {
    // A text post that is only a link becomes a link post with its preview.
    const link = /^\s*(https?:\/\/\S+)\s*$/i.exec(job.content)?.[1];
    if (link) form.link = link;
  }
  const res = await ctx.http.request<{ id: string }>("POST", `${v(ctx)}/${page(ctx)}/feed`, {
    form,
    headers: auth(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return { kind: "published", platformPostId: res.body.id, url: await permalink(ctx, res.body.id) };
}

/**
 * The first comment: `POST /{page-post-id}/comments` with `message` and the Page token, so the Page is its
 * author (Comments and @mentions guide, developers.facebook.com/documentation/pages-api/comments-mentions,
 * read 2026-11-26). A video is published as its own id and takes comments the same way. The comment's
 * address is its permalink_url, read once it exists.
 */
async function publishComment(ctx: PluginContext, job: CommentJob): Promise<CommentOutcome> {
  if (!ctx.credentials.page_access_token)
    return { kind: "auth_expired", reason: "no Page token is stored for this Page; connect it again" };
  const parent = job.parent.platformPostId;
  const id = await createGraphComment(ctx, `${v(ctx)}/${parent}/comments`, job.text, auth(ctx));
  if (typeof id !== "string") return id;
  const link = await ctx.http.request<{ permalink_url?: string }>("GET", `${v(ctx)}/${id}`, {
    query: { fields: "permalink_url" },
    headers: auth(ctx),
  });
  return { kind: "published", platformPostId: id, url: link.ok ? (link.body.permalink_url ?? null) : null };
}

/** The Page's own comments under the post, newest first (filter=stream lists replies too; order by time). */
async function findPostedComment(
  ctx: PluginContext,
  job: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  return findComment(job, window, "comment(s) under the post", async () => {
    const res = await ctx.http.request<{
      data: { id: string; message?: string; created_time?: string; permalink_url?: string; from?: { id?: string } }[];
      paging?: { next?: string };
    }>("GET", `${v(ctx)}/${job.parent.platformPostId}/comments`, {
      query: {
        fields: "id,message,created_time,from,permalink_url",
        filter: "stream",
        order: "reverse_chronological",
        limit: 100,
      },
      headers: auth(ctx),
    });
    if (!res.ok) throw new Error(res.outcome.reason);
    const at = (c: { created_time?: string }) => new Date(c.created_time ?? 0);
    return {
      comments: res.body.data
        .filter((c) => c.from?.id === page(ctx))
        .map((c) => ({ id: c.id, url: c.permalink_url ?? null, text: c.message ?? "", createdAt: at(c) })),
      more: !!res.body.paging?.next,
      oldest: oldestOf(res.body.data.map(at)),
    };
  });
}

type Phase = { status?: string; errors?: { code?: number; message?: string }[] };

/** A Page video's status; the handle is its id, or "reel:<id>" for a Reel (whose address differs). */
async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const reel = handle.startsWith("reel:");
  const videoId = reel ? handle.slice(5) : handle;
  // The Video node's status: video_status, and per phase its status and errors [{code, message}].
  const res = await ctx.http.request<{
    status?: { video_status?: string; uploading_phase?: Phase; processing_phase?: Phase; publishing_phase?: Phase };
  }>("GET", `${v(ctx)}/${videoId}`, { query: { fields: "status" }, headers: auth(ctx) });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  const st = res.body.status;
  const phases = [st?.uploading_phase, st?.processing_phase, st?.publishing_phase];
  if (st?.video_status === "error" || phases.some((p) => p?.status === "error")) {
    const why = phases.flatMap((p) => p?.errors ?? []).map((e) => e.message ?? `error ${e.code}`);
    return {
      kind: "permanent",
      reason: `Facebook could not process the video: ${why.join("; ") || "error"}`,
      code: "video_processing_failed",
    };
  }
  if (st?.video_status !== "ready") return { kind: "submitted", handle };
  const url = reel
    ? `https://www.facebook.com/reel/${videoId}`
    : `https://www.facebook.com/${page(ctx)}/videos/${videoId}`;
  return { kind: "published", platformPostId: videoId, url };
}

interface FbPost {
  id: string;
  message?: string;
  created_time?: string;
  permalink_url?: string;
  attachments?: {
    data?: {
      media_type?: string;
      media?: { image?: { src?: string }; source?: string };
      url?: string;
      subattachments?: { data?: { media_type?: string; media?: { image?: { src?: string } } }[] };
    }[];
  };
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{ data: FbPost[] }>("GET", `${v(ctx)}/${page(ctx)}/posts`, {
    query: {
      fields: "id,message,created_time,permalink_url,attachments{media_type,media,url,subattachments}",
      limit: 50,
      ...(since && { since: Math.floor(since.getTime() / 1000) + 1 }),
    },
    headers: auth(ctx),
  });
  if (!res.ok) throw new Error(`Facebook posts: ${res.outcome.reason}`);
  return res.body.data.map((p): RecentPost => {
    const att = p.attachments?.data?.[0];
    const items = att?.subattachments?.data ?? (att ? [att] : []);
    const media = items.flatMap((a): RecentMedia[] => {
      const video = a.media_type === "video";
      const source = video ? (a as { media?: { source?: string } }).media?.source : undefined;
      // Without the video's source only its still image is there: a stand-in, not the video.
      const url = source ?? a.media?.image?.src;
      return url && (a.media_type === "photo" || video)
        ? [{ url, type: video ? "video" : "image", downloadable: !video || !!source }]
        : [];
    });
    return {
      platformPostId: p.id,
      url: p.permalink_url ?? postUrl(p.id),
      content: p.message ?? "",
      media,
      createdAt: new Date(p.created_time ?? Date.now()),
      kind: media.some((m) => m.type === "video") ? "video" : media.length ? "image" : "text",
    };
  });
}

type Summary = { summary?: { total_count?: number } };

/** A Page post's numbers: reactions, comments and shares on the post, media views from its insights. */
async function postMetrics(ctx: PluginContext, id: string): Promise<PostMetrics | Fail> {
  const res = await ctx.http.request<{ reactions?: Summary; comments?: Summary; shares?: { count?: number } }>(
    "GET",
    `${v(ctx)}/${id}`,
    {
      query: { fields: "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0),shares" },
      headers: auth(ctx),
    },
  );
  if (!res.ok) return res.outcome;
  const views = await ctx.http.request<{ data: { name: string; values?: { value: number }[] }[] }>(
    "GET",
    `${v(ctx)}/${id}/insights`,
    { query: { metric: "post_total_media_view_unique" }, headers: auth(ctx) },
  );
  // Facebook Pages expose no saves; a post nobody shared has no shares field.
  return {
    views: views.ok
      ? (views.body.data.find((d) => d.name === "post_total_media_view_unique")?.values?.[0]?.value ?? null)
      : null,
    likes: res.body.reactions?.summary?.total_count ?? null,
    comments: res.body.comments?.summary?.total_count ?? null,
    shares: res.body.shares?.count ?? 0,
    saves: null,
  };
}

/**
 * A video's numbers: the Video node has reactions and comments but no shares field (asking for one fails
 * the request), and its views are total_video_views of /video_insights (developers.facebook.com/docs/
 * graph-api/reference/video/video_insights, checked 2026-11-26).
 */
async function videoMetrics(ctx: PluginContext, id: string): Promise<PostMetrics | Fail> {
  const res = await ctx.http.request<{ reactions?: Summary; comments?: Summary }>("GET", `${v(ctx)}/${id}`, {
    query: { fields: "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0)" },
    headers: auth(ctx),
  });
  if (!res.ok) return res.outcome;
  const views = await ctx.http.request<{ data: { name: string; values?: { value: number }[] }[] }>(
    "GET",
    `${v(ctx)}/${id}/video_insights`,
    { query: { metric: "total_video_views" }, headers: auth(ctx) },
  );
  return {
    views: views.ok ? (views.body.data.find((d) => d.name === "total_video_views")?.values?.[0]?.value ?? null) : null,
    likes: res.body.reactions?.summary?.total_count ?? null,
    comments: res.body.comments?.summary?.total_count ?? null,
    shares: null,
    saves: null,
  };
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    // A feed or photo post is {page}_{post}; a video is published as its own id.
    const m = id.includes("_") ? await postMetrics(ctx, id) : await videoMetrics(ctx, id);
    if (!isFail(m)) {
      out[id] = m;
      continue;
    }
    // A post Facebook no longer shows (deleted, or a field it refuses) keeps its last numbers; an
    // expired token or a limit stops the batch, so the engine refreshes or waits.
    if (m.kind === "permanent") ctx.log.warn("Facebook post numbers unreadable", { id, reason: m.reason });
    else throw new Error(`Facebook post ${id}: ${m.reason}`);
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  // followers_count is what Meta shows as the Page's audience; fan_count (likes) is the older number.
  const res = await ctx.http.request<{ followers_count?: number; fan_count?: number }>(
    "GET",
    `${v(ctx)}/${ctx.account.remoteId}`,
    {
      query: { fields: "followers_count,fan_count" },
      headers: auth(ctx),
    },
  );
  if (!res.ok) throw new Error(`Facebook Page: ${res.outcome.reason}`);
  return { followers: res.body.followers_count ?? res.body.fan_count ?? null };
}

/** What a feed post takes; Reels and Stories narrow it (placement.ts). */
const FEED: DeclaredMediaRequirements = {
  supported_formats: [
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/bmp",
    "image/tiff",
    // The Resumable Upload API's file_type takes video/mp4 only.
    "video/mp4",
  ],
  convertible_formats: {
    // Photos: JPG, PNG, GIF, BMP, TIFF (https://developers.facebook.com/docs/graph-api/reference/page/photos/, read 2026-11-26);
    // videos: the Resumable Upload API's file_type is video/mp4 only (https://developers.facebook.com/docs/video-api/guides/publishing, read 2026-11-26).
    "image/webp": "image/jpeg",
    "video/quicktime": "video/mp4",
    "video/webm": "video/mp4",
  },
  max_size_bytes: { image: 4 * MB, video: 10 * GB, gif: 4 * MB },
  file_constraints: {
    maxFiles: PHOTOS_MAX,
    maxImageFiles: PHOTOS_MAX,
    maxVideoFiles: 1,
    maxGifFiles: 1,
    allowMixedMedia: false,
    gifBehavior: "posted as a photo",
  },
  required_media: null,
  max_hashtags: null,
  min_video_duration_seconds: null,
  // Page videos (not Reels, which Crier does not publish): up to 240 minutes, no documented minimum or
  // aspect ratio bound (developers.facebook.com/docs/video-api/overview, checked 2026-11-26).
  max_video_duration_seconds: 240 * 60,
  aspect_ratio: null,
  // media[].thumbnail_url of a video is sent as its thumb (see publish).
  thumbnail: { max_size_bytes: 10 * MB, applies_to: "videos (thumb)" },
};

export default definePlugin({
  platform: "facebook",
  displayName: "Facebook Page",
  defaultApiUrl: "https://graph.facebook.com",
  textLimit: { max: TEXT_MAX, unit: "characters" },
  // Photos take alt_text_custom, with no documented length limit; videos have none (Photo and Video nodes,
  // developers.facebook.com/docs/graph-api/reference/photo/, 2026-11-26).
  altText: { image: { max_length: null, unit: "characters" }, video: null },
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: true,
    images: true,
    video: true,
    replies: false,
    threads: false,
  },
  mediaRequirements: FEED,
  // A Reel or a Story has the video specifications of its own (placement.ts).
  mediaRequirementsFor: (options) => requirementsFor(FEED, options as Options),
  optionProblems: (target) => optionProblems(target as never),
  // Page publishing has no AI-generated disclosure (spec); unknown keys are kept but not sent.
  optionsSchema: t.Object(
    {
      placement: t.Optional(
        t.UnionEnum(PLACEMENTS, {
          default: "feed",
          description:
            "Extension: where the post goes on the Page. feed (default): a text, photo, photos or video post; reels: one MP4 video, 9:16, 3 to 90 s, published as a Reel (the text is its description); story: one photo or one video (9:16, 3 to 60 s) as a Story for 24 hours (the text is not sent).",
        }),
      ),
    },
    { additionalProperties: true },
  ),
  // The permission each Graph request needs (developers.facebook.com Page and Video references, checked
  // 2026-11-26); Meta's token answers do not list them, so accounts check compares them only when known.
  requiredScopes: {
    publish: ["pages_show_list", "pages_manage_posts", "pages_read_engagement"],
    metrics: ["read_insights", "pages_read_engagement"],
    account_stats: ["pages_read_engagement"],
    workflow_source: ["pages_read_engagement", "pages_read_user_content"],
    first_comment: ["pages_show_list", "pages_manage_posts", "pages_read_engagement", ...COMMENT_SCOPES],
  },
  connect: oauthFlow({
    authorizeUrl: `https://www.facebook.com/${VERSION}/dialog/oauth`,
    tokenUrl: `https://graph.facebook.com/${VERSION}/oauth/access_token`,
    tokenMethod: "GET",
    clientAuth: "body",
    // Each is what a request needs (docs/platforms.md): Pages listed and posted to (pages_show_list,
    // pages_manage_posts, pages_read_engagement; the Video API's publishing guide names the same three),
    // the Page's posts read back (pages_read_user_content), insights (read_insights), and Pages a
    // business portfolio owns (business_management), and first comments (pages_manage_engagement).
    // publish_video is for live video, which Crier does not do: App Review refuses unused permissions.
    scopes: [
      "pages_show_list",
      "pages_manage_posts",
      "pages_read_engagement",
      "pages_read_user_content",
      "read_insights",
      "business_management",
      ...COMMENT_SCOPES,
    ],
    scopeSeparator: ",",
    async identity(c, token) {
      const ver = `/${c.settings.VERSION ?? VERSION}`;
      // A Page token minted from a long-lived user token does not expire, so trade up first.
      const long = await connectCall<TokenResponse>(
        c,
        "Getting a long-lived token",
        "GET",
        `${ver}/oauth/access_token`,
        {
          query: {
            grant_type: "fb_exchange_token",
            client_id: c.settings.CLIENT_ID,
            client_secret: c.settings.CLIENT_SECRET,
            fb_exchange_token: token.access_token,
          },
        },
      );
      const pages = await connectCall<{
        data: { id: string; name: string; access_token: string; picture?: { data?: { url?: string } } }[];
      }>(c, "Listing your Pages", "GET", `${ver}/me/accounts`, {
        query: { fields: "id,name,access_token,picture", access_token: long.access_token },
      });
      if (pages.data.length === 0)
        throw new ConnectError(
          "This Facebook user granted no Page. Choose at least one Page in the Facebook dialog and try again.",
        );
      // Every Page the user granted becomes its own account.
      return pages.data.map((p) => ({
        remoteId: p.id,
        username: p.name,
        avatarUrl: p.picture?.data?.url ?? null,
        credentials: { page_access_token: p.access_token, ...tokenCredentials(long, c.now()) },
      }));
    },
  }),
  classifyResponse: classifyGraph,
  publish,
  checkStatus,
  firstComment: {
    textLimit: { max: COMMENT_MAX, unit: "characters" },
    kind: "comment",
    scopes: COMMENT_SCOPES,
    publish: publishComment,
    find: findPostedComment,
  },
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares"],
});
