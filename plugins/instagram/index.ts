/**
 * Instagram professional accounts through Instagram Login and the Graph API content publishing flow: a
 * container (a JPEG image, a Reel, a carousel of up to 10, or a Story as platform_options.placement asks:
 * placement.ts) that Instagram downloads and prepares, then media_publish. Media URLs must be publicly reachable (the server's own storage is, at
 * PUBLIC_URL). Every post needs media.
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
  type CommentJob,
  type CommentOutcome,
  type FindResult,
  type DeclaredMediaRequirements,
} from "../../src/platform/sdk.ts";
import { connectCall, oauthFlow, tokenCredentials, bearerAuth } from "../../src/platform/oauth.ts";
import {
  alreadyPublished,
  classifyGraph,
  createCarousel,
  createGraphComment,
  createContainer,
  longLivedToken,
  publishContainer,
  readInsights,
  refreshLongLivedToken,
} from "../../src/platform/graph.ts";
import { MB, mediaRequired } from "../../src/platform/limits.ts";
import { findComment, oldestOf } from "../../src/platform/find-comment.ts";
import {
  COLLABORATORS_MAX,
  optionProblems,
  PLACEMENTS,
  placementOf,
  requirementsFor,
  USER_TAGS_MAX,
  type Options,
} from "./placement.ts";

const V = "/v23.0";
const CAPTION_MAX = 2200;
const HASHTAGS_MAX = 30;
const MENTIONS_MAX = 20;
const CAROUSEL_MAX = 10;
/**
 * A first comment's longest text. The IG Media comments reference (developers.facebook.com/documentation/
 * instagram-platform/instagram-graph-api/reference/ig-media/comments, read 2026-11-26) documents no length,
 * hashtag or mention limit for a comment; Crier holds a comment to 2,200 characters, Instagram's caption
 * limit, refusing a longer one at creation rather than sending what Instagram may cut or refuse.
 */
const COMMENT_MAX = 2200;
/**
 * Commenting needs instagram_business_manage_comments besides instagram_business_basic under Instagram
 * Login, the flavour this plugin uses (graph.instagram.com; IG Media comments reference, "Requirements",
 * read 2026-11-26). Facebook Login's equivalent, instagram_manage_comments, does not apply here.
 */
const COMMENT_SCOPES = ["instagram_business_manage_comments"] as const;

type Fail = FailureOutcome;

const container = (ctx: PluginContext, fields: Record<string, string>) => createContainer(ctx, `${V}/me/media`, fields);

/** A Trial Reel is shown to non-followers first; Instagram takes it on REELS containers only. */
const trialParams = (o: Options): Record<string, string> =>
  o.trial_reel ? { trial_params: JSON.stringify({ graduation_strategy: o.trial_graduation ?? "MANUAL" }) } : {};

/**
 * An image container's alt text. Instagram takes alt_text on image containers only, single or carousel
 * items, "Reels and stories are not supported" (developers.facebook.com/docs/instagram-platform/
 * instagram-graph-api/reference/ig-user/media, changelog of March 24, 2025; read 2026-11-26).
 */
const altText = (m: MediaItem): Record<string, string> => (m.alt_text ? { alt_text: m.alt_text } : {});

/** Parameters that image, Reels and carousel containers share: collaborators and the location (a Page id). */
const shared = (o: Options): Record<string, string> => ({
  ...(o.collaborators?.length && { collaborators: JSON.stringify(o.collaborators) }),
  ...(o.location_id && { location_id: o.location_id }),
});

/** user_tags as JSON: on a Reel the usernames alone, elsewhere with x and y where given. */
const userTags = (o: Options, usernamesOnly: boolean): Record<string, string> =>
  o.user_tags?.length
    ? {
        user_tags: JSON.stringify(
          o.user_tags.map((u) =>
            usernamesOnly || u.x === undefined ? { username: u.username } : { username: u.username, x: u.x, y: u.y },
          ),
        ),
      }
    : {};

/** The fields of a single-media container for the target's placement. */
function singleContainer(m: MediaItem, o: Options, caption: Record<string, string>): Record<string, string> {
  const placement = placementOf(o);
  const video = m.type === "video";
  // A Story takes its media and user tags only: no caption, collaborators or location.
  if (placement === "story")
    return { media_type: "STORIES", ...(video ? { video_url: m.url } : { image_url: m.url }), ...userTags(o, false) };
  if (!video) return { image_url: m.url, ...altText(m), ...shared(o), ...userTags(o, false), ...caption };
  // A single video is a Reel on the feed placement too (feed videos are Reels since July 1, 2023).
  return {
    media_type: "REELS",
    video_url: m.url,
    share_to_feed: String(o.share_to_feed ?? true),
    ...(m.thumbnail_url
      ? { cover_url: m.thumbnail_url }
      : o.thumb_offset !== undefined && { thumb_offset: String(o.thumb_offset) }),
    ...trialParams(o),
    ...shared(o),
    ...userTags(o, true),
    ...caption,
  };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const caption: Record<string, string> = job.content ? { caption: job.content } : {};
  const options = (job.options ?? {}) as Options;
  let id: string | Fail;
  if (job.media.length === 1) id = await container(ctx, singleContainer(job.media[0], options, caption));
  else {
    const items = job.media.map((m): Record<string, string> =>
      m.type === "video" ? { media_type: "VIDEO", video_url: m.url } : { image_url: m.url, ...altText(m) },
    );
    id = await createCarousel(ctx, `${V}/me/media`, items, { ...shared(options), ...caption });
  }
  if (typeof id !== "string") return id;
  return checkStatus(ctx, id);
}

async function checkStatus(ctx: PluginContext, creationId: string): Promise<Outcome> {
  const st = await ctx.http.request<{ status_code?: string; status?: string }>("GET", `${V}/${creationId}`, {
    query: { fields: "status_code,status" },
    headers: bearerAuth(ctx),
  });
  if (!st.ok) return st.outcome.kind === "retryable" ? { kind: "submitted", handle: creationId } : st.outcome;
  const code = st.body.status_code;
  if (code === "IN_PROGRESS") return { kind: "submitted", handle: creationId };
  if (code === "ERROR" || code === "EXPIRED")
    return {
      kind: "permanent",
      reason: `Instagram could not prepare the media: ${st.body.status ?? code}`,
      code: code.toLowerCase(),
    };
  // A container is published once; a finished retry must not publish it a second time.
  if (code === "PUBLISHED") return alreadyPublished;
  return publishContainer(ctx, `${V}/me/media_publish`, creationId, V);
}

/**
 * The first comment: `POST /{ig-media-id}/comments` with `message` (IG Media comments reference, read
 * 2026-11-26), answered with the comment's id. An IG Comment has no address of its own: the url is the
 * post's, where the comment shows.
 */
async function publishComment(ctx: PluginContext, job: CommentJob): Promise<CommentOutcome> {
  const id = await createGraphComment(ctx, `${V}/${job.parent.platformPostId}/comments`, job.text, bearerAuth(ctx));
  return typeof id === "string" ? { kind: "published", platformPostId: id, url: job.parent.url } : id;
}

interface IgComment {
  id: string;
  text?: string;
  timestamp?: string;
  username?: string;
  from?: { id?: string; username?: string };
}

/** The account's own comments under the media (GET /{ig-media-id}/comments lists newest first). */
function findPostedComment(
  ctx: PluginContext,
  job: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  return findComment(job, window, "comment(s) under the media", async () => {
    const res = await ctx.http.request<{ data: IgComment[]; paging?: { next?: string } }>(
      "GET",
      `${V}/${job.parent.platformPostId}/comments`,
      { query: { fields: "id,text,timestamp,username,from", limit: 50 }, headers: bearerAuth(ctx) },
    );
    if (!res.ok) throw new Error(res.outcome.reason);
    const at = (c: IgComment) => new Date(c.timestamp ?? 0);
    const mine = (c: IgComment) =>
      c.from?.id === ctx.account.remoteId || (c.from?.username ?? c.username) === ctx.account.username;
    return {
      comments: res.body.data
        .filter(mine)
        .map((c) => ({ id: c.id, url: job.parent.url, text: c.text ?? "", createdAt: at(c) })),
      more: !!res.body.paging?.next,
      oldest: oldestOf(res.body.data.map(at)),
    };
  });
}

const refresh = (ctx: PluginContext): Promise<Credentials> =>
  refreshLongLivedToken(ctx, "ig_refresh_token", "Instagram");

interface IgMedia {
  id: string;
  caption?: string;
  media_type?: string;
  media_url?: string;
  thumbnail_url?: string;
  permalink?: string;
  timestamp?: string;
  children?: { data?: { media_type?: string; media_url?: string }[] };
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{ data: IgMedia[] }>("GET", `${V}/me/media`, {
    query: {
      fields:
        "id,caption,media_type,media_product_type,media_url,thumbnail_url,permalink,timestamp,children{media_type,media_url}",
      limit: 50,
    },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`Instagram media: ${res.outcome.reason}`);
  // media_url is the file on Instagram's CDN.
  const item = (type?: string, url?: string, thumb?: string): RecentMedia[] =>
    url
      ? [
          {
            url,
            type: type === "VIDEO" ? "video" : "image",
            downloadable: true,
            ...(thumb && { thumbnail_url: thumb }),
          },
        ]
      : [];
  return res.body.data
    .map((p): RecentPost => {
      const media =
        p.media_type === "CAROUSEL_ALBUM"
          ? (p.children?.data ?? []).flatMap((c) => item(c.media_type, c.media_url))
          : item(p.media_type, p.media_url, p.thumbnail_url);
      return {
        platformPostId: p.id,
        url: p.permalink ?? null,
        content: p.caption ?? "",
        media,
        createdAt: new Date(p.timestamp ?? Date.now()),
        kind: media.some((m) => m.type === "video") ? "video" : "image",
      };
    })
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const v = await readInsights(ctx, V, id, ["views", "likes", "comments", "shares", "saved"], "Instagram");
    out[id] = { views: v("views"), likes: v("likes"), comments: v("comments"), shares: v("shares"), saves: v("saved") };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{ followers_count?: number }>("GET", `${V}/me`, {
    query: { fields: "followers_count" },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`Instagram account: ${res.outcome.reason}`);
  return { followers: res.body.followers_count ?? null };
}

/** What the feed takes; Reels and Stories narrow it (placement.ts). */
const FEED: DeclaredMediaRequirements = {
  supported_formats: ["image/jpeg", "video/mp4", "video/quicktime"],
  convertible_formats: {
    // Images: JPEG only; video: MOV or MP4 (https://developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, read 2026-11-26).
    "image/png": "image/jpeg",
    "image/webp": "image/jpeg",
    "video/webm": "video/mp4",
  },
  max_size_bytes: { image: 8 * MB, video: 300 * MB, gif: 0 },
  file_constraints: {
    maxFiles: CAROUSEL_MAX,
    maxImageFiles: CAROUSEL_MAX,
    maxVideoFiles: CAROUSEL_MAX,
    maxGifFiles: 0,
    allowMixedMedia: true,
    gifBehavior: "not supported",
    maxMentions: MENTIONS_MAX,
    imageWidth: { min: 320, max: 1440 },
    // Reels video: 23-60 FPS, at most 1920 columns, HEVC or H.264 (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, "Reel Specifications", checked 2026-11-26).
    minFrameRate: 23,
    maxFrameRate: 60,
    maxVideoWidth: 1920,
    videoCodecs: ["h264", "hevc"],
    // Wider images are scaled down by Crier before they leave (own media); same source as imageWidth.
    maxImageWidth: 1440,
    mediaUrls: "must be publicly reachable",
  },
  required_media: mediaRequired("Instagram", ["image", "video"], "at least one image or video"),
  max_hashtags: HASHTAGS_MAX,
  // Reels last 3 s to 15 min (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, "Reel Specifications", checked 2026-11-26).
  min_video_duration_seconds: 3,
  max_video_duration_seconds: 900,
  // Images 4:5 to 1.91:1 ("Image Specifications"); Reels 0.01:1 to 10:1, 9:16 recommended ("Reel
  // Specifications"); both on developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/ig-user/media, checked 2026-11-26.
  aspect_ratio: { image: { min: "4:5", max: "1.91:1" }, video: { min: "0.01:1", max: "10:1" }, recommended: "9:16" },
  // Reels cover photo: JPEG, 8 MB at most (IG User Media reference, "Reels cover photo specifications",
  // checked 2026-11-26). A PNG thumbnail_url of Crier's own is sent as a JPEG copy (src/media/prepare.ts).
  thumbnail: { formats: ["image/jpeg"], max_size_bytes: 8 * MB, applies_to: "Reels (cover_url)" },
};

export default definePlugin({
  platform: "instagram",
  displayName: "Instagram",
  defaultApiUrl: "https://graph.instagram.com",
  textLimit: { max: CAPTION_MAX, unit: "characters" },
  // Image containers take alt_text (no documented length limit); Reels and video carousel items do not.
  altText: { image: { max_length: null, unit: "characters" }, video: null },
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
  mediaRequirements: FEED,
  optionsSchema: t.Object(
    {
      ai_generated: t.Optional(
        t.Boolean({
          description:
            "Requests Instagram's AI-generated label (accepted; not sent yet: the publishing API field is not documented).",
        }),
      ),
      placement: t.Optional(
        t.UnionEnum(PLACEMENTS, {
          default: "feed",
          description:
            "Extension: where the post goes. feed (default): an image, a carousel, or a single video (which Instagram publishes as a Reel); reels: one video as a Reel; story: one image or one video as a Story (24 hours; the text is not sent, Stories take no caption).",
        }),
      ),
      share_to_feed: t.Optional(
        t.Boolean({
          default: true,
          description: "Extension: a Reel also shows in the profile's feed grid (Reels only; default true).",
        }),
      ),
      thumb_offset: t.Optional(
        t.Integer({
          minimum: 0,
          description:
            "Extension: the Reel's cover frame, in milliseconds from the start (Reels only; media[].thumbnail_url, sent as cover_url, wins).",
        }),
      ),
      collaborators: t.Optional(
        t.Array(t.String({ pattern: "^[A-Za-z0-9._]{1,30}$" }), {
          maxItems: COLLABORATORS_MAX,
          uniqueItems: true,
          description: `Extension: up to ${COLLABORATORS_MAX} Instagram usernames invited as collaborators (feed images, carousels and Reels; not Stories).`,
        }),
      ),
      user_tags: t.Optional(
        t.Array(
          t.Object(
            {
              username: t.String({ pattern: "^[A-Za-z0-9._]{1,30}$" }),
              x: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
              y: t.Optional(t.Number({ minimum: 0, maximum: 1 })),
            },
            { additionalProperties: false },
          ),
          {
            maxItems: USER_TAGS_MAX,
            description:
              "Extension: accounts tagged on a single image (x and y required, 0.0 to 1.0 from the top-left), a Reel (usernames only) or a Story (x and y optional). 400 invalid_user_tags otherwise.",
          },
        ),
      ),
      location_id: t.Optional(
        t.String({
          pattern: "^[0-9]{1,20}$",
          description:
            "Extension: the location, as the id of a Facebook Page that has a location (feed posts and Reels; not Stories).",
        }),
      ),
      trial_reel: t.Optional(
        t.Boolean({
          description:
            "Publishes a single-video post as a Trial Reel, shown to non-followers first (trial_params). Instagram has trial reels only: images and carousels publish as usual; a Story refuses it.",
        }),
      ),
      trial_graduation: t.Optional(
        t.UnionEnum(["MANUAL", "SS_PERFORMANCE"], {
          default: "MANUAL",
          description:
            "With trial_reel: MANUAL (you share it to followers in the Instagram app) or SS_PERFORMANCE (Instagram shares it if it performs well with non-followers).",
        }),
      ),
    },
    { additionalProperties: true },
  ),
  // A Reel or a Story has media rules of its own, and some options belong to some placements only.
  mediaRequirementsFor(options) {
    return requirementsFor(FEED, options as Options);
  },
  optionProblems: (target) => optionProblems(target as never),
  // Each Instagram API with Instagram Login reference's Requirements (checked 2026-11-26).
  requiredScopes: {
    publish: ["instagram_business_basic", "instagram_business_content_publish"],
    metrics: ["instagram_business_basic", "instagram_business_manage_insights"],
    account_stats: ["instagram_business_basic"],
    workflow_source: ["instagram_business_basic"],
    first_comment: ["instagram_business_basic", ...COMMENT_SCOPES],
  },
  connect: oauthFlow({
    authorizeUrl: "https://www.instagram.com/oauth/authorize",
    tokenUrl: "https://api.instagram.com/oauth/access_token",
    clientAuth: "body",
    // Reading the account and its media, publishing, insights, and first comments (writing the account's
    // own comment under its post and reading it back).
    scopes: [
      "instagram_business_basic",
      "instagram_business_content_publish",
      "instagram_business_manage_insights",
      ...COMMENT_SCOPES,
    ],
    scopeSeparator: ",",
    async identity(c, token) {
      // The code gives a one-hour token; the long-lived one lasts 60 days and can be refreshed.
      const long = await longLivedToken(c, "ig_exchange_token", token);
      const me = await connectCall<{ user_id?: string; id: string; username: string; profile_picture_url?: string }>(
        c,
        "Reading the Instagram account",
        "GET",
        "/me",
        {
          query: { fields: "user_id,username,profile_picture_url", access_token: long.access_token },
        },
      );
      return {
        remoteId: String(me.user_id ?? me.id),
        username: me.username,
        avatarUrl: me.profile_picture_url ?? null,
        credentials: tokenCredentials(long, c.now()),
      };
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
  refresh,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "shares", "saves"],
});
