/**
 * Facebook Pages through the Graph API. Connecting stores one account per Page the user granted, each
 * with its Page token (which does not expire when minted from a long-lived user token). A post is a
 * feed post: text (with a link preview), one photo, several photos attached to one post, or a video
 * ("submitted" until Facebook has processed it).
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
  type RecentMedia,
  type RecentPost,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, type TokenResponse } from "../../src/platform/oauth.ts";
import { classifyGraph } from "../../src/platform/graph.ts";
import { GB, MB } from "../../src/platform/limits.ts";

// Graph API version; CRIER_FACEBOOK_VERSION moves it without a release.
const VERSION = "v24.0";
const TEXT_MAX = 63206;
const PHOTOS_MAX = 10;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v && "reason" in v;
const v = (ctx: PluginContext) => `/${ctx.settings.VERSION ?? VERSION}`;
const auth = (ctx: PluginContext) => ({ authorization: `Bearer ${String(ctx.credentials.page_access_token)}` });
const page = (ctx: PluginContext) => ctx.account.remoteId;
/** Video uploads go to graph-video.facebook.com, or to the overridden base (an emulator) when there is one. */
const videoBase = (ctx: PluginContext) =>
  ctx.settings.VIDEO_URL ??
  (ctx.http.baseUrl === "https://graph.facebook.com" ? "https://graph-video.facebook.com" : ctx.http.baseUrl);

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

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  if (!ctx.credentials.page_access_token)
    return { kind: "auth_expired", reason: "no Page token is stored for this Page; connect it again" };
  const videos = job.media.filter((m) => m.type === "video");
  if (videos.length) {
    const file = await read(ctx, videos[0]);
    if (isFail(file)) return file;
    const form = new FormData();
    form.set("source", new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: file.type }), "video");
    if (job.content) form.set("description", job.content);
    const res = await ctx.http.request<{ id: string }>("POST", `${videoBase(ctx)}${v(ctx)}/${page(ctx)}/videos`, {
      multipart: form,
      headers: auth(ctx),
      creates: true,
      timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 10 * 60_000),
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

async function checkStatus(ctx: PluginContext, videoId: string): Promise<Outcome> {
  const res = await ctx.http.request<{
    status?: { video_status?: string; processing_phase?: { status?: string; error?: { message?: string } } };
  }>("GET", `${v(ctx)}/${videoId}`, { query: { fields: "status" }, headers: auth(ctx) });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle: videoId } : res.outcome;
  const st = res.body.status;
  if (st?.video_status === "error" || st?.processing_phase?.status === "error") {
    return {
      kind: "permanent",
      reason: `Facebook could not process the video: ${st.processing_phase?.error?.message ?? "error"}`,
      code: "video_processing_failed",
    };
  }
  if (st?.video_status !== "ready") return { kind: "submitted", handle: videoId };
  return { kind: "published", platformPostId: videoId, url: `https://www.facebook.com/${page(ctx)}/videos/${videoId}` };
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

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await ctx.http.request<{
      reactions?: { summary?: { total_count?: number } };
      comments?: { summary?: { total_count?: number } };
      shares?: { count?: number };
    }>("GET", `${v(ctx)}/${id}`, {
      query: { fields: "reactions.summary(total_count).limit(0),comments.summary(total_count).limit(0),shares" },
      headers: auth(ctx),
    });
    if (!res.ok) throw new Error(`Facebook post ${id}: ${res.outcome.reason}`);
    const views = await ctx.http.request<{ data: { name: string; values?: { value: number }[] }[] }>(
      "GET",
      `${v(ctx)}/${id}/insights`,
      {
        query: { metric: "post_total_media_view_unique" },
        headers: auth(ctx),
      },
    );
    const seen = views.ok
      ? (views.body.data.find((d) => d.name === "post_total_media_view_unique")?.values?.[0]?.value ?? null)
      : null;
    // Facebook Pages expose no saves.
    out[id] = {
      views: seen,
      likes: res.body.reactions?.summary?.total_count ?? null,
      comments: res.body.comments?.summary?.total_count ?? null,
      shares: res.body.shares?.count ?? 0,
      saves: null,
    };
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

export default definePlugin({
  platform: "facebook",
  displayName: "Facebook Page",
  defaultApiUrl: "https://graph.facebook.com",
  textLimit: { max: TEXT_MAX, unit: "characters" },
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
  mediaRequirements: {
    supported_formats: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/bmp",
      "image/tiff",
      "video/mp4",
      "video/quicktime",
    ],
    convertible_formats: {},
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
    max_video_duration_seconds: 240 * 60,
    aspect_ratio: null,
    thumbnail: null,
  },
  // Page publishing has no AI-generated disclosure (spec); unknown keys are kept but not sent.
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: oauthFlow({
    authorizeUrl: `https://www.facebook.com/${VERSION}/dialog/oauth`,
    tokenUrl: `https://graph.facebook.com/${VERSION}/oauth/access_token`,
    tokenMethod: "GET",
    clientAuth: "body",
    scopes: [
      "pages_show_list",
      "pages_manage_posts",
      "pages_read_engagement",
      "pages_manage_engagement",
      "pages_read_user_content",
      "read_insights",
      "publish_video",
      "business_management",
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
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares"],
});
