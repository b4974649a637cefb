/**
 * LinkedIn member and company-page posts through the versioned REST API: text, one image or 2–20
 * (multiImage), or one video (multi-part upload, finalize, then "submitted" until LinkedIn has processed
 * it). Commentary is LinkedIn's "little text", so its reserved characters are escaped. A company page
 * (organization) is its own account, posting with the organization as author (organizations.ts).
 */
import { t } from "elysia";
import {
  definePlugin,
  unreadableMedia,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type PostMetrics,
  type PublishJob,
  type FailureOutcome,
  type AccountCheck,
  type AccountStats,
} from "../../src/platform/sdk.ts";
import {
  isOrganization,
  ORGANIZATION_SCOPES,
  organizationFollowers,
  organizationIdentities,
  organizationMetrics,
  organizationsEnabled,
} from "./organizations.ts";
import { DEFAULT_VERSION, escapeLittleText, headers, postUrl, versionSunset, versionWarnings } from "./rest.ts";
import { fetchRecent } from "./recent.ts";
import { findPostedComment, publishComment } from "./comments.ts";
import { connectCall, oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { KB, MB } from "../../src/platform/limits.ts";

export { DEFAULT_VERSION, escapeLittleText, versionSunset, versionWarnings } from "./rest.ts";

/** Member permissions (learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api, checked 2026-11-26). */
const POST_SCOPE = "w_member_social";

const TEXT_MAX = 3000;
/**
 * A first comment's longest text. The Comments API (learn.microsoft.com/en-us/linkedin/marketing/
 * community-management/shares/comments-api, read 2026-11-26) documents no length limit for message.text;
 * 1,250 characters is what LinkedIn's own comment box takes, so Crier refuses a longer text at creation.
 */
const COMMENT_MAX = 1250;
const IMAGES_MAX = 20;
const VIDEO_MAX = 500 * MB;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v;

/**
 * crier accounts check: the member's OpenID userinfo proves the token (the cheapest read; it carries no
 * version), and the configured LinkedIn-Version is judged against LinkedIn's support window.
 */
async function checkAccount(ctx: PluginContext): Promise<AccountCheck> {
  const me = await ctx.http.request("GET", "/v2/userinfo", { headers: { authorization: headers(ctx).authorization } });
  if (!me.ok) throw new Error(`LinkedIn refused the member read: ${me.outcome.reason}`);
  const version = ctx.settings.VERSION ?? DEFAULT_VERSION;
  const sunset = versionSunset(version);
  const now = ctx.now();
  const day = sunset?.toISOString().slice(0, 10);
  return {
    apiVersion: {
      value: version,
      accepted: sunset !== null && now < sunset,
      note: !sunset
        ? "not a LinkedIn version (YYYYMM)"
        : now >= sunset
          ? `sunset about ${day}: set CRIER_LINKEDIN_VERSION to a version LinkedIn lists as active`
          : `served until about ${day}`,
    },
  };
}

async function read(ctx: PluginContext, item: MediaItem): Promise<{ contentType: string; bytes: Uint8Array } | Fail> {
  try {
    const body = await ctx.media.open(item);
    return { contentType: body.contentType, bytes: await body.bytes() };
  } catch (e) {
    return unreadableMedia(e);
  }
}

async function uploadImage(ctx: PluginContext, item: MediaItem): Promise<string | Fail> {
  const file = await read(ctx, item);
  if (isFail(file)) return file;
  const init = await ctx.http.request<{ value: { uploadUrl: string; image: string } }>("POST", "/rest/images", {
    query: { action: "initializeUpload" },
    json: { initializeUploadRequest: { owner: ctx.credentials.author_urn } },
    headers: headers(ctx),
  });
  if (!init.ok) return init.outcome;
  const put = await ctx.http.request("PUT", init.body.value.uploadUrl, {
    body: file.bytes as Uint8Array<ArrayBuffer>,
    headers: { authorization: headers(ctx).authorization, "content-type": file.contentType },
  });
  return put.ok ? init.body.value.image : put.outcome;
}

interface VideoInit {
  value: {
    video: string;
    uploadToken: string;
    uploadInstructions: { uploadUrl: string; firstByte: number; lastByte: number }[];
  };
}

async function uploadVideo(ctx: PluginContext, item: MediaItem): Promise<string | Fail> {
  const file = await read(ctx, item);
  if (isFail(file)) return file;
  if (file.bytes.length < 75 * KB || file.bytes.length > VIDEO_MAX) {
    return {
      kind: "permanent",
      reason: `LinkedIn videos must be 75 KB to 500 MB (this one is ${file.bytes.length} bytes).`,
      code: "media_size",
    };
  }
  const init = await ctx.http.request<VideoInit>("POST", "/rest/videos", {
    query: { action: "initializeUpload" },
    json: {
      initializeUploadRequest: {
        owner: ctx.credentials.author_urn,
        fileSizeBytes: file.bytes.length,
        uploadCaptions: false,
        uploadThumbnail: false,
      },
    },
    headers: headers(ctx),
  });
  if (!init.ok) return init.outcome;
  const etags: string[] = [];
  for (const part of init.body.value.uploadInstructions) {
    const put = await ctx.http.request("PUT", part.uploadUrl, {
      body: file.bytes.subarray(part.firstByte, part.lastByte + 1) as Uint8Array<ArrayBuffer>,
      headers: { authorization: headers(ctx).authorization, "content-type": "application/octet-stream" },
    });
    if (!put.ok) return put.outcome;
    const etag = put.headers.get("etag");
    if (!etag) return { kind: "retryable", reason: "LinkedIn answered an upload part without an ETag" };
    etags.push(etag);
  }
  const fin = await ctx.http.request("POST", "/rest/videos", {
    query: { action: "finalizeUpload" },
    json: {
      finalizeUploadRequest: {
        video: init.body.value.video,
        uploadToken: init.body.value.uploadToken,
        uploadedPartIds: etags,
      },
    },
    headers: headers(ctx),
  });
  return fin.ok ? init.body.value.video : fin.outcome;
}

interface Pending {
  post: Record<string, unknown>;
  video: string;
}

async function createPost(ctx: PluginContext, post: Record<string, unknown>): Promise<Outcome> {
  const res = await ctx.http.request("POST", "/rest/posts", { json: post, headers: headers(ctx), creates: true });
  if (!res.ok) return res.outcome;
  const urn = res.headers.get("x-restli-id");
  if (!urn) return { kind: "unknown", reason: "LinkedIn accepted the post but sent no x-restli-id" };
  return { kind: "published", platformPostId: urn, url: postUrl(urn) };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  if (!ctx.credentials.author_urn)
    return {
      kind: "auth_expired",
      reason: "the stored LinkedIn credentials lack the member; connect the account again",
    };
  const videos = job.media.filter((m) => m.type === "video");
  const post: Record<string, unknown> = {
    author: ctx.credentials.author_urn,
    commentary: escapeLittleText(job.content),
    visibility: "PUBLIC",
    distribution: { feedDistribution: "MAIN_FEED", targetEntities: [], thirdPartyDistributionChannels: [] },
    lifecycleState: "PUBLISHED",
    isReshareDisabledByAuthor: false,
  };
  if (videos.length) {
    const video = await uploadVideo(ctx, videos[0]);
    if (isFail(video)) return video;
    post.content = { media: { id: video } };
    return checkStatus(ctx, JSON.stringify({ post, video } satisfies Pending));
  }
  // Each image with its altText, in the single-media and the multiImage content alike (Posts API, Media
  // and MultiImage content; learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/
  // posts-api and multiimage-post-api, 2026-11-26).
  const images: { id: string; altText?: string }[] = [];
  for (const item of job.media) {
    const id = await uploadImage(ctx, item);
    if (isFail(id)) return id;
    images.push({ id, ...(item.alt_text && { altText: item.alt_text }) });
  }
  if (images.length === 1) post.content = { media: images[0] };
  if (images.length > 1) post.content = { multiImage: { images } };
  return createPost(ctx, post);
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const pending = JSON.parse(handle) as Pending;
  const res = await ctx.http.request<{ status?: string }>("GET", `/rest/videos/${encodeURIComponent(pending.video)}`, {
    headers: headers(ctx),
  });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  if (res.body.status === "PROCESSING_FAILED")
    return { kind: "permanent", reason: "LinkedIn could not process the video", code: "video_processing_failed" };
  if (res.body.status !== "AVAILABLE") return { kind: "submitted", handle };
  return createPost(ctx, pending.post);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  // A company page's posts have LinkedIn's organization share statistics (impressions, likes, comments, shares).
  if (isOrganization(ctx.credentials.author_urn)) return organizationMetrics(ctx, headers(ctx), ids);
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await ctx.http.request<{
      likesSummary?: { totalLikes?: number };
      commentsSummary?: { aggregatedTotalComments?: number };
    }>("GET", `/rest/socialActions/${encodeURIComponent(id)}`, { headers: headers(ctx) });
    // Reading a member's likes and comments needs r_member_social, which LinkedIn grants to approved
    // developers only (CRIER_LINKEDIN_EXTRA_SCOPES asks for it); without it LinkedIn answers 403: the engine reports the numbers as limited.
    if (!res.ok) throw new Error(`LinkedIn social actions ${id}: ${res.outcome.reason}`);
    // Member impressions need LinkedIn's restricted analytics permission: views stay unknown.
    out[id] = {
      views: null,
      likes: res.body.likesSummary?.totalLikes ?? null,
      comments: res.body.commentsSummary?.aggregatedTotalComments ?? null,
      shares: null,
      saves: null,
    };
  }
  return out;
}

/**
 * The audience: a company page's follower count. LinkedIn documents no follower count of a member for
 * apps, so a member account has none (null, shown as unknown rather than 0).
 */
async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  if (!isOrganization(ctx.credentials.author_urn)) return { followers: null };
  return { followers: await organizationFollowers(ctx, headers(ctx)) };
}

export default definePlugin({
  platform: "linkedin",
  displayName: "LinkedIn",
  defaultApiUrl: "https://api.linkedin.com",
  textLimit: { max: TEXT_MAX, unit: "characters" },
  // An image's altText takes up to 4086 characters (Posts API, MediaContent and MultiImage image fields;
  // learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/posts-api, 2026-11-26). Crier
  // sends none with a video.
  altText: { image: { max_length: 4086, unit: "characters" }, video: null },
  // A source through fetchRecent: a company page's posts with r_organization_social; a member's only where
  // the app was granted r_member_social (otherwise the read is refused and the workflow says so).
  capabilities: {
    destination: true,
    source: true,
    backfill: false,
    text: true,
    images: true,
    video: true,
    replies: false,
    threads: false,
  },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "video/mp4"],
    convertible_formats: {
      // Images API: JPG, PNG, GIF (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/images-api, read 2026-11-26);
      // Videos API: MP4 only (https://learn.microsoft.com/en-us/linkedin/marketing/community-management/shares/videos-api, read 2026-11-26).
      "image/webp": "image/jpeg",
      "video/quicktime": "video/mp4",
      "video/webm": "video/mp4",
    },
    // LinkedIn limits images by pixels (36,152,320), not bytes; Crier's default image cap applies.
    max_size_bytes: { image: 20 * MB, video: VIDEO_MAX, gif: 20 * MB },
    file_constraints: {
      maxFiles: IMAGES_MAX,
      maxImageFiles: IMAGES_MAX,
      maxVideoFiles: 1,
      maxGifFiles: 1,
      allowMixedMedia: false,
      maxImagePixels: 36_152_320,
      minVideoBytes: 75 * KB,
      // Video frame rate 10 to 60 FPS (learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api, "Video Specifications", checked 2026-11-26).
      minFrameRate: 10,
      maxFrameRate: 60,
    },
    required_media: null,
    max_hashtags: null,
    // Video 3 s to 30 min, aspect ratio 1:2.4 to 2.4:1 (learn.microsoft.com/linkedin/marketing/community-management/shares/videos-api, "Video Specifications", checked 2026-11-26).
    min_video_duration_seconds: 3,
    max_video_duration_seconds: 30 * 60,
    aspect_ratio: { video: { min: "1:2.4", max: "2.4:1" } },
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  // What each capability needs (Microsoft Learn, LinkedIn: Posts API and Social Actions, checked 2026-11-26).
  requiredScopes: { publish: [POST_SCOPE], metrics: ["r_member_social"], first_comment: [POST_SCOPE] },
  connect: oauthFlow({
    authorizeUrl: "https://www.linkedin.com/oauth/v2/authorization",
    tokenUrl: "https://www.linkedin.com/oauth/v2/accessToken",
    clientAuth: "body",
    // r_member_social and the organization scopes only where the app was granted them: LinkedIn refuses a
    // consent asking for a scope the app lacks.
    scopes: (settings) => [
      ...new Set([
        "openid",
        "profile",
        POST_SCOPE,
        ...(organizationsEnabled(settings) ? ORGANIZATION_SCOPES : []),
        ...(settings.EXTRA_SCOPES ?? "").split(/[\s,]+/).filter(Boolean),
      ]),
    ],
    async identity(c, token) {
      const me = await connectCall<{ sub: string; name?: string; given_name?: string; picture?: string }>(
        c,
        "Reading the LinkedIn member",
        "GET",
        "/v2/userinfo",
        {
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      const member = {
        remoteId: me.sub,
        username: me.name ?? me.given_name ?? me.sub,
        avatarUrl: me.picture ?? null,
        credentials: tokenCredentials(token, c.now(), { author_urn: `urn:li:person:${me.sub}` }),
      };
      if (!organizationsEnabled(c.settings)) return member;
      // The member, then every company page they administer: each becomes an account of its own.
      const rest = {
        authorization: `Bearer ${token.access_token}`,
        "linkedin-version": c.settings.VERSION ?? DEFAULT_VERSION,
        "x-restli-protocol-version": "2.0.0",
      };
      return [member, ...(await organizationIdentities(c, rest, member.credentials))];
    },
  }),
  classifyResponse(res) {
    const body = res.body as { message?: string; serviceErrorCode?: number } | null;
    if (res.status === 426)
      return {
        kind: "permanent",
        reason: `LinkedIn-Version is no longer active: set CRIER_LINKEDIN_VERSION (${body?.message ?? ""})`,
        code: "version_inactive",
      };
    if (res.status === 403)
      return {
        kind: "permanent",
        reason: body?.message ?? "LinkedIn refused: a permission is missing",
        code: "access_denied",
      };
    return undefined;
  },
  startupWarnings: versionWarnings,
  checkAccount,
  publish,
  checkStatus,
  // Commenting needs nothing beyond what publishing asks for: w_member_social, or w_organization_social for a page.
  firstComment: {
    textLimit: { max: COMMENT_MAX, unit: "characters" },
    kind: "comment",
    publish: publishComment,
    find: findPostedComment,
  },
  metrics,
  // Views and shares come from a company page's share statistics; a member's stay unknown.
  metricNames: ["views", "likes", "comments", "shares"],
  accountStats,
  fetchRecent,
});
