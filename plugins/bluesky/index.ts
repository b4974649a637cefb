/**
 * Bluesky (AT Protocol). Connects with a handle and an app password (createSession); only the session
 * tokens are kept. Publishes app.bsky.feed.post records with facets, image blobs or a processed video,
 * and replies; reads the author feed (workflow source) and post counts (analytics).
 */
import { t } from "elysia";
import {
  ConnectError,
  definePlugin,
  unreadableMedia,
  RefreshError,
  type ConnectContext,
  type Credentials,
  type FailureOutcome,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type CommentJob,
  type FindResult,
  type PostMetrics,
  type ProviderHttp,
  type ProviderResponse,
  type PublishJob,
  type RecentMedia,
  type RecentPost,
} from "../../src/platform/sdk.ts";
import { parseRetryAfter } from "../../src/platform/retry-after.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";
import { detectSpans, toFacets, type Facet } from "./facets.ts";

const DEFAULT_API_URL = "https://bsky.social";
const DEFAULT_VIDEO_URL = "https://video.bsky.app";
const POST = "app.bsky.feed.post";
const MAX_GRAPHEMES = 300;
const MAX_TEXT_BYTES = 3000;
const MAX_IMAGES = 4;
/** app.bsky.embed.images#image maxSize: "May be up to 2 MB, formerly limited to 1 MB" (lexicon in
 * @atproto/api 0.19, checked 2026-11-26; the emulator reads the same value from the lexicon). */
const MAX_IMAGE_BYTES = 2_000_000;
const MAX_VIDEO_BYTES = 100_000_000;
const VIDEO_MIME = ["video/mp4", "video/quicktime", "video/webm", "video/mpeg"];
/** How long publish waits for Bluesky's video service before giving the attempt back as retryable. */
const VIDEO_WAIT_MS = 5 * 60_000;

/** What is stored (encrypted) for an account. The app password itself is never kept. */
export interface BlueskySession {
  did: string;
  handle: string;
  accessJwt: string;
  refreshJwt: string;
  /** The account's own PDS (from its DID document): the audience of service-auth tokens. */
  pdsUrl?: string;
}

type Step<T> = { ok: true; value: T } | { ok: false; outcome: FailureOutcome };
const fail = (outcome: FailureOutcome): { ok: false; outcome: FailureOutcome } => ({ ok: false, outcome });
const permanent = (reason: string, code?: string): FailureOutcome => ({
  kind: "permanent",
  reason,
  ...(code && { code }),
});

interface BlobRef {
  $type: "blob";
  ref: { $link: string };
  mimeType: string;
  size: number;
}

function readSession(c: Credentials): BlueskySession | null {
  const s = c as Partial<BlueskySession>;
  if (typeof s.did !== "string" || typeof s.accessJwt !== "string" || typeof s.refreshJwt !== "string") return null;
  return {
    did: s.did,
    handle: String(s.handle ?? s.did),
    accessJwt: s.accessJwt,
    refreshJwt: s.refreshJwt,
    pdsUrl: s.pdsUrl,
  };
}

function pdsFromDidDoc(doc: unknown): string | undefined {
  const services = (doc as { service?: { id?: string; serviceEndpoint?: unknown }[] } | undefined)?.service;
  const pds = services?.find((s) => s.id === "#atproto_pds" || s.id?.endsWith("#atproto_pds"));
  return typeof pds?.serviceEndpoint === "string" ? pds.serviceEndpoint.replace(/\/+$/, "") : undefined;
}

/** createSession and refreshSession answer the same shape. */
function sessionFrom(body: Record<string, unknown>, previous?: BlueskySession): BlueskySession {
  return {
    did: String(body.did),
    handle: String(body.handle ?? previous?.handle ?? body.did),
    accessJwt: String(body.accessJwt),
    refreshJwt: String(body.refreshJwt),
    pdsUrl: pdsFromDidDoc(body.didDoc) ?? previous?.pdsUrl,
  };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** did:web of a host, port included the way did:web encodes it. */
const didWeb = (url: string) => `did:web:${encodeURIComponent(new URL(url).host)}`;

const rkeyOf = (uri: string) => uri.slice(uri.lastIndexOf("/") + 1);
export const postUrl = (handleOrDid: string, uri: string) =>
  `https://bsky.app/profile/${handleOrDid}/post/${rkeyOf(uri)}`;

/**
 * The video service: video.bsky.app next to the real PDS, or CRIER_BLUESKY_VIDEO_URL. When the PDS URL is
 * overridden (an emulator, a sandbox, a self-hosted PDS), the video methods are reached on that host.
 */
function videoServiceUrl(ctx: PluginContext): string {
  if (ctx.http.baseUrl !== DEFAULT_API_URL) return ctx.http.baseUrl;
  return (ctx.settings.CRIER_BLUESKY_VIDEO_URL ?? ctx.settings.VIDEO_URL ?? DEFAULT_VIDEO_URL).replace(/\/+$/, "");
}

async function openMedia(ctx: PluginContext, item: MediaItem) {
  try {
    const body = await ctx.media.open(item);
    return {
      ok: true as const,
      value: {
        contentType: body.contentType.split(";")[0].trim().toLowerCase(),
        bytes: (await body.bytes()) as Uint8Array<ArrayBuffer>,
      },
    };
  } catch (e) {
    return fail(unreadableMedia(e));
  }
}

async function uploadImage(ctx: PluginContext, s: BlueskySession, item: MediaItem, n: number): Promise<Step<unknown>> {
  const opened = await openMedia(ctx, item);
  if (!opened.ok) return opened;
  const { contentType, bytes } = opened.value;
  if (!contentType.startsWith("image/"))
    return fail(permanent(`media ${n}: ${contentType} is not an image`, "unsupported_media"));
  if (bytes.length > MAX_IMAGE_BYTES) {
    return fail(
      permanent(
        `media ${n}: image is ${bytes.length} bytes; Bluesky takes images up to ${MAX_IMAGE_BYTES} bytes`,
        "media_too_large",
      ),
    );
  }
  const res = await ctx.http.request<{ blob: BlobRef }>("POST", "/xrpc/com.atproto.repo.uploadBlob", {
    headers: { ...bearer(s.accessJwt), "content-type": contentType },
    body: bytes,
  });
  if (!res.ok) return fail(res.outcome);
  return {
    ok: true,
    value: {
      // app.bsky.embed.images#image requires alt; "" is the lexicon's way of saying none was given.
      alt: item.alt_text ?? "",
      image: res.body.blob,
      ...(item.width && item.height ? { aspectRatio: { width: item.width, height: item.height } } : {}),
    },
  };
}

async function serviceToken(ctx: PluginContext, s: BlueskySession, aud: string, lxm: string): Promise<Step<string>> {
  const exp = Math.floor(ctx.now().getTime() / 1000) + 30 * 60;
  const res = await ctx.http.request<{ token: string }>("GET", "/xrpc/com.atproto.server.getServiceAuth", {
    query: { aud, lxm, exp },
    headers: bearer(s.accessJwt),
  });
  return res.ok ? { ok: true, value: res.body.token } : fail(res.outcome);
}

interface JobStatus {
  jobId: string;
  state: string;
  progress?: number;
  blob?: BlobRef;
  error?: string;
  message?: string;
}

/** uploadVideo to the video service, then poll the job until it hands back the processed blob. */
async function uploadVideo(
  ctx: PluginContext,
  s: BlueskySession,
  item: MediaItem,
  job: PublishJob,
): Promise<Step<unknown>> {
  const opened = await openMedia(ctx, item);
  if (!opened.ok) return opened;
  const { contentType, bytes } = opened.value;
  if (!VIDEO_MIME.includes(contentType))
    return fail(
      permanent(`video type ${contentType} is not accepted by Bluesky (mp4, mov, webm, mpeg)`, "unsupported_media"),
    );
  if (bytes.length > MAX_VIDEO_BYTES) {
    return fail(
      permanent(
        `video is ${bytes.length} bytes; Bluesky takes videos up to ${MAX_VIDEO_BYTES} bytes`,
        "media_too_large",
      ),
    );
  }
  const video = videoServiceUrl(ctx);

  // Asking first spares sending up to 100 MB to be told the account may not upload (unverified email, quota).
  const limitsToken = await serviceToken(ctx, s, didWeb(video), "app.bsky.video.getUploadLimits");
  if (!limitsToken.ok) return limitsToken;
  const limits = await ctx.http.request<{ canUpload: boolean; message?: string; error?: string }>(
    "GET",
    `${video}/xrpc/app.bsky.video.getUploadLimits`,
    {
      headers: bearer(limitsToken.value),
    },
  );
  if (!limits.ok) return fail(limits.outcome);
  if (!limits.body.canUpload)
    return fail(
      permanent(
        `Bluesky refuses video uploads for this account: ${limits.body.message ?? limits.body.error ?? "limit reached"}`,
        "video_upload_refused",
      ),
    );

  // The video service stores the result in the user's repo, so the token is for uploadBlob at their PDS.
  const uploadToken = await serviceToken(ctx, s, didWeb(s.pdsUrl ?? ctx.http.baseUrl), "com.atproto.repo.uploadBlob");
  if (!uploadToken.ok) return uploadToken;
  const ext = contentType === "video/quicktime" ? "mov" : contentType.slice("video/".length);
  const up = await ctx.http.request<{ jobStatus?: JobStatus } & Partial<JobStatus>>(
    "POST",
    `${video}/xrpc/app.bsky.video.uploadVideo`,
    {
      query: { did: s.did, name: `${job.idempotencyToken}.${ext}` },
      headers: { ...bearer(uploadToken.value), "content-type": contentType },
      body: bytes,
    },
  );
  // The same video uploaded twice (an earlier attempt) is "already_exists" with the job to follow.
  const jobId = up.ok ? (up.body.jobStatus ?? up.body).jobId : (up.body as { jobId?: string } | undefined)?.jobId;
  if (!jobId) return fail(up.ok ? permanent("Bluesky's video service returned no job") : up.outcome);

  const deadline = Date.now() + VIDEO_WAIT_MS;
  for (let wait = 250; ; wait = Math.min(wait * 2, 5000)) {
    const st = await ctx.http.request<{ jobStatus: JobStatus }>("GET", `${video}/xrpc/app.bsky.video.getJobStatus`, {
      query: { jobId },
    });
    if (!st.ok) return fail(st.outcome);
    const status = st.body.jobStatus;
    if (status.blob) {
      return {
        ok: true,
        value: {
          $type: "app.bsky.embed.video",
          video: status.blob,
          ...(item.alt_text ? { alt: item.alt_text } : {}),
          ...(item.width && item.height ? { aspectRatio: { width: item.width, height: item.height } } : {}),
        },
      };
    }
    if (status.state === "JOB_STATE_FAILED") {
      return fail(
        permanent(
          `Bluesky could not process the video: ${[status.error, status.message].filter(Boolean).join(": ") || "failed"}`,
          "video_processing_failed",
        ),
      );
    }
    if (Date.now() + wait > deadline)
      return fail({ kind: "retryable", reason: "Bluesky is still processing the video", retryAfterMs: 60_000 });
    await new Promise((r) => setTimeout(r, wait));
  }
}

async function buildFacets(http: ProviderHttp, s: BlueskySession, text: string): Promise<Step<Facet[]>> {
  const spans = detectSpans(text);
  const dids = new Map<string, string>();
  for (const handle of new Set(spans.filter((x) => x.kind === "mention").map((x) => x.value))) {
    const res = await http.request<{ did: string }>("GET", "/xrpc/com.atproto.identity.resolveHandle", {
      query: { handle },
      headers: bearer(s.accessJwt),
    });
    if (res.ok) dids.set(handle, res.body.did);
    // A handle nobody has is left as plain text; anything else (rate limit, expiry) stops the attempt.
    else if (res.outcome.kind !== "permanent") return fail(res.outcome);
  }
  return { ok: true, value: toFacets(text, spans, dids) };
}

interface StrongRef {
  uri: string;
  cid: string;
}

/** A reply names its parent and the thread's root, each by URI and CID; the parent's record knows the root. */
async function replyRefs(
  http: ProviderHttp,
  s: BlueskySession,
  parentUri: string,
): Promise<Step<{ root: StrongRef; parent: StrongRef }>> {
  const m = /^at:\/\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(parentUri);
  if (!m) return fail(permanent(`reply target ${parentUri} is not a Bluesky post URI`, "invalid_reply_target"));
  const res = await http.request<{ uri: string; cid: string; value: { reply?: { root: StrongRef } } }>(
    "GET",
    "/xrpc/com.atproto.repo.getRecord",
    {
      query: { repo: m[1], collection: m[2], rkey: m[3] },
      headers: bearer(s.accessJwt),
    },
  );
  if (!res.ok)
    return fail(
      res.outcome.kind === "permanent"
        ? permanent(`the post to reply to is gone: ${res.outcome.reason}`, "reply_target_missing")
        : res.outcome,
    );
  const parent = { uri: res.body.uri, cid: res.body.cid };
  return { ok: true, value: { root: res.body.value.reply?.root ?? parent, parent } };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const s = readSession(ctx.credentials);
  if (!s) return { kind: "auth_expired", reason: "no Bluesky session is stored for this account" };
  const text = job.content;
  const images = job.media.filter((m) => m.type === "image");
  const videos = job.media.filter((m) => m.type === "video");

  let reply: { root: StrongRef; parent: StrongRef } | undefined;
  if (job.replyTo) {
    const r = await replyRefs(ctx.http, s, job.replyTo.platformPostId);
    if (!r.ok) return r.outcome;
    reply = r.value;
  }
  const facets = await buildFacets(ctx.http, s, text);
  if (!facets.ok) return facets.outcome;

  let embed: unknown;
  if (images.length) {
    const uploaded: unknown[] = [];
    for (const [i, item] of images.entries()) {
      const r = await uploadImage(ctx, s, item, i + 1);
      if (!r.ok) return r.outcome;
      uploaded.push(r.value);
    }
    embed = { $type: "app.bsky.embed.images", images: uploaded };
  } else if (videos.length) {
    const r = await uploadVideo(ctx, s, videos[0], job);
    if (!r.ok) return r.outcome;
    embed = r.value;
  }

  const record = {
    $type: POST,
    text,
    createdAt: ctx.now().toISOString(),
    ...(facets.value.length > 0 && { facets: facets.value }),
    ...(reply && { reply }),
    ...(embed !== undefined && { embed }),
  };
  const res = await ctx.http.request<{ uri: string; cid: string }>("POST", "/xrpc/com.atproto.repo.createRecord", {
    json: { repo: s.did, collection: POST, record },
    headers: bearer(s.accessJwt),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  return { kind: "published", platformPostId: res.body.uri, url: postUrl(s.handle, res.body.uri) };
}

async function refresh(ctx: PluginContext): Promise<Credentials> {
  const s = readSession(ctx.credentials);
  if (!s) throw new Error("no Bluesky session is stored for this account");
  const res = await ctx.http.request<Record<string, unknown>>("POST", "/xrpc/com.atproto.server.refreshSession", {
    headers: bearer(s.refreshJwt),
  });
  if (!res.ok) {
    if (res.outcome.kind === "retryable" || res.outcome.kind === "unknown")
      throw new RefreshError(`Bluesky could not refresh the session now: ${res.outcome.reason}`, true);
    throw new RefreshError(`Bluesky refused to refresh the session: ${res.outcome.reason}`, false);
  }
  const next = sessionFrom(res.body, s);
  await ctx.saveCredentials({ ...next });
  return { ...next };
}

interface PostView {
  uri: string;
  cid: string;
  author: { did: string; handle: string };
  record: {
    text?: string;
    createdAt?: string;
    reply?: unknown;
    embed?: {
      $type?: string;
      images?: { image: BlobRef; aspectRatio?: { width: number; height: number } }[];
      video?: BlobRef;
      media?: PostView["record"]["embed"];
    };
  };
  indexedAt: string;
  likeCount?: number;
  repostCount?: number;
  replyCount?: number;
  quoteCount?: number;
  bookmarkCount?: number;
}

/** Media of a record as fetchable URLs: the original blobs, read from the account's PDS. */
function mediaOf(
  ctx: PluginContext,
  s: BlueskySession,
  embed: PostView["record"]["embed"],
): { media: RecentMedia[]; kind: RecentPost["kind"] } {
  if (!embed) return { media: [], kind: "text" };
  const pds = s.pdsUrl ?? ctx.http.baseUrl;
  const blobUrl = (b: BlobRef) =>
    `${pds}/xrpc/com.atproto.sync.getBlob?did=${encodeURIComponent(s.did)}&cid=${encodeURIComponent(b.ref.$link)}`;
  const type = embed.$type ?? "";
  if (type.startsWith("app.bsky.embed.recordWithMedia"))
    return { media: mediaOf(ctx, s, embed.media).media, kind: "quote" };
  if (type.startsWith("app.bsky.embed.record")) return { media: [], kind: "quote" };
  if (type.startsWith("app.bsky.embed.images") && embed.images) {
    return {
      kind: "image",
      media: embed.images.map((i) => ({
        url: blobUrl(i.image),
        type: "image" as const,
        downloadable: true,
        mime_type: i.image.mimeType,
        size: i.image.size,
        ...(i.aspectRatio && { width: i.aspectRatio.width, height: i.aspectRatio.height }),
      })),
    };
  }
  if (type.startsWith("app.bsky.embed.video") && embed.video) {
    return {
      kind: "video",
      media: [
        {
          url: blobUrl(embed.video),
          type: "video",
          downloadable: true,
          mime_type: embed.video.mimeType,
          size: embed.video.size,
        },
      ],
    };
  }
  return { media: [], kind: "text" };
}

const FEED_PAGE = 100;
const MAX_FEED_PAGES = 10;

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const s = readSession(ctx.credentials);
  if (!s) throw new Error("no Bluesky session is stored for this account");
  const out: RecentPost[] = [];
  let cursor: string | undefined;
  // Without a starting point one page is enough: a new workflow copies what comes next, not the past.
  const pages = since ? MAX_FEED_PAGES : 1;
  for (let page = 0; page < pages; page++) {
    const res = await ctx.http.request<{ feed: { post: PostView; reason?: unknown }[]; cursor?: string }>(
      "GET",
      "/xrpc/app.bsky.feed.getAuthorFeed",
      {
        query: { actor: s.did, filter: "posts_no_replies", limit: FEED_PAGE, cursor },
        headers: bearer(s.accessJwt),
      },
    );
    if (!res.ok) throw new Error(`Bluesky author feed: ${res.outcome.reason}`);
    let reachedOlder = false;
    for (const item of res.body.feed) {
      // Reposts of other people's posts are in the feed too; only the account's own posts are its content.
      if (item.reason || item.post.author.did !== s.did) continue;
      const createdAt = new Date(item.post.record.createdAt ?? item.post.indexedAt);
      if (since && createdAt <= since) {
        reachedOlder = true;
        continue;
      }
      const { media, kind } = mediaOf(ctx, s, item.post.record.embed);
      out.push({
        platformPostId: item.post.uri,
        url: postUrl(item.post.author.handle, item.post.uri),
        content: item.post.record.text ?? "",
        media,
        createdAt,
        kind,
      });
    }
    cursor = res.body.cursor;
    if (reachedOlder || !cursor || res.body.feed.length === 0) break;
  }
  // The feed is newest first; reversed, then a stable sort keeps feed order among equal timestamps.
  return out.reverse().sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
}

/** Platform clocks and ours differ a little: a reply this far outside the attempt's window is another one. */
const COMMENT_WINDOW_SLACK_MS = 2 * 60_000;

/**
 * Whether a first comment whose outcome was unknown exists: the account's own feed with its replies
 * (getAuthorFeed, filter posts_with_replies), read from its PDS, which answers its own account's reads
 * after its writes, the reply to the post with the comment's text made in the attempt's window.
 */
async function findComment(
  ctx: PluginContext,
  c: CommentJob,
  window: { since: Date; until: Date },
): Promise<FindResult> {
  const s = readSession(ctx.credentials);
  if (!s) return { kind: "cannot_tell", reason: "no Bluesky session is stored for this account" };
  const from = window.since.getTime() - COMMENT_WINDOW_SLACK_MS;
  const to = window.until.getTime() + COMMENT_WINDOW_SLACK_MS;
  const res = await ctx.http.request<{ feed: { post: PostView; reason?: unknown }[] }>(
    "GET",
    "/xrpc/app.bsky.feed.getAuthorFeed",
    { query: { actor: s.did, filter: "posts_with_replies", limit: FEED_PAGE }, headers: bearer(s.accessJwt) },
  );
  if (!res.ok) return { kind: "cannot_tell", reason: `the account's feed could not be read: ${res.outcome.reason}` };
  const feed = res.body.feed.filter((i) => !i.reason && i.post.author.did === s.did);
  const oldest = feed.at(-1);
  if (feed.length === FEED_PAGE && oldest && new Date(oldest.post.indexedAt).getTime() > from)
    return { kind: "cannot_tell", reason: "the account posted more since the attempt than one page of its feed holds" };
  const inWindow = feed.filter((i) => {
    const at = new Date(i.post.record.createdAt ?? i.post.indexedAt).getTime();
    return at >= from && at <= to;
  });
  const same = inWindow.filter(
    (i) =>
      (i.post.record.reply as { parent?: { uri?: string } } | undefined)?.parent?.uri === c.parent.platformPostId &&
      (i.post.record.text ?? "").trim() === c.text.trim(),
  );
  if (same.length > 1) return { kind: "cannot_tell", reason: `${same.length} replies with the same text were made` };
  if (same[0]) return { kind: "found", platformPostId: same[0].post.uri, url: postUrl(s.handle, same[0].post.uri) };
  return {
    kind: "absent",
    checked: `${inWindow.length} post(s) and replies of the account in the attempt's window, none replying with this text`,
  };
}

const GET_POSTS_MAX = 25;

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const s = readSession(ctx.credentials);
  if (!s) throw new Error("no Bluesky session is stored for this account");
  const out: Record<string, PostMetrics> = {};
  for (let i = 0; i < ids.length; i += GET_POSTS_MAX) {
    const chunk = ids.slice(i, i + GET_POSTS_MAX);
    // uris is a repeated query parameter.
    const qs = chunk.map((u) => `uris=${encodeURIComponent(u)}`).join("&");
    const res = await ctx.http.request<{ posts: PostView[] }>("GET", `/xrpc/app.bsky.feed.getPosts?${qs}`, {
      headers: bearer(s.accessJwt),
    });
    if (!res.ok) throw new Error(`Bluesky getPosts: ${res.outcome.reason}`);
    for (const p of res.body.posts) {
      out[p.uri] = {
        views: null,
        likes: p.likeCount ?? 0,
        comments: p.replyCount ?? 0,
        shares: p.repostCount ?? 0,
        saves: p.bookmarkCount ?? null,
        quotes: p.quoteCount ?? 0,
      };
    }
  }
  return out;
}

/** Ends the session at Bluesky, so the stored refresh token can no longer be used by anyone. */
async function onDisconnect(ctx: PluginContext): Promise<void> {
  const s = readSession(ctx.credentials);
  if (!s) return;
  const res = await ctx.http.request("POST", "/xrpc/com.atproto.server.deleteSession", {
    headers: bearer(s.refreshJwt),
  });
  if (!res.ok) ctx.log.warn("bluesky: could not end the session", { reason: res.outcome.reason });
}

/** Bluesky says "expired" with a 400 and rate limits with RateLimit-Reset (epoch seconds), not Retry-After. */
function classifyResponse(res: ProviderResponse): FailureOutcome | undefined {
  const body = res.body as { error?: string; message?: string } | null;
  const reason = body?.message ?? body?.error ?? `HTTP ${res.status}`;
  if (res.status === 400 && (body?.error === "ExpiredToken" || body?.error === "InvalidToken"))
    return { kind: "auth_expired", reason };
  if (res.status === 429) {
    const reset = Number(res.headers.get("ratelimit-reset"));
    const retryAfterMs =
      parseRetryAfter(res.headers.get("retry-after"), new Date()) ??
      (Number.isFinite(reset) && reset > 0 ? Math.max(0, reset * 1000 - Date.now()) : undefined);
    return {
      kind: "retryable",
      reason: `rate limited: ${reason}`,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    };
  }
  return undefined;
}

/** What the user typed as a handle: "@alice", "Alice.bsky.social", "alice" (a bsky.social handle) or an email. */
export function normaliseIdentifier(raw: string): string {
  const v = raw.trim().replace(/^@/, "");
  if (v.includes("@") || v.startsWith("did:")) return v;
  const lower = v.toLowerCase();
  return lower.includes(".") ? lower : `${lower}.bsky.social`;
}

async function verify(c: ConnectContext, values: Record<string, string>) {
  const identifier = normaliseIdentifier(values.handle ?? "");
  const password = (values.app_password ?? "").trim();
  const looksValid =
    identifier.includes("@") ||
    identifier.startsWith("did:") ||
    /^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*$/.test(identifier);
  if (!looksValid)
    throw new ConnectError("Enter your Bluesky handle, for example alice.bsky.social (or the email of the account).");
  if (!password)
    throw new ConnectError("Enter an app password (Bluesky settings → Privacy and security → App passwords).");
  const res = await c.http.request<Record<string, unknown>>("POST", "/xrpc/com.atproto.server.createSession", {
    json: { identifier, password },
  });
  if (!res.ok) {
    const code = (res.body as { error?: string } | undefined)?.error;
    if (code === "AuthFactorTokenRequired")
      throw new ConnectError("This account asks for a sign-in code: use an app password, not your main password.");
    if (res.status === 401) throw new ConnectError("Bluesky did not accept this handle and app password.");
    if (res.outcome.kind === "retryable")
      throw new ConnectError("Bluesky is not answering or asks to slow down; try again in a few minutes.");
    throw new ConnectError(`Bluesky refused the sign-in: ${res.outcome.reason}`);
  }
  if (res.body.active === false)
    throw new ConnectError(`This Bluesky account is not active (${String(res.body.status ?? "deactivated")}).`);
  const session = sessionFrom(res.body);
  let avatarUrl: string | null = null;
  const metadata: Record<string, unknown> = { did: session.did, pds_url: session.pdsUrl ?? null };
  const profile = await c.http.request<{ avatar?: string; displayName?: string; followersCount?: number }>(
    "GET",
    "/xrpc/app.bsky.actor.getProfile",
    {
      query: { actor: session.did },
      headers: bearer(session.accessJwt),
    },
  );
  if (profile.ok) {
    avatarUrl = profile.body.avatar ?? null;
    metadata.display_name = profile.body.displayName ?? null;
    metadata.followers_count = profile.body.followersCount ?? null;
  }
  return { remoteId: session.did, username: session.handle, avatarUrl, credentials: { ...session }, metadata };
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const s = readSession(ctx.credentials);
  if (!s) throw new Error("no Bluesky session is stored for this account");
  const res = await ctx.http.request<{ followersCount?: number }>("GET", "/xrpc/app.bsky.actor.getProfile", {
    query: { actor: s.did },
    headers: bearer(s.accessJwt),
  });
  if (!res.ok) throw new Error(`Bluesky getProfile: ${res.outcome.reason}`);
  return { followers: res.body.followersCount ?? null };
}

export default definePlugin({
  platform: "bluesky",
  displayName: "Bluesky",
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
    supported_formats: ["image/jpeg", "image/png", "image/webp", "image/gif", ...VIDEO_MIME],
    convertible_formats: {},
    max_size_bytes: { image: MAX_IMAGE_BYTES, video: MAX_VIDEO_BYTES, gif: MAX_IMAGE_BYTES },
    file_constraints: {
      maxFiles: MAX_IMAGES,
      maxImageFiles: MAX_IMAGES,
      maxVideoFiles: 1,
      maxGifFiles: MAX_IMAGES,
      allowMixedMedia: false,
      gifBehavior: "still_image",
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    // Video up to 3 minutes since March 2025 (bsky.social/about/blog/09-11-2024-video and Bluesky's announcement
    // of 12 March 2025, checked 2026-11-26); no documented aspect ratio or frame rate bound.
    max_video_duration_seconds: 180,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  textLimit: { max: MAX_GRAPHEMES, unit: "graphemes", maxBytes: MAX_TEXT_BYTES },
  // app.bsky.embed.video#main alt: maxGraphemes 1000; an image's alt has no cap in app.bsky.embed.images,
  // and the app's own (app.bsky.draft.defs#draftEmbedImage alt) is 2000 graphemes (@atproto/api
  // lexicons, github.com/bluesky-social/atproto/tree/main/lexicons/app/bsky, 2026-11-26).
  altText: { image: { max_length: 2000, unit: "graphemes" }, video: { max_length: 1000, unit: "graphemes" } },
  defaultApiUrl: DEFAULT_API_URL,
  // Bluesky's write limits are per account (per DID: 5,000 points an hour, 3 per created record), which the
  // engine keeps by publishing to one account at a time; what a copy shares across accounts is the PDS's
  // 3,000 requests per 5 minutes per IP (docs.bsky.app, "Rate Limits"). That is a window: 16 at once spends
  // it only in a burst of minutes, after which a 429 with Retry-After requeues (nothing was created).
  // A copy with its own PDS, or behind several addresses, may raise it with CRIER_BLUESKY_CONCURRENCY.
  concurrency: 16,
  connect: {
    mode: "credential_form_url",
    title: "Connect a Bluesky account",
    instructions:
      "Sign in with your handle and an app password. Create one in Bluesky under Settings → Privacy and security → App passwords; " +
      "it can be revoked there at any time. Your main password is not needed, and the app password is not stored: only the session Bluesky returns.",
    fields: [
      { name: "handle", label: "Handle", type: "text", placeholder: "alice.bsky.social" },
      { name: "app_password", label: "App password", type: "password", placeholder: "xxxx-xxxx-xxxx-xxxx" },
    ],
    verify,
  },
  disconnect: {
    message:
      "Crier ended its Bluesky session and forgot it. The app password stays valid until you revoke it in Bluesky's settings (App passwords).",
  },
  onDisconnect,
  classifyResponse,
  publish,
  // The first comment is a reply: an app.bsky.feed.post record whose reply holds strong refs (uri and
  // cid) to the root and the parent, both the published post, whose cid is read with
  // com.atproto.repo.getRecord (lexicon app.bsky.feed.post#replyRef, docs.bsky.app/docs/advanced-guides/posts,
  // checked 2026-11-26). A reply is a post: 300 graphemes.
  firstComment: {
    kind: "reply",
    textLimit: { max: MAX_GRAPHEMES, unit: "graphemes" },
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment),
    find: findComment,
    // Read from the account's own PDS, as listingReadAfterWrite below.
    findReadAfterWrite: true,
  },
  refresh,
  fetchRecent,
  // The PDS answers its own account's reads after its writes (atproto "read-after-write"): a post absent
  // from the author feed after the settle delay was not created.
  listingReadAfterWrite: true,
  metrics,
  accountStats,
  metricNames: ["likes", "comments", "shares", "saves"],
});
