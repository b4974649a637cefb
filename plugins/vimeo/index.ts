/**
 * Vimeo API 3.4: one video per post. The video is created with a tus upload (Crier streams the bytes,
 * so the media need not be publicly reachable), then stays "submitted" until Vimeo has transcoded it.
 * The post content becomes the description; the title is platform_options.title or its first line.
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
} from "../../src/platform/sdk.ts";
import { oauthFlow, tokenCredentials } from "../../src/platform/oauth.ts";
import { GB, mediaRequired } from "../../src/platform/limits.ts";

const ACCEPT = "application/vnd.vimeo.*+json;version=3.4";
const TITLE_MAX = 128;

const headers = (ctx: PluginContext) => ({
  authorization: `Bearer ${String(ctx.credentials.access_token)}`,
  accept: ACCEPT,
});
const idOf = (uri: string) => uri.split("/").pop()!;

/** platform_options.title, else the first line of the content, cut to Vimeo's 128. */
export function titleOf(job: Pick<PublishJob, "content" | "options">): string {
  const given = (job.options as { title?: string }).title;
  if (given) return given;
  const line =
    job.content
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? "";
  return [...(line || "Untitled")].slice(0, TITLE_MAX).join("");
}

interface VimeoVideo {
  uri: string;
  link?: string;
  name?: string;
  description?: string | null;
  created_time?: string;
  upload?: { upload_link?: string; status?: string };
  transcode?: { status?: string };
  pictures?: { base_link?: string };
  stats?: { plays?: number | null };
  metadata?: { connections?: { likes?: { total?: number }; comments?: { total?: number } } };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  let body: Awaited<ReturnType<PluginContext["media"]["open"]>>;
  let size: number;
  let bytes: Uint8Array | null = null;
  try {
    body = await ctx.media.open(job.media[0]);
    size = body.size ?? (bytes = await body.bytes()).length;
  } catch (e) {
    return unreadableMedia(e);
  }
  if (!body.contentType.startsWith("video/"))
    return { kind: "permanent", reason: `${body.contentType} is not a video`, code: "unsupported_media" };
  const privacy = (job.options as { privacy_view?: string }).privacy_view ?? "anybody";
  // Creating the video is what makes it exist on the account: a lost answer here may have created it.
  const created = await ctx.http.request<VimeoVideo>("POST", "/me/videos", {
    headers: headers(ctx),
    json: {
      upload: { approach: "tus", size: String(size) },
      name: titleOf(job),
      description: job.content,
      privacy: { view: privacy },
    },
    creates: true,
  });
  if (!created.ok) return created.outcome;
  const video = created.body;
  const link = video.upload?.upload_link;
  if (!link) return { kind: "unknown", reason: "Vimeo created the video but gave no upload link" };
  const sent = await ctx.http.request<unknown>("PATCH", link, {
    headers: { "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream" },
    body: (bytes ?? body.stream()) as BodyInit,
    timeoutMs: Math.max(ctx.http.timeoutMs ?? 30_000, 10 * 60_000),
  });
  if (!sent.ok) {
    // Leave no empty video behind; a retry starts from a fresh one (DELETE needs the delete scope).
    await ctx.http.request("DELETE", video.uri, { headers: headers(ctx) });
    return sent.outcome.kind === "unknown" ? { kind: "retryable", reason: sent.outcome.reason } : sent.outcome;
  }
  return checkStatus(ctx, video.uri);
}

async function checkStatus(ctx: PluginContext, uri: string): Promise<Outcome> {
  const res = await ctx.http.request<VimeoVideo>("GET", uri, {
    query: { fields: "uri,link,upload.status,transcode.status" },
    headers: headers(ctx),
  });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle: uri } : res.outcome;
  const v = res.body;
  if (v.upload?.status === "error" || v.transcode?.status === "error")
    return { kind: "permanent", reason: "Vimeo could not process the video", code: "video_processing_failed" };
  if (v.transcode?.status !== "complete") return { kind: "submitted", handle: uri };
  return { kind: "published", platformPostId: idOf(v.uri), url: v.link ?? `https://vimeo.com/${idOf(v.uri)}` };
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<{ data: VimeoVideo[] }>("GET", "/me/videos", {
    query: {
      sort: "date",
      direction: "desc",
      per_page: 50,
      fields: "uri,name,description,link,created_time,pictures.base_link",
    },
    headers: headers(ctx),
  });
  if (!res.ok) throw new Error(`Vimeo videos: ${res.outcome.reason}`);
  return res.body.data
    .map((v): RecentPost => ({
      platformPostId: idOf(v.uri),
      url: v.link ?? null,
      content: v.description ?? v.name ?? "",
      // The video's page: its files are only listed for Pro accounts' own downloads, which Crier does not ask for.
      media: [
        {
          url: v.link ?? `https://vimeo.com/${idOf(v.uri)}`,
          type: "video",
          downloadable: false,
          ...(v.pictures?.base_link && { thumbnail_url: v.pictures.base_link }),
        },
      ],
      createdAt: new Date(v.created_time ?? Date.now()),
      kind: "video",
    }))
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await ctx.http.request<VimeoVideo>("GET", `/videos/${id}`, {
      query: { fields: "uri,stats.plays,metadata.connections.likes.total,metadata.connections.comments.total" },
      headers: headers(ctx),
    });
    if (!res.ok) {
      if (res.status === 404) continue;
      throw new Error(`Vimeo video ${id}: ${res.outcome.reason}`);
    }
    const c = res.body.metadata?.connections;
    out[id] = {
      views: res.body.stats?.plays ?? null,
      likes: c?.likes?.total ?? null,
      comments: c?.comments?.total ?? null,
      shares: null,
      saves: null,
    };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await ctx.http.request<{ metadata?: { connections?: { followers?: { total?: number } } } }>(
    "GET",
    "/me",
    {
      query: { fields: "metadata.connections.followers.total" },
      headers: headers(ctx),
    },
  );
  if (!res.ok) throw new Error(`Vimeo user: ${res.outcome.reason}`);
  return { followers: res.body.metadata?.connections?.followers?.total ?? null };
}

export default definePlugin({
  platform: "vimeo",
  displayName: "Vimeo",
  defaultApiUrl: "https://api.vimeo.com",
  textLimit: { max: 5000, unit: "characters" },
  // No alt text: Vimeo's upload API takes no alt text for a video (checked 2026-11-26); media[].alt_text is ignored.
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
    // The account's plan quota is the real limit; 10 GB is Crier's advisory ceiling.
    max_size_bytes: { image: 0, video: 10 * GB, gif: 0 },
    file_constraints: {
      maxFiles: 1,
      maxImageFiles: 0,
      maxVideoFiles: 1,
      maxGifFiles: 0,
      allowMixedMedia: false,
      sizeLimit: "set by the Vimeo plan quota",
    },
    required_media: mediaRequired("Vimeo", ["video"], "exactly one video"),
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object(
    {
      title: t.Optional(
        t.String({ minLength: 1, maxLength: TITLE_MAX, description: "Defaults to the first line of the content." }),
      ),
      privacy_view: t.Optional(t.UnionEnum(["anybody", "unlisted", "nobody", "disable"], { default: "anybody" })),
    },
    { additionalProperties: true },
  ),
  // Vimeo's OpenAPI security per operation (checked 2026-11-26): uploading needs upload, the clean-up of a
  // failed upload delete, stats the play counts, private the account's own videos.
  requiredScopes: { publish: ["upload", "delete"], metrics: ["stats"], workflow_source: ["private"] },
  connect: oauthFlow({
    authorizeUrl: "https://api.vimeo.com/oauth/authorize",
    tokenUrl: "https://api.vimeo.com/oauth/access_token",
    clientAuth: "basic",
    // Per request, as Vimeo's OpenAPI description (github.com/vimeo/openapi, api.yaml; checked 2026-11-26)
    // secures them: POST /me/videos needs upload, the clean-up DELETE /videos/{id} needs delete; private
    // lets /me/videos list the account's private videos and stats reads plays. Nothing edits or interacts.
    scopes: ["public", "private", "upload", "delete", "stats"],
    async identity(c, token) {
      // Vimeo's token answer already carries the user.
      const user = token.user as
        { uri?: string; name?: string; link?: string; pictures?: { base_link?: string } } | undefined;
      const id = user?.uri?.split("/").pop();
      if (!id) throw new Error("Vimeo answered the code exchange without a user");
      return {
        remoteId: id,
        username: user?.name ?? id,
        avatarUrl: user?.pictures?.base_link ?? null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    const body = res.body as { error?: string; error_code?: number; developer_message?: string } | null;
    // 4101/4102: the plan's storage or weekly upload quota is used up; trying again will not help today.
    if (res.status === 403 && (body?.error_code === 4101 || body?.error_code === 4102)) {
      return { kind: "permanent", reason: body.error ?? "Vimeo upload quota exceeded", code: "quota_exceeded" };
    }
    return undefined;
  },
  publish,
  checkStatus,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["views", "likes", "comments"],
});
