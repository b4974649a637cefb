/**
 * TikTok Content Posting API: one video (uploaded in chunks by Crier) or 1–35 photos (pulled by TikTok
 * from their URLs, which must be on a domain verified for the app), posted directly or, with
 * platform_options.publish_mode "draft", sent to the creator's inbox to finish there. A publish is
 * "submitted" until TikTok reports it complete.
 */
import { t } from "elysia";
import {
  definePlugin,
  unreadableMedia,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type PostMetrics,
  type PublishJob,
  type RecentPost,
  type FailureOutcome,
} from "../../src/platform/sdk.ts";
import {
  connectCall,
  oauthFlow,
  tokenCredentials,
  bearerAuth,
  refreshTokenGrant,
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";
import { utf16Prefix } from "../../src/platform/text.ts";
import { classify, isFail, PRIVATE_NOTICE, unauditedFallback, withNotice, type Notice } from "./outcomes.ts";

const TOKEN_URL = "https://open.tiktokapis.com/v2/oauth/token/";
const TOKEN_ENDPOINT: TokenEndpoint = {
  tokenUrl: TOKEN_URL,
  clientAuth: "body",
  clientIdParam: "client_key",
  clientIdSetting: "CLIENT_KEY",
};
// Lengths in UTF-16 code units, as TikTok counts them ("UTF-16 runes": Direct Post and Photo references).
const CAPTION_MAX = 2200;
const PHOTO_TITLE_MAX = 90;
const PHOTO_DESCRIPTION_MAX = 4000;
const PHOTOS_MAX = 35;
const SINGLE_CHUNK_MAX = 64 * MB;
const CHUNK = 10 * MB;

type Fail = FailureOutcome;
/**
 * What connect asks for. user.info.profile carries `username` and user.info.stats `follower_count`
 * (Get User Info; User Info APIs Scope Migration, developers.tiktok.com, checked 2026-11-26).
 */
const SCOPES = [
  "user.info.basic",
  "user.info.profile",
  "user.info.stats",
  "video.publish",
  "video.upload",
  "video.list",
];
/** The scopes a token carries (TikTok answers them with the token); unknown for accounts connected before. */
const grantedScopes = (scope: unknown): string[] | null =>
  typeof scope === "string" ? scope.split(/[,\s]+/).filter(Boolean) : null;
const PRIVACY_LEVELS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"] as const;
/** The friendly privacy names clients send, as TikTok's privacy_level. */
const PRIVACY_NAMES: Record<string, (typeof PRIVACY_LEVELS)[number]> = {
  public: "PUBLIC_TO_EVERYONE",
  friends: "MUTUAL_FOLLOW_FRIENDS",
  followers: "FOLLOWER_OF_CREATOR",
  private: "SELF_ONLY",
};

interface Options {
  publish_mode?: "direct" | "draft";
  video_cover_timestamp_ms?: number;
  ai_generated?: boolean;
  privacy_level?: string;
}
interface Envelope<T> {
  data: T;
  error: { code: string; message: string; log_id?: string };
}

/** TikTok's chunk plan: one piece up to 64 MB, else 10 MB chunks with the remainder in the last one. */
export function chunkPlan(size: number): { chunkSize: number; count: number } {
  if (size <= SINGLE_CHUNK_MAX) return { chunkSize: size, count: 1 };
  return { chunkSize: CHUNK, count: Math.floor(size / CHUNK) };
}

async function call<T>(ctx: PluginContext, path: string, json: unknown, creates = false): Promise<T | Fail> {
  const res = await ctx.http.request<Envelope<T>>("POST", path, { json, headers: bearerAuth(ctx), creates });
  if (!res.ok) return res.outcome;
  // The envelope's code is what counts: a code other than "ok" is a failure whatever the HTTP status.
  const code = res.body?.error?.code;
  if (code && code !== "ok") return classify(res.status, res.body) ?? { kind: "permanent", reason: code, code };
  return res.body.data;
}

async function privacyFor(ctx: PluginContext, options: Options): Promise<string | Fail> {
  const info = await call<{ privacy_level_options: string[] }>(ctx, "/v2/post/publish/creator_info/query/", {});
  if (isFail(info)) return info;
  const allowed = info.privacy_level_options ?? [];
  if (options.privacy_level) {
    return allowed.includes(options.privacy_level)
      ? options.privacy_level
      : {
          kind: "permanent",
          reason: `This creator cannot post with privacy ${options.privacy_level}; allowed: ${allowed.join(", ")}.`,
          code: "privacy_level_option_mismatch",
        };
  }
  // Public when the creator's account offers it, else the first level offered. An app TikTok has not
  // audited is refused anything but SELF_ONLY at init (unauditedFallback).
  return allowed.includes("PUBLIC_TO_EVERYONE") ? "PUBLIC_TO_EVERYONE" : (allowed[0] ?? "SELF_ONLY");
}

async function publishVideo(ctx: PluginContext, job: PublishJob, options: Options): Promise<Outcome> {
  let bytes: Uint8Array;
  let type: string;
  try {
    const body = await ctx.media.open(job.media[0]);
    type = body.contentType.split(";")[0].trim();
    bytes = await body.bytes();
  } catch (e) {
    return unreadableMedia(e);
  }
  const { chunkSize, count } = chunkPlan(bytes.length);
  const source_info = {
    source: "FILE_UPLOAD",
    video_size: bytes.length,
    chunk_size: chunkSize,
    total_chunk_count: count,
  };
  let init: { publish_id: string; upload_url: string } | Fail;
  let notice: Notice | undefined;
  if (options.publish_mode === "draft") {
    init = await call(ctx, "/v2/post/publish/inbox/video/init/", { source_info });
  } else {
    const privacy = await privacyFor(ctx, options);
    if (isFail(privacy)) return privacy;
    const post = (privacy_level: string) =>
      call<{ publish_id: string; upload_url: string }>(ctx, "/v2/post/publish/video/init/", {
        post_info: {
          title: job.content,
          privacy_level,
          disable_comment: false,
          disable_duet: false,
          disable_stitch: false,
          ...(options.video_cover_timestamp_ms !== undefined && {
            video_cover_timestamp_ms: options.video_cover_timestamp_ms,
          }),
          ...(options.ai_generated !== undefined && { is_aigc: options.ai_generated }),
        },
        source_info,
      });
    ({ result: init, notice } = await unauditedFallback(options, privacy, post));
  }
  if (isFail(init)) return init;
  for (let i = 0; i < count; i++) {
    const start = i * chunkSize;
    const end = i === count - 1 ? bytes.length : start + chunkSize;
    // The last chunk completes the upload, after which TikTok publishes by itself.
    const put = await ctx.http.request("PUT", init.upload_url, {
      body: bytes.subarray(start, end) as Uint8Array<ArrayBuffer>,
      headers: { "content-type": type, "content-range": `bytes ${start}-${end - 1}/${bytes.length}` },
      creates: i === count - 1,
      timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 5 * 60_000),
    });
    if (!put.ok) return put.outcome;
  }
  return withNotice(await checkStatus(ctx, init.publish_id), notice);
}

async function publishPhotos(ctx: PluginContext, job: PublishJob, options: Options): Promise<Outcome> {
  const draft = options.publish_mode === "draft";
  const privacy = draft ? "SELF_ONLY" : await privacyFor(ctx, options);
  if (isFail(privacy)) return privacy;
  const title = utf16Prefix(
    job.content
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? "",
    PHOTO_TITLE_MAX,
  );
  const post = (privacy_level: string) =>
    call<{ publish_id: string }>(
      ctx,
      "/v2/post/publish/content/init/",
      {
        post_info: {
          title,
          description: utf16Prefix(job.content, PHOTO_DESCRIPTION_MAX),
          privacy_level,
          disable_comment: false,
          auto_add_music: true,
        },
        source_info: { source: "PULL_FROM_URL", photo_images: job.media.map((m) => m.url), photo_cover_index: 0 },
        post_mode: draft ? "MEDIA_UPLOAD" : "DIRECT_POST",
        media_type: "PHOTO",
      },
      true,
    );
  const { result: init, notice } = draft
    ? { result: await post(privacy) }
    : await unauditedFallback(options, privacy, post);
  if (isFail(init)) return init;
  return withNotice(await checkStatus(ctx, init.publish_id), notice);
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const options = job.options as Options;
  const videos = job.media.filter((m) => m.type === "video");
  return videos.length ? publishVideo(ctx, job, options) : publishPhotos(ctx, job, options);
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const [publishId, noticeCode] = handle.split("#");
  if (noticeCode === PRIVATE_NOTICE.code) return withNotice(await checkStatus(ctx, publishId), PRIVATE_NOTICE);
  const st = await call<{ status: string; fail_reason?: string; publicaly_available_post_id?: (string | number)[] }>(
    ctx,
    "/v2/post/publish/status/fetch/",
    { publish_id: publishId },
  );
  if (isFail(st)) return st.kind === "retryable" ? { kind: "submitted", handle: publishId } : st;
  if (st.status === "FAILED")
    return {
      kind: "permanent",
      reason: `TikTok could not publish: ${st.fail_reason ?? "failed"}`,
      code: st.fail_reason ?? "failed",
    };
  // A draft is done once it sits in the creator's inbox; they publish it from the app.
  if (st.status === "SEND_TO_USER_INBOX") return { kind: "published", platformPostId: publishId, url: null };
  if (st.status !== "PUBLISH_COMPLETE") return { kind: "submitted", handle: publishId };
  const raw = st.publicaly_available_post_id?.[0];
  const id =
    raw === undefined
      ? undefined
      : typeof raw === "string" || Number.isSafeInteger(raw)
        ? String(raw)
        : await exactId(ctx, raw);
  // Public posts get their id after moderation; until then the publish id stands for the post.
  return {
    kind: "published",
    platformPostId: id ?? publishId,
    url: id ? `https://www.tiktok.com/@${ctx.account.username}/video/${id}` : null,
  };
}

/**
 * TikTok sends post ids as bare 19-digit JSON numbers, which lose their last digits in a double. The
 * exact id is the one among the creator's latest videos (listed with string ids) that rounds to the
 * same double.
 */
async function exactId(ctx: PluginContext, approx: number): Promise<string | undefined> {
  const res = await ctx.http.request<Envelope<{ videos: { id: string }[] }>>("POST", "/v2/video/list/", {
    query: { fields: "id" },
    json: { max_count: 20 },
    headers: bearerAuth(ctx),
  });
  return res.ok ? res.body.data.videos.find((v) => Number(v.id) === approx)?.id : undefined;
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "TikTok" });

interface ApiVideo {
  id: string;
  title?: string;
  video_description?: string;
  create_time?: number;
  share_url?: string;
  cover_image_url?: string;
  view_count?: number;
  like_count?: number;
  comment_count?: number;
  share_count?: number;
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<Envelope<{ videos: ApiVideo[] }>>("POST", "/v2/video/list/", {
    query: { fields: "id,title,video_description,create_time,share_url,cover_image_url" },
    json: { max_count: 20 },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`TikTok videos: ${res.outcome.reason}`);
  return res.body.data.videos
    .map((v): RecentPost => ({
      platformPostId: v.id,
      url: v.share_url ?? null,
      content: v.video_description ?? v.title ?? "",
      // The Display API gives the share page, never the video file.
      media: [
        {
          url: v.share_url ?? `https://www.tiktok.com/@${ctx.account.username}/video/${v.id}`,
          type: "video",
          downloadable: false,
          ...(v.cover_image_url && { thumbnail_url: v.cover_image_url }),
        },
      ],
      createdAt: new Date((v.create_time ?? Date.now() / 1000) * 1000),
      kind: "video",
    }))
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += 20) {
    const res = await ctx.http.request<Envelope<{ videos: ApiVideo[] }>>("POST", "/v2/video/query/", {
      query: { fields: "id,view_count,like_count,comment_count,share_count" },
      json: { filters: { video_ids: ids.slice(i, i + 20) } },
      headers: bearerAuth(ctx),
    });
    if (!res.ok) throw new Error(`TikTok video query: ${res.outcome.reason}`);
    // TikTok does not expose saves.
    for (const v of res.body.data.videos)
      out[v.id] = {
        views: v.view_count ?? null,
        likes: v.like_count ?? null,
        comments: v.comment_count ?? null,
        shares: v.share_count ?? null,
        saves: null,
      };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  // follower_count needs user.info.stats: without it TikTok answers 401 scope_not_authorized, so an
  // account whose user did not grant it has no follower number rather than a failing read.
  const granted = grantedScopes(ctx.credentials.scope);
  if (granted && !granted.includes("user.info.stats")) return { followers: null };
  const res = await ctx.http.request<Envelope<{ user?: { follower_count?: number } }>>("GET", "/v2/user/info/", {
    query: { fields: "follower_count" },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`TikTok user info: ${res.outcome.reason}`);
  return { followers: res.body.data?.user?.follower_count ?? null };
}

export default definePlugin({
  platform: "tiktok",
  displayName: "TikTok",
  defaultApiUrl: "https://open.tiktokapis.com",
  // Video captions: 2,200 UTF-16 code units (photo posts: title 90, description 4,000).
  textLimit: { max: CAPTION_MAX, unit: "utf16" },
  // No alt text: TikTok's Content Posting API takes no alt text (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: false,
    images: true,
    video: true,
    replies: false,
    threads: false,
  },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/webp", "video/mp4", "video/webm", "video/quicktime"],
    convertible_formats: {
      // Photo posts take JPG, JPEG and WEBP, not PNG (https://developers.tiktok.com/doc/content-posting-api-media-transfer-guide, read 2026-11-26);
      // videos may be MP4, WebM or MOV (same page), so none is converted.
      "image/png": "image/jpeg",
    },
    max_size_bytes: { image: 20 * MB, video: 4 * GB, gif: 0 },
    file_constraints: {
      maxFiles: PHOTOS_MAX,
      maxImageFiles: PHOTOS_MAX,
      maxVideoFiles: 1,
      maxGifFiles: 0,
      allowMixedMedia: false,
      gifBehavior: "not supported",
      imageMaxResolution: "1080p",
      // Video: 360 to 4096 pixels per side, 23 to 60 FPS, H.264, H.265, VP8 or VP9 (developers.tiktok.com/doc/content-posting-api-media-transfer-guide, "Video
      // restrictions", checked 2026-11-26).
      minVideoWidth: 360,
      minVideoHeight: 360,
      maxVideoWidth: 4096,
      maxVideoHeight: 4096,
      minFrameRate: 23,
      maxFrameRate: 60,
      videoCodecs: ["h264", "hevc", "vp8", "vp9"],
      photoUrls: "must be on a domain verified for the TikTok app",
    },
    required_media: mediaRequired("TikTok", ["image", "video"], "one video or 1 to 35 photos"),
    max_hashtags: null,
    // Up to 10 min for every creator (a creator's own cap, max_video_post_duration_sec, is read at publish);
    // 3 s at least (developers.tiktok.com/doc/content-posting-api-media-transfer-guide, checked 2026-11-26).
    min_video_duration_seconds: 3,
    max_video_duration_seconds: 600,
    // No aspect ratio bound is documented; 9:16 is recommended.
    aspect_ratio: { recommended: "9:16" },
    thumbnail: {
      formats: ["image/jpeg", "image/png"],
      max_size_bytes: 8 * MB,
      applies_to: "direct videos (inserted as first frame)",
      // TikTok's Content Posting API takes no cover file, only video_cover_timestamp_ms: Crier puts the
      // cover in front of the video as its first frame (needs ffmpeg), as the upstream service does.
      insert_as_first_frame: true,
    },
  },
  optionsSchema: t.Object(
    {
      publish_mode: t.Optional(
        t.UnionEnum(["direct", "draft"], {
          description: "direct (the default) publishes; draft uploads to the creator's TikTok inbox to finish there.",
        }),
      ),
      video_cover_timestamp_ms: t.Optional(
        t.Integer({ minimum: 0, description: "Direct videos only; wins over media[].thumbnail_url." }),
      ),
      ai_generated: t.Optional(t.Boolean()),
      privacy_level: t.Optional(t.UnionEnum(PRIVACY_LEVELS)),
      privacy: t.Optional(
        t.UnionEnum([...PRIVACY_LEVELS, ...Object.keys(PRIVACY_NAMES)], {
          description:
            "Another name for privacy_level (the hosted service's): public, friends, followers or private, or a privacy_level value. Send one or the other.",
        }),
      ),
    },
    { additionalProperties: true },
  ),
  optionAliases: { privacy: { option: "privacy_level", values: PRIVACY_NAMES } },
  // TikTok's scope per endpoint (Content Posting and Display API references, checked 2026-11-26).
  requiredScopes: {
    publish: ["video.publish"],
    metrics: ["video.list"],
    account_stats: ["user.info.stats"],
    workflow_source: ["video.list"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://www.tiktok.com/v2/auth/authorize/",
    ...TOKEN_ENDPOINT,
    requiredSettings: ["CLIENT_KEY", "CLIENT_SECRET"],
    scopes: SCOPES,
    scopeSeparator: ",",
    async identity(c, token) {
      // Ask only for fields the granted scopes cover: one field beyond them fails the whole call (401
      // scope_not_authorized). A user may untick user.info.profile; the display name stands in then.
      const granted = grantedScopes(token.scope) ?? SCOPES;
      const fields = [
        "open_id",
        "display_name",
        "avatar_url",
        ...(granted.includes("user.info.profile") ? ["username"] : []),
      ];
      const me = await connectCall<{
        data: { user: { open_id: string; username?: string; display_name?: string; avatar_url?: string } };
      }>(c, "Reading the TikTok user", "GET", "/v2/user/info/", {
        query: { fields: fields.join(",") },
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      const u = me.data.user;
      return {
        remoteId: u.open_id,
        username: u.username ?? u.display_name ?? u.open_id,
        avatarUrl: u.avatar_url ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse: (res) => classify(res.status, res.body),
  publish,
  checkStatus,
  refresh,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares"],
});
