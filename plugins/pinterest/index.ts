/**
 * Pinterest API v5: a post is a pin on a board (platform_options.board_id, else the account's first
 * board): one image or a carousel of 2–5 (sent as bytes, so no public URL is needed for JPEG and PNG;
 * other formats by URL), or a video (uploaded, then "submitted" until Pinterest has processed it; the cover is
 * media[].thumbnail_url or the first frame).
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
  bearerAuth,
  refreshTokenGrant,
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { GB, MB, mediaRequired } from "../../src/platform/limits.ts";
import { parseRetryAfter } from "../../src/platform/retry-after.ts";

const TOKEN_URL = "https://api.pinterest.com/v5/oauth/token";
const TOKEN_ENDPOINT: TokenEndpoint = { tokenUrl: TOKEN_URL, clientAuth: "basic" };
const TITLE_MAX = 100;
const DESCRIPTION_MAX = 800;
const CAROUSEL_MAX = 5;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v;
const pinUrl = (id: string) => `https://www.pinterest.com/pin/${id}/`;

interface Options {
  title?: string;
  board_id?: string;
  link?: string;
}

export function pinTitle(job: Pick<PublishJob, "content" | "options">): string {
  const given = (job.options as Options).title;
  return (
    given ??
    [
      ...(job.content
        .split("\n")
        .find((l) => l.trim())
        ?.trim() ?? ""),
    ]
      .slice(0, TITLE_MAX)
      .join("")
  );
}

async function boardOf(ctx: PluginContext, options: Options): Promise<string | Fail> {
  if (options.board_id) return options.board_id;
  const res = await ctx.http.request<{ items: { id: string }[] }>("GET", "/boards", {
    query: { page_size: 25 },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) return res.outcome;
  return (
    res.body.items[0]?.id ?? {
      kind: "permanent",
      reason: "This Pinterest account has no board: create one, or set platform_options.board_id.",
      code: "no_board",
    }
  );
}

async function imageSource(ctx: PluginContext, item: MediaItem): Promise<Record<string, unknown> | Fail> {
  let body: Awaited<ReturnType<PluginContext["media"]["open"]>>;
  try {
    body = await ctx.media.open(item);
  } catch (e) {
    return unreadableMedia(e);
  }
  const type = body.contentType.split(";")[0].trim();
  if (type === "image/jpeg" || type === "image/png") {
    return {
      source_type: "image_base64",
      content_type: type,
      data: Buffer.from(await body.bytes()).toString("base64"),
    };
  }
  await body
    .stream()
    .cancel()
    .catch(() => {});
  // Other formats (GIF, WebP…) Pinterest fetches from the URL itself.
  return { source_type: "image_url", url: item.url };
}

interface Pending {
  pin: Record<string, unknown>;
  media_id: string;
}

async function createPin(ctx: PluginContext, pin: Record<string, unknown>): Promise<Outcome> {
  const res = await ctx.http.request<{ id: string }>("POST", "/pins", {
    json: pin,
    headers: bearerAuth(ctx),
    creates: true,
  });
  return res.ok ? { kind: "published", platformPostId: res.body.id, url: pinUrl(res.body.id) } : res.outcome;
}

async function uploadVideo(ctx: PluginContext, item: MediaItem): Promise<string | Fail> {
  let bytes: Uint8Array;
  let type: string;
  try {
    const body = await ctx.media.open(item);
    type = body.contentType;
    bytes = await body.bytes();
  } catch (e) {
    return unreadableMedia(e);
  }
  const reg = await ctx.http.request<{
    media_id: string;
    upload_url: string;
    upload_parameters: Record<string, string>;
  }>("POST", "/media", {
    json: { media_type: "video" },
    headers: bearerAuth(ctx),
  });
  if (!reg.ok) return reg.outcome;
  // The upload goes to the storage URL Pinterest hands out, with its signed fields and the file last.
  const form = new FormData();
  for (const [k, v] of Object.entries(reg.body.upload_parameters)) form.set(k, v);
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), "video");
  const up = await ctx.http.request("POST", reg.body.upload_url, { multipart: form });
  return up.ok ? reg.body.media_id : up.outcome;
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const options = job.options as Options;
  const videos = job.media.filter((m) => m.type === "video");
  const board = await boardOf(ctx, options);
  if (isFail(board)) return board;
  const pin: Record<string, unknown> = {
    board_id: board,
    title: pinTitle(job),
    description: job.content,
    ...(options.link && { link: options.link }),
    // A pin has one alt_text (PinCreate, at most 500 characters; Pinterest's OpenAPI v5, 2026-11-26): the
    // first file's, the one the pin shows first.
    ...(job.media[0]?.alt_text && { alt_text: job.media[0].alt_text }),
  };
  if (videos.length) {
    const mediaId = await uploadVideo(ctx, videos[0]);
    if (isFail(mediaId)) return mediaId;
    const cover = videos[0].thumbnail_url
      ? { cover_image_url: videos[0].thumbnail_url }
      : { cover_image_key_frame_time: 0 };
    pin.media_source = { source_type: "video_id", media_id: mediaId, ...cover };
    return checkStatus(ctx, JSON.stringify({ pin, media_id: mediaId } satisfies Pending));
  }
  const sources: Record<string, unknown>[] = [];
  for (const item of job.media) {
    const source = await imageSource(ctx, item);
    if (isFail(source)) return source;
    sources.push(source);
  }
  if (sources.length === 1) pin.media_source = sources[0];
  // A carousel of JPEG and PNG goes as bytes too (multiple_image_base64), so no public URL is needed.
  else if (sources.every((s) => s.source_type === "image_base64"))
    pin.media_source = {
      source_type: "multiple_image_base64",
      items: sources.map(({ content_type, data }) => ({ content_type, data })),
    };
  else pin.media_source = { source_type: "multiple_image_urls", items: job.media.map((m) => ({ url: m.url })) };
  return createPin(ctx, pin);
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const pending = JSON.parse(handle) as Pending;
  const res = await ctx.http.request<{ status?: string }>("GET", `/media/${pending.media_id}`, {
    headers: bearerAuth(ctx),
  });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  if (res.body.status === "failed")
    return { kind: "permanent", reason: "Pinterest could not process the video", code: "video_processing_failed" };
  if (res.body.status !== "succeeded") return { kind: "submitted", handle };
  return createPin(ctx, pending.pin);
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "Pinterest", form: { continuous_refresh: "true" } });

interface ApiPin {
  id: string;
  title?: string | null;
  description?: string | null;
  link?: string | null;
  created_at?: string;
  media?: { media_type?: string; images?: Record<string, { url?: string }>; cover_image_url?: string };
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{ items: ApiPin[] }>("GET", "/pins", {
    query: { page_size: 50 },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`Pinterest pins: ${res.outcome.reason}`);
  return res.body.items
    .map((p): RecentPost => {
      const video = p.media?.media_type === "video";
      const image = p.media?.images?.["1200x"]?.url ?? Object.values(p.media?.images ?? {})[0]?.url;
      // The API gives a video pin's cover image only, never the video file: the pin page stands in for it.
      const media: RecentMedia[] = video
        ? [
            {
              url: pinUrl(p.id),
              type: "video",
              downloadable: false,
              ...(p.media?.cover_image_url && { thumbnail_url: p.media.cover_image_url }),
            },
          ]
        : image
          ? [{ url: image, type: "image", downloadable: true }]
          : [];
      return {
        platformPostId: p.id,
        url: pinUrl(p.id),
        content: [p.title, p.description].filter(Boolean).join("\n"),
        media,
        createdAt: new Date(p.created_at ?? Date.now()),
        kind: video ? "video" : "image",
      };
    })
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await ctx.http.request<{ pin_metrics?: { lifetime_metrics?: Record<string, number> } }>(
      "GET",
      `/pins/${id}`,
      { query: { pin_metrics: true }, headers: bearerAuth(ctx) },
    );
    if (!res.ok) throw new Error(`Pinterest pin ${id}: ${res.outcome.reason}`);
    const m = res.body.pin_metrics?.lifetime_metrics ?? {};
    out[id] = {
      views: m.impression ?? null,
      likes: m.reaction ?? null,
      comments: m.comment ?? null,
      shares: null,
      saves: m.save ?? null,
    };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{ follower_count?: number }>("GET", "/user_account", { headers: bearerAuth(ctx) });
  if (!res.ok) throw new Error(`Pinterest user account: ${res.outcome.reason}`);
  return { followers: res.body.follower_count ?? null };
}

export default definePlugin({
  platform: "pinterest",
  displayName: "Pinterest",
  defaultApiUrl: "https://api.pinterest.com/v5",
  // The post content becomes the pin description; the title is platform_options.title (100).
  textLimit: { max: DESCRIPTION_MAX, unit: "characters" },
  // PinCreate.alt_text: maxLength 500 (contract.ts, from Pinterest's OpenAPI), counted here in UTF-16 units,
  // the stricter reading; one per pin, from its first file.
  altText: { image: { max_length: 500, unit: "utf16" }, video: { max_length: 500, unit: "utf16" } },
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
    supported_formats: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/bmp",
      "image/tiff",
      "image/webp",
      "video/mp4",
      "video/quicktime",
    ],
    convertible_formats: {
      // Video Pins: MP4, MOV, M4V (https://help.pinterest.com/en/business/article/pinterest-product-specs, read 2026-11-26).
      "video/webm": "video/mp4",
    },
    max_size_bytes: { image: 20 * MB, video: 2 * GB, gif: 20 * MB },
    file_constraints: {
      maxFiles: CAROUSEL_MAX,
      maxImageFiles: CAROUSEL_MAX,
      maxVideoFiles: 1,
      maxGifFiles: 1,
      allowMixedMedia: false,
      carousel: {
        minImages: 2,
        maxImages: CAROUSEL_MAX,
        mediaUrls: "sent as bytes when all are JPEG or PNG; otherwise they must be publicly reachable",
      },
    },
    required_media: mediaRequired("Pinterest", ["image", "video"], "an image or a video"),
    max_hashtags: null,
    // Video pins: 4 s to 15 min, taller than 1.91:1 and shorter than 1:2; 2:3 recommended for pins (help.pinterest.com/en/business/article/pinterest-product-specs,
    // "Standard video" and "Standard Pin", checked 2026-11-26). Taller images are cut in the feed, not refused.
    min_video_duration_seconds: 4,
    max_video_duration_seconds: 15 * 60,
    aspect_ratio: { video: { min: "1:2", max: "1.91:1" }, recommended: "2:3" },
    // Video pins need a cover: media[].thumbnail_url, else the first frame.
    thumbnail: { formats: ["image/jpeg", "image/png"], applies_to: "video pins (cover)" },
  },
  optionsSchema: t.Object(
    {
      title: t.Optional(t.String({ minLength: 1, maxLength: TITLE_MAX })),
      // Board ids are digits (PinCreate.board_id in Pinterest's OpenAPI).
      board_id: t.Optional(
        t.String({ pattern: "^\\d+$", description: "The board to pin to; the account's first board when absent." }),
      ),
      boardId: t.Optional(
        t.String({
          pattern: "^\\d+$",
          description: "Another name for board_id (the hosted service's); send one or the other.",
        }),
      ),
      link: t.Optional(t.String({ maxLength: 2048, description: "The URL the pin leads to." })),
    },
    { additionalProperties: true },
  ),
  optionAliases: { boardId: { option: "board_id" } },
  // Pinterest's OpenAPI security per operation (plugins/pinterest/contract.ts, checked 2026-11-26).
  requiredScopes: {
    publish: ["boards:read", "boards:write", "pins:read", "pins:write"],
    metrics: ["boards:read", "pins:read"],
    account_stats: ["user_accounts:read"],
    workflow_source: ["boards:read", "pins:read"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://www.pinterest.com/oauth/",
    ...TOKEN_ENDPOINT,
    scopes: ["boards:read", "boards:write", "pins:read", "pins:write", "user_accounts:read"],
    scopeSeparator: ",",
    async identity(c, token) {
      const me = await connectCall<{ id?: string; username: string; profile_image?: string }>(
        c,
        "Reading the Pinterest account",
        "GET",
        "/user_account",
        {
          headers: { authorization: `Bearer ${token.access_token}` },
        },
      );
      return {
        remoteId: me.id ?? me.username,
        username: me.username,
        avatarUrl: me.profile_image ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    if (res.status === 429) {
      const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), new Date()) ?? 60_000;
      return {
        kind: "retryable",
        reason: `rate limited: ${(res.body as { message?: string } | null)?.message ?? "Too many requests"}`,
        retryAfterMs,
      };
    }
    return undefined;
  },
  publish,
  checkStatus,
  refresh,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments", "saves"],
});
