/**
 * Reddit: self (text) and link posts, one image or a gallery, in platform_options.subreddit; a thread
 * continues as a chain of comments. Images go through Reddit's media asset upload (the flow Reddit's
 * own clients use); a single-image submit returns no id, so the post is found in the user's
 * submissions ("submitted" until it appears). Videos are not posted by Crier (Reddit's video upload
 * needs a poster frame and websocket processing it does not document), so video is declared false.
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
  type TokenEndpoint,
} from "../../src/platform/oauth.ts";
import { MB } from "../../src/platform/limits.ts";
import pkg from "../../package.json" with { type: "json" };

/**
 * The User-Agent Reddit's API rules ask of every client, token endpoint included (github.com/reddit-archive/
 * reddit/wiki/API, "Rules", checked 2026-11-26): `<platform>:<app ID>:<version string> (by /u/<reddit
 * username>)`; default agents are "drastically limited". Built from the install's own app id and its
 * developer's username, so no two installs share one; CRIER_REDDIT_USER_AGENT replaces it whole.
 */
export function userAgent(settings: Record<string, string | undefined>): string {
  if (settings.USER_AGENT) return settings.USER_AGENT;
  const username = (settings.USERNAME ?? "").replace(/^\/?u\//, "");
  return `server:${settings.CLIENT_ID ?? ""}:crier-${pkg.version} (by /u/${username})`;
}

const TOKEN_URL = "https://www.reddit.com/api/v1/access_token";
const TOKEN_ENDPOINT: TokenEndpoint = {
  tokenUrl: TOKEN_URL,
  clientAuth: "basic",
  headers: (settings) => ({ "user-agent": userAgent(settings) }),
};
const TITLE_MAX = 300;
// A self post's text (reddit.com/dev/api#POST_api_submit; "this is too long (max: 40000)").
const TEXT_MAX = 40000;
// A comment's text: Reddit answers TOO_LONG "this is too long (max: 10000)" above it.
const COMMENT_MAX = 10000;
const GALLERY_MAX = 20;
const URL_ONLY = /^\s*(https?:\/\/\S+)\s*$/i;

type Fail = FailureOutcome;
const isFail = (v: unknown): v is Fail => typeof v === "object" && v !== null && "kind" in v;
const headers = (ctx: PluginContext) => ({
  authorization: `Bearer ${String(ctx.credentials.access_token)}`,
  "user-agent": userAgent(ctx.settings),
});

interface Options {
  subreddit?: string;
  title?: string;
  postType?: "auto" | "self" | "link";
  flair_id?: string;
  flair_text?: string;
  nsfw?: boolean;
  spoiler?: boolean;
  send_replies?: boolean;
}

/** The post's flair and markings, in the names /api/submit and submit_gallery_post take. */
function markings(o: Options): {
  flair_id?: string;
  flair_text?: string;
  nsfw?: boolean;
  spoiler?: boolean;
  sendreplies: boolean;
} {
  return {
    ...(o.flair_id && { flair_id: o.flair_id }),
    ...(o.flair_text && { flair_text: o.flair_text }),
    ...(o.nsfw !== undefined && { nsfw: o.nsfw }),
    ...(o.spoiler !== undefined && { spoiler: o.spoiler }),
    // Reddit's own default: replies to the post reach the author's inbox.
    sendreplies: o.send_replies ?? true,
  };
}

export function titleOf(job: Pick<PublishJob, "content" | "options">): string {
  const given = (job.options as Options).title;
  const line =
    given ??
    job.content
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ??
    "";
  return [...line].slice(0, TITLE_MAX).join("");
}

type JsonErrors = { json?: { errors?: [string, string, string?][]; data?: Record<string, unknown> } };

/** Reddit answers 200 with `json.errors` for refusals; RATELIMIT says how long to wait in words. */
export function jsonErrors(body: JsonErrors): Fail | null {
  const errors = body.json?.errors ?? [];
  if (errors.length === 0) return null;
  const [code, message] = errors[0];
  if (code === "RATELIMIT") {
    const m = /(\d+)\s*(second|minute|hour)/i.exec(message);
    const unit = { second: 1000, minute: 60_000, hour: 3600_000 }[(m?.[2] ?? "minute").toLowerCase() as "second"];
    return { kind: "retryable", reason: `Reddit: ${message}`, retryAfterMs: (m ? Number(m[1]) : 10) * unit };
  }
  return { kind: "permanent", reason: `Reddit: ${message} (${code})`, code };
}

async function uploadImage(
  ctx: PluginContext,
  item: MediaItem,
  n: number,
): Promise<{ assetId: string; location: string } | Fail> {
  let bytes: Uint8Array;
  let type: string;
  try {
    const body = await ctx.media.open(item);
    type = body.contentType.split(";")[0].trim();
    bytes = await body.bytes();
  } catch (e) {
    return unreadableMedia(e);
  }
  if (!type.startsWith("image/"))
    return { kind: "permanent", reason: `media ${n}: ${type} is not an image`, code: "unsupported_media" };
  const ext = type.split("/")[1].replace("jpeg", "jpg");
  const lease = await ctx.http.request<{
    args: { action: string; fields: { name: string; value: string }[] };
    asset: { asset_id: string };
  }>("POST", "/api/media/asset.json", {
    form: { filepath: `image-${n}.${ext}`, mimetype: type },
    headers: headers(ctx),
  });
  if (!lease.ok) return lease.outcome;
  const form = new FormData();
  for (const f of lease.body.args.fields) form.set(f.name, f.value);
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), `image-${n}.${ext}`);
  // The action is protocol-relative ("//bucket…"): it takes the scheme of the API it came from.
  const up = await ctx.http.request<string>("POST", new URL(lease.body.args.action, ctx.http.baseUrl).toString(), {
    multipart: form,
    headers: { accept: "*/*" },
  });
  if (!up.ok) return up.outcome;
  const location = /<Location>([^<]+)<\/Location>/.exec(String(up.body))?.[1];
  if (!location) return { kind: "retryable", reason: "Reddit's media storage answered without a Location" };
  return { assetId: lease.body.asset.asset_id, location: decodeURIComponent(location) };
}

interface Pending {
  subreddit: string;
  title: string;
  since: number;
}

async function submit(
  ctx: PluginContext,
  options: Options,
  fields: Record<string, string>,
): Promise<{ data: Record<string, unknown> } | Fail> {
  const marks = Object.fromEntries(Object.entries(markings(options)).map(([k, v]) => [k, String(v)]));
  const res = await ctx.http.request<JsonErrors>("POST", "/api/submit", {
    form: { api_type: "json", ...marks, ...fields },
    headers: headers(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return jsonErrors(res.body) ?? { data: res.body.json?.data ?? {} };
}

const published = (data: Record<string, unknown>): Outcome => {
  const name = String(data.name ?? data.id ?? "");
  const fullname = name.startsWith("t3_") ? name : `t3_${name}`;
  return {
    kind: "published",
    platformPostId: fullname,
    url: typeof data.url === "string" ? data.url : `https://redd.it/${fullname.slice(3)}`,
  };
};

async function comment(ctx: PluginContext, parent: string, text: string): Promise<Outcome> {
  const res = await ctx.http.request<
    JsonErrors & { json?: { data?: { things?: { data: { name: string; permalink?: string } }[] } } }
  >("POST", "/api/comment", {
    form: { api_type: "json", thing_id: parent, text },
    headers: headers(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  const fail = jsonErrors(res.body);
  if (fail) return fail;
  const c = (res.body.json?.data as { things?: { data: { name: string; permalink?: string } }[] } | undefined)
    ?.things?.[0]?.data;
  if (!c) return { kind: "unknown", reason: "Reddit accepted the comment but did not return it" };
  return {
    kind: "published",
    platformPostId: c.name,
    url: c.permalink ? `https://www.reddit.com${c.permalink}` : null,
  };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const options = job.options as Options;
  // Later items of a thread are comments under the post (or under the previous comment).
  if (job.replyTo) {
    if (job.media.length)
      return { kind: "permanent", reason: "Reddit comments cannot carry media.", code: "media_in_comment" };
    if ([...job.content].length > COMMENT_MAX)
      return {
        kind: "permanent",
        reason: `Reddit comments take at most ${COMMENT_MAX} characters.`,
        code: "content_too_long",
      };
    return comment(ctx, job.replyTo.platformPostId, job.content);
  }
  if (!options.subreddit)
    return {
      kind: "permanent",
      reason: "Set platform_options.subreddit for Reddit targets.",
      code: "subreddit_required",
    };
  const title = titleOf(job);
  if (!title)
    return {
      kind: "permanent",
      reason: "A Reddit post needs a title: set platform_options.title or start the content with a line.",
      code: "title_required",
    };
  const sr = options.subreddit;
  if (job.media.length === 0) {
    const url = URL_ONLY.exec(job.content)?.[1];
    const type = options.postType ?? "auto";
    if (type === "link" || (type === "auto" && url)) {
      const link = url ?? /https?:\/\/\S+/.exec(job.content)?.[0];
      if (!link) return { kind: "permanent", reason: "A link post needs a URL in the content.", code: "link_required" };
      const r = await submit(ctx, options, { sr, kind: "link", title, url: link });
      return isFail(r) ? r : published(r.data);
    }
    const r = await submit(ctx, options, { sr, kind: "self", title, text: job.content });
    return isFail(r) ? r : published(r.data);
  }
  const assets: { assetId: string; location: string }[] = [];
  for (const [i, m] of job.media.entries()) {
    const a = await uploadImage(ctx, m, i + 1);
    if (isFail(a)) return a;
    assets.push(a);
  }
  if (assets.length === 1) {
    const since = Math.floor(ctx.now().getTime() / 1000) - 5;
    const r = await submit(ctx, options, { sr, kind: "image", title, url: assets[0].location });
    if (isFail(r)) return r;
    // An image submit answers without the post's id: it is looked up among the user's submissions.
    return checkStatus(ctx, JSON.stringify({ subreddit: sr, title, since } satisfies Pending));
  }
  const res = await ctx.http.request<JsonErrors>("POST", "/api/submit_gallery_post.json", {
    json: {
      api_type: "json",
      sr,
      title,
      items: assets.map((a) => ({ media_id: a.assetId, caption: "", outbound_url: "" })),
      ...markings(options),
    },
    headers: headers(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return jsonErrors(res.body) ?? published(res.body.json?.data ?? {});
}

interface Listing {
  data: {
    children: {
      data: {
        name: string;
        title: string;
        subreddit: string;
        selftext?: string;
        url?: string;
        permalink: string;
        created_utc: number;
        is_video?: boolean;
        post_hint?: string;
        is_gallery?: boolean;
        ups?: number;
        score?: number;
        num_comments?: number;
      };
    }[];
  };
}

async function checkStatus(ctx: PluginContext, handle: string): Promise<Outcome> {
  const p = JSON.parse(handle) as Pending;
  const res = await ctx.http.request<Listing>("GET", `/user/${encodeURIComponent(ctx.account.username)}/submitted`, {
    query: { sort: "new", limit: 25 },
    headers: headers(ctx),
  });
  if (!res.ok) return res.outcome.kind === "retryable" ? { kind: "submitted", handle } : res.outcome;
  const hit = res.body.data.children
    .map((c) => c.data)
    .find(
      (d) => d.subreddit.toLowerCase() === p.subreddit.toLowerCase() && d.title === p.title && d.created_utc >= p.since,
    );
  if (!hit) return { kind: "submitted", handle };
  return { kind: "published", platformPostId: hit.name, url: `https://www.reddit.com${hit.permalink}` };
}

const refresh = refreshTokenGrant({ ...TOKEN_ENDPOINT, name: "Reddit" });

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await ctx.http.request<Listing>("GET", `/user/${encodeURIComponent(ctx.account.username)}/submitted`, {
    query: { sort: "new", limit: 100 },
    headers: headers(ctx),
  });
  if (!res.ok) throw new Error(`Reddit submissions: ${res.outcome.reason}`);
  return res.body.data.children
    .map((c) => c.data)
    .map((d): RecentPost => {
      const image: RecentMedia[] =
        d.post_hint === "image" && d.url ? [{ url: d.url, type: "image", downloadable: true }] : [];
      return {
        platformPostId: d.name,
        url: `https://www.reddit.com${d.permalink}`,
        content: [d.title, d.selftext].filter(Boolean).join("\n\n"),
        media: image,
        createdAt: new Date(d.created_utc * 1000),
        kind: d.is_video ? "video" : image.length || d.is_gallery ? "image" : "text",
      };
    })
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += 100) {
    const res = await ctx.http.request<Listing>("GET", "/api/info", {
      query: { id: ids.slice(i, i + 100).join(",") },
      headers: headers(ctx),
    });
    if (!res.ok) throw new Error(`Reddit info: ${res.outcome.reason}`);
    // Reddit shows no views, shares or saves through the API.
    for (const { data: d } of res.body.data.children)
      out[d.name] = {
        views: null,
        likes: d.ups ?? d.score ?? null,
        comments: d.num_comments ?? null,
        shares: null,
        saves: null,
      };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  // A user's followers are the subscribers of their profile subreddit (u_<name>).
  const res = await ctx.http.request<{ subreddit?: { subscribers?: number } | null }>("GET", "/api/v1/me", {
    headers: headers(ctx),
  });
  if (!res.ok) throw new Error(`Reddit user: ${res.outcome.reason}`);
  return { followers: res.body.subreddit?.subscribers ?? null };
}

export default definePlugin({
  platform: "reddit",
  displayName: "Reddit",
  defaultApiUrl: "https://oauth.reddit.com",
  textLimit: { max: TEXT_MAX, unit: "characters", replyMax: COMMENT_MAX },
  // No alt text: Reddit's submit API takes no alt text for images or videos (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
  capabilities: {
    destination: true,
    source: true,
    backfill: true,
    text: true,
    images: true,
    video: false,
    replies: true,
    threads: true,
  },
  mediaRequirements: {
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp"],
    convertible_formats: {},
    max_size_bytes: { image: 20 * MB, video: 0, gif: 20 * MB },
    file_constraints: {
      maxFiles: GALLERY_MAX,
      maxImageFiles: GALLERY_MAX,
      maxVideoFiles: 0,
      maxGifFiles: 1,
      allowMixedMedia: false,
      video: "not posted by Crier",
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object(
    {
      subreddit: t.String({ pattern: "^[A-Za-z0-9_]{2,21}$", description: "Subreddit name without r/." }),
      title: t.Optional(
        t.String({ minLength: 1, maxLength: TITLE_MAX, description: "Defaults to the first line of the content." }),
      ),
      postType: t.Optional(t.UnionEnum(["auto", "self", "link"], { default: "auto" })),
      flair_id: t.Optional(
        t.String({
          minLength: 1,
          maxLength: 36,
          description: "A link flair template id of the subreddit (GET /r/{subreddit}/api/link_flair_v2).",
        }),
      ),
      flair_text: t.Optional(
        t.String({
          minLength: 1,
          maxLength: 64,
          description: "The flair's text, where the template lets the poster edit it.",
        }),
      ),
      nsfw: t.Optional(t.Boolean({ description: "Marks the post NSFW (18+)." })),
      spoiler: t.Optional(t.Boolean({ description: "Marks the post as a spoiler." })),
      send_replies: t.Optional(
        t.Boolean({ default: true, description: "Replies go to the author's inbox (Reddit's sendreplies)." }),
      ),
    },
    { additionalProperties: true },
  ),
  // The scope reddit.com/dev/api lists beside each endpoint the adapter calls (checked 2026-11-26).
  requiredScopes: {
    publish: ["submit"],
    metrics: ["read"],
    account_stats: ["identity"],
    workflow_source: ["history"],
    first_comment: ["submit"],
  },
  connect: oauthFlow({
    authorizeUrl: "https://www.reddit.com/api/v1/authorize",
    ...TOKEN_ENDPOINT,
    requiredSettings: ["CLIENT_ID", "CLIENT_SECRET", "USERNAME"],
    scopes: ["identity", "submit", "read", "history", "flair"],
    extraAuthorizeParams: { duration: "permanent" },
    async identity(c, token) {
      const me = await connectCall<{ id: string; name: string; icon_img?: string }>(
        c,
        "Reading the Reddit user",
        "GET",
        "/api/v1/me",
        {
          headers: { authorization: `Bearer ${token.access_token}`, "user-agent": userAgent(c.settings) },
        },
      );
      return {
        remoteId: me.id,
        username: me.name,
        avatarUrl: me.icon_img?.split("?")[0] || null,
        credentials: tokenCredentials(token, c.now()),
      };
    },
  }),
  classifyResponse(res) {
    if (res.status === 429) {
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      return {
        kind: "retryable",
        reason: "Reddit rate limit",
        retryAfterMs: Number.isFinite(reset) && reset > 0 ? reset * 1000 : 60_000,
      };
    }
    if (res.status === 403)
      return {
        kind: "permanent",
        reason: "Reddit refused: the subreddit is private, banned or restricted for this account",
        code: "forbidden",
      };
    return undefined;
  },
  publish,
  // The first comment: POST /api/comment with thing_id = the post's fullname (t3_…), scope submit
  // (www.reddit.com/dev/api#POST_api_comment, checked 2026-11-26); a comment takes 10,000 characters.
  firstComment: {
    kind: "comment",
    textLimit: { max: COMMENT_MAX, unit: "characters" },
    scopes: ["submit"],
    publish: async (ctx, c) => {
      const outcome = await comment(ctx, c.parent.platformPostId, c.text);
      return outcome.kind === "submitted"
        ? { kind: "unknown", reason: "Reddit did not confirm the comment." }
        : outcome;
    },
  },
  checkStatus,
  refresh,
  fetchRecent,
  metrics,
  metricNames: ["likes", "comments"],
  accountStats,
});
