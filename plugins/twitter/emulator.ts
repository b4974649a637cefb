/**
 * An emulator of the X API v2 surface the plugin uses: OAuth 2 (authorize with PKCE S256, code exchange
 * with client authentication, 30-second single-use codes, rotating refresh tokens, two-hour access
 * tokens), users/me, simple image upload and chunked video upload with processing states, post creation
 * (weighted 280, media rules, replies, duplicate refusal), the user's timeline and public metrics.
 * Errors are problem+json `{title, detail, type, status}`; rate limits carry x-rate-limit-* headers.
 *
 * The contract is X's OpenAPI 2.167 (August 2026) as its SDK @xdevplatform/xdk 0.6 declares it
 * (./contract.ts): query parameters outside a method's declared ones are refused the way X refuses them
 * (`tweet.fields` is no longer one), answers use the current names (`referenced_posts`, `repost_count`,
 * `edit_history_post_ids`) and are typed against the SDK's schemas. Checked 2026-11-26.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user sandbox_x, and the sandbox
 * authorize page's codes (sandbox_…) are accepted without PKCE.
 */
import { breach, inspectMedia, joinParts, type MediaRule } from "../../src/platform/emulator-media.ts";
import { createHash, randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { weightedLength } from "../../src/platform/text.ts";
import type {
  CreateMetadataBody,
  CreatePostBody,
  InitializeUploadBody,
  MeQuery,
  PostsByIdsQuery,
  TimelineQuery,
  UploadStatusQuery,
  WireMedia,
  WirePost,
  WireUploadData,
} from "./contract.ts";

/** What X itself refuses above, in weighted characters. */
const MAX_WEIGHT = 280;

const MB = 1024 * 1024;
const ACCESS_TTL_MS = 2 * 3600_000;
const CODE_TTL_MS = 30_000;
const IMAGE_MAX = 5 * MB;
const GIF_MAX = 15 * MB;
const VIDEO_MAX = 512 * MB;
// docs.x.com/x-api/media/quickstart/best-practices (checked 2026-11-26): images JPG, PNG, GIF or WEBP;
// video (MP4 or MOV, H.264 recommended) at least 0.5 s and at most 20 minutes on a Post for a default
// account, 32×32 to 1280×1024, at most 60 fps, aspect ratio between 1:3 and 3:1.
const IMAGE_RULE: MediaRule = { types: ["image/jpeg", "image/png", "image/gif", "image/webp"] };
const VIDEO_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime"],
  minDuration: 0.5,
  maxDuration: 20 * 60,
  minWidth: 32,
  minHeight: 32,
  maxWidth: 1280,
  maxHeight: 1024,
  maxFrameRate: 60,
  minAspect: 1 / 3,
  maxAspect: 3,
};

interface Media {
  id: string;
  key: string;
  owner: string;
  category: string;
  type: string;
  total: number;
  parts: Map<number, Uint8Array>;
  state: "uploading" | "pending" | "in_progress" | "succeeded" | "failed";
  polls: number;
  /** Set by POST /2/media/metadata. */
  alt?: string;
  /** Why processing failed, as processing_info.error.message says it. */
  failure?: string;
}
interface Tweet {
  id: string;
  author: string;
  text: string;
  mediaIds: string[];
  replyTo: string | null;
  quoteOf: string | null;
  createdAt: Date;
  likes: number;
  reposts: number;
  replies: number;
  quotes: number;
  bookmarks: number;
  impressions: number;
}

export interface XEmulator extends Emulator {
  registerClient(id: string, secret: string): void;
  engage(id: string, counts: Partial<Pick<Tweet, "likes" | "reposts" | "quotes" | "bookmarks" | "impressions">>): void;
  /** Expires every access token now: the next call answers 401 until a refresh. */
  expireTokens(): void;
  /** Answers with OpenAPI 2.166's names (referenced_tweets, retweet_count), as X still may. */
  answerWithLegacyNames(on: boolean): void;
  /** The last requests received (method, path, query, JSON body), newest last. */
  requests(): { method: string; path: string; query: Record<string, string>; body?: unknown }[];
}

/**
 * The query parameters each read declares in X's OpenAPI 2.167 (the SDK's option names, as sent): the
 * compiler checks every name against the SDK, and X answers 400 to any other.
 */
const TIMELINE_PARAMS = [
  "max_results",
  "pagination_token",
  "start_time",
  "end_time",
  "since_id",
  "until_id",
  "exclude",
  "post.fields",
  "expansions",
  "user.fields",
  "media.fields",
  "poll.fields",
  "place.fields",
] as const satisfies readonly (keyof TimelineQuery)[];
const POSTS_PARAMS = [
  "ids",
  "post.fields",
  "expansions",
  "user.fields",
  "media.fields",
  "poll.fields",
  "place.fields",
] as const satisfies readonly ("ids" | keyof PostsByIdsQuery)[];
const ME_PARAMS = ["user.fields", "expansions", "post.fields"] as const satisfies readonly (keyof MeQuery)[];
const STATUS_PARAMS = ["command", "media_id"] as const satisfies readonly (keyof UploadStatusQuery)[];
/**
 * The properties each JSON body declares (OpenAPI 2.167, checked by the compiler against the SDK): X
 * validates bodies against its schema and refuses any other with "$.<name>: is not defined in the schema
 * and the schema does not allow additional properties".
 */
type Keys<T> = readonly (keyof NonNullable<T>)[];
/** Every property of T, each once: the compiler flags a property the SDK adds and the list lacks. */
const allKeys =
  <T>() =>
  <const L extends Keys<T>>(list: Exclude<keyof NonNullable<T>, L[number]> extends never ? L : never): L =>
    list;
const CREATE_POST_KEYS = {
  "": allKeys<CreatePostBody>()([
    "card_uri",
    "community_id",
    "direct_message_deep_link",
    "edit_options",
    "for_super_followers_only",
    "geo",
    "made_with_ai",
    "media",
    "nullcast",
    "paid_partnership",
    "poll",
    "quote_tweet_id",
    "reply",
    "reply_settings",
    "share_with_followers",
    "text",
  ]),
  media: allKeys<CreatePostBody["media"]>()([
    "call_to_actions",
    "description",
    "embeddable",
    "media_ids",
    "preview_media_id",
    "tagged_user_ids",
    "title",
  ]),
  reply: allKeys<CreatePostBody["reply"]>()([
    "auto_populate_reply_metadata",
    "exclude_reply_user_ids",
    "in_reply_to_tweet_id",
  ]),
};
const METADATA_KEYS = {
  "": allKeys<CreateMetadataBody>()(["id", "metadata"]),
  metadata: allKeys<CreateMetadataBody["metadata"]>()([
    "allow_download_status",
    "alt_text",
    "audience_policy",
    "content_expiration",
    "domain_restrictions",
    "found_media_origin",
    "geo_restrictions",
    "management_info",
    "preview_image",
    "sensitive_media_warning",
    "shared_info",
    "sticker_info",
    "upload_source",
  ]),
};
/** The most alt text X takes on one media, in characters (docs.x.com/x-api/media/create-media-metadata, 2026-11-26). */
const ALT_TEXT_MAX = 1000;
const INITIALIZE_KEYS = {
  "": allKeys<InitializeUploadBody>()(["additional_owners", "media_category", "media_type", "shared", "total_bytes"]),
};

/** A JSON body as X reads it: application/json, and no property its schema does not declare. */
async function jsonBody<T>(req: Request, declared: Record<string, readonly string[]>): Promise<T> {
  if (!(req.headers.get("content-type") ?? "").toLowerCase().startsWith("application/json"))
    throw new Problem(400, "Invalid Request", "Requests with bodies must have content-type of application/json.");
  const body = await req.json().catch(() => null);
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new Problem(400, "Invalid Request", "The body is not valid JSON");
  for (const [at, keys] of Object.entries(declared)) {
    const obj = at ? (body as Record<string, unknown>)[at] : body;
    if (!obj || typeof obj !== "object") continue;
    const extra = Object.keys(obj).find((k) => !keys.includes(k));
    if (extra)
      throw new Problem(
        400,
        "Invalid Request",
        `$.${at ? `${at}.` : ""}${extra}: is not defined in the schema and the schema does not allow additional properties`,
      );
  }
  return body as T;
}

/** The media types the chunked upload's initialize declares (InitializeMediaUploadRequest.media_type). */
const CHUNKED_TYPES = [
  "video/mp4",
  "video/webm",
  "video/mp2t",
  "video/quicktime",
  "image/gif",
] as const satisfies readonly NonNullable<InitializeUploadBody["media_type"]>[];

class Problem extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    detail: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

const problem = (status: number, title: string, detail: string, headers: Record<string, string> = {}) =>
  Response.json(
    { title, detail, type: status === 429 ? "https://api.x.com/2/problems/usage-capped" : "about:blank", status },
    { status, headers: { "content-type": "application/problem+json", ...headers } },
  );

const id19 = () => (BigInt(Date.now()) * 4194304n + BigInt(randomBytes(2).readUInt16BE())).toString();

export function createXEmulator(): XEmulator {
  const failures = new FailurePlan();
  const user = {
    id: "1000000001",
    username: "sandbox_x",
    name: "Sandbox X",
    profile_image_url: "https://pbs.twimg.com/profile_images/sandbox.png",
  };
  const oauthError = (description: string) =>
    Response.json({ error: "invalid_request", error_description: description }, { status: 400 });
  const oauth = new OAuthServer({
    clientAuth: "basic",
    publicClients: true,
    codeTtlMs: CODE_TTL_MS,
    accessTtlS: ACCESS_TTL_MS / 1000,
    refresh: "rotating",
    answer: { token_type: "bearer", scope: "tweet.read tweet.write users.read media.write offline.access" },
    refuse(why) {
      if (why === "invalid_client") throw new Problem(401, "Unauthorized", "Client authentication failed");
      if (why === "unsupported_grant_type")
        return Response.json({ error: why, error_description: "grant_type is not supported" }, { status: 400 });
      if (why === "redirect_mismatch")
        return oauthError("Value passed for the redirect uri did not match the uri of the authorization code.");
      if (why === "verifier_mismatch")
        return oauthError("Value passed for the code verifier did not match the code challenge.");
      return oauthError(
        why === "invalid_refresh_token"
          ? "Value passed for the token was invalid."
          : "Value passed for the authorization code was invalid.",
      );
    },
  });
  const state = resettable(() => ({
    media: new Map<string, Media>(),
    tweets: [] as Tweet[],
    emulated: [] as EmulatedPost[],
  }));

  function authed(req: Request): string {
    if (!oauth.bearer(req)) throw new Problem(401, "Unauthorized", "Unauthorized");
    return user.id;
  }

  function authorize(url: URL): Response {
    if (url.searchParams.get("code_challenge_method") !== "S256" || !url.searchParams.get("code_challenge"))
      return problem(400, "Invalid Request", "PKCE with S256 is required");
    const scopes = (url.searchParams.get("scope") ?? "").split(" ");
    if (!scopes.includes("tweet.write") || !scopes.includes("users.read"))
      return problem(400, "Invalid Request", "scope must include tweet.write and users.read");
    return oauth.authorize(url, () => new Problem(400, "Invalid Request", "client_id and redirect_uri are required"));
  }

  function mediaJson(m: Media): WireUploadData {
    const info =
      m.state === "succeeded" && m.category === "tweet_image"
        ? undefined
        : {
            state: m.state,
            ...(m.state === "pending" || m.state === "in_progress" ? { check_after_secs: 1 } : {}),
            ...(m.state === "failed" && {
              error: { code: 1, name: "InvalidMedia", message: m.failure ?? "Unsupported video format" },
            }),
          };
    return { id: m.id, media_key: m.key, size: m.total, ...(info && { processing_info: info }) };
  }

  async function simpleUpload(req: Request, owner: string): Promise<Response> {
    const form = await req.formData().catch(() => null);
    const file = form?.get("media");
    if (!(file instanceof Blob)) throw new Problem(400, "Invalid Request", "media is required");
    // Without a category X goes by the content type; a GIF is then tweet_gif.
    const category = String(form!.get("media_category") ?? (file.type === "image/gif" ? "tweet_gif" : "tweet_image"));
    // docs.x.com/x-api/media (2026-11-26): the one-shot upload takes images only; animated GIFs and
    // videos go through the chunked upload, whose processing the status check follows.
    if (category !== "tweet_image")
      throw new Problem(
        400,
        "Invalid Request",
        `${category} media must use the chunked upload (initialize, append, finalize); the one-shot upload takes tweet_image only`,
      );
    if (file.size > IMAGE_MAX) throw new Problem(400, "Invalid Request", `media is larger than ${IMAGE_MAX} bytes`);
    const refused = breach(inspectMedia(new Uint8Array(await file.arrayBuffer())), IMAGE_RULE);
    if (refused) throw new Problem(400, "Invalid Request", `media type unrecognized: ${refused.message}`);
    const m: Media = {
      id: id19(),
      key: "",
      owner,
      category,
      type: file.type || "image/jpeg",
      total: file.size,
      parts: new Map(),
      state: "succeeded",
      polls: 0,
    };
    m.key = `3_${m.id}`;
    state.media.set(m.id, m);
    return Response.json({ data: mediaJson(m) });
  }

  /**
   * POST /2/media/metadata: the alt text of an uploaded image or GIF, which X documents for those only
   * (docs.x.com/x-api/media/create-media-metadata and the media metadata guide, 2026-11-26).
   */
  async function mediaMetadata(req: Request, owner: string): Promise<Response> {
    const b = await jsonBody<CreateMetadataBody>(req, METADATA_KEYS);
    const v = state.media.get(String(b.id ?? ""));
    if (!v || v.owner !== owner) throw new Problem(400, "Invalid Request", "media id not found");
    const text = b.metadata?.alt_text?.text;
    if (text !== undefined) {
      if (typeof text !== "string")
        throw new Problem(400, "Invalid Request", "$.metadata.alt_text.text must be a string");
      if ([...text].length > ALT_TEXT_MAX)
        throw new Problem(
          400,
          "Invalid Request",
          `$.metadata.alt_text.text must be at most ${ALT_TEXT_MAX} characters`,
        );
      if (v.category === "tweet_video")
        throw new Problem(400, "Invalid Request", "alt text is supported for images and GIFs only");
      v.alt = text;
    }
    return Response.json({ data: { id: v.id, associated_metadata: b.metadata ?? {} } });
  }

  /** X's answer to a query parameter a method does not declare. */
  function checkParams(url: URL, allowed: readonly string[]): void {
    const unknown = [...new Set(url.searchParams.keys())].filter((k) => !allowed.includes(k));
    if (unknown.length)
      throw new Problem(
        400,
        "Invalid Request",
        `One or more parameters to your request was invalid. The query parameter [${unknown[0]}] is not one of [${allowed.join(",")}]`,
      );
  }

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    const logged = {
      method: m,
      path,
      query: Object.fromEntries(url.searchParams),
      body: (req.headers.get("content-type") ?? "").includes("json")
        ? await req
            .clone()
            .json()
            .catch(() => undefined)
        : undefined,
    };
    log.push(logged);
    if (log.length > 50) log.shift();
    if (m === "GET" && path === "/oauth/authorize") return authorize(url);
    if (m === "POST" && (path === "/2/oauth2/token" || path === "/oauth/token")) return oauth.token(req);
    const me = authed(req);
    if (m === "GET" && path === "/2/users/me") {
      checkParams(url, ME_PARAMS);
      const metrics = (url.searchParams.get("user.fields") ?? "").split(",").includes("public_metrics");
      return Response.json({
        data: {
          ...user,
          ...(metrics && {
            public_metrics: {
              followers_count: followers,
              following_count: 0,
              tweet_count: state.tweets.length,
              listed_count: 0,
            },
          }),
        },
      });
    }
    if (m === "POST" && path === "/2/media/upload") return simpleUpload(req, me);
    if (m === "POST" && path === "/2/media/metadata") return mediaMetadata(req, me);
    if (m === "POST" && path === "/2/media/upload/initialize") {
      const b = await jsonBody<InitializeUploadBody>(req, INITIALIZE_KEYS);
      if (
        !CHUNKED_TYPES.includes(b.media_type as (typeof CHUNKED_TYPES)[number]) ||
        !Number.isInteger(b.total_bytes) ||
        b.total_bytes! <= 0
      )
        throw new Problem(
          400,
          "Invalid Request",
          `media_type (one of ${CHUNKED_TYPES.join(", ")}) and total_bytes are required`,
        );
      const gif = b.media_type === "image/gif";
      if (gif !== (b.media_category === "tweet_gif"))
        throw new Problem(400, "Invalid Request", "an animated GIF is uploaded with media_category tweet_gif");
      const max = gif ? GIF_MAX : VIDEO_MAX;
      if (b.total_bytes! > max) throw new Problem(400, "Invalid Request", `total_bytes is larger than ${max}`);
      const v: Media = {
        id: id19(),
        key: "",
        owner: me,
        category: b.media_category ?? "tweet_video",
        type: b.media_type!,
        total: b.total_bytes!,
        parts: new Map(),
        state: "uploading",
        polls: 0,
      };
      v.key = `7_${v.id}`;
      state.media.set(v.id, v);
      return Response.json({ data: { id: v.id, media_key: v.key, expires_after_secs: 86400 } });
    }
    const chunk = /^\/2\/media\/upload\/(\d+)\/(append|finalize)$/.exec(path);
    if (m === "POST" && chunk) {
      const v = state.media.get(chunk[1]);
      if (!v || v.owner !== me) throw new Problem(400, "Invalid Request", "media id not found");
      if (chunk[2] === "append") {
        if (v.state !== "uploading") throw new Problem(400, "Invalid Request", "media is already finalized");
        const form = await req.formData().catch(() => null);
        const part = form?.get("media");
        const index = Number(form?.get("segment_index"));
        if (!(part instanceof Blob) || !Number.isInteger(index) || index < 0 || index > 999)
          throw new Problem(400, "Invalid Request", "media and segment_index (0..999) are required");
        v.parts.set(index, new Uint8Array(await part.arrayBuffer()));
        return new Response(null, { status: 204 });
      }
      const size = [...v.parts.values()].reduce((n, p) => n + p.length, 0);
      if (size !== v.total)
        throw new Problem(400, "Invalid Request", `received ${size} bytes, total_bytes was ${v.total}`);
      const seen = { ...inspectMedia(joinParts(v.parts)), bytes: v.total };
      const refused =
        v.category === "tweet_gif"
          ? seen.mime === "image/gif"
            ? null
            : { message: "not a GIF" }
          : breach(seen, VIDEO_RULE);
      v.failure = refused?.message;
      v.state = refused ? "failed" : "pending";
      return Response.json({ data: mediaJson(v) });
    }
    if (m === "GET" && path === "/2/media/upload" && url.searchParams.get("command") === "STATUS") {
      checkParams(url, STATUS_PARAMS);
      const v = state.media.get(url.searchParams.get("media_id") ?? "");
      if (!v || v.owner !== me) throw new Problem(400, "Invalid Request", "media id not found");
      // Processing moves on with each status check, as it would over the seconds X asks to wait.
      if (v.state === "pending") v.state = "in_progress";
      else if (v.state === "in_progress" && ++v.polls >= 1) v.state = "succeeded";
      return Response.json({ data: mediaJson(v) });
    }
    if (m === "POST" && path === "/2/tweets") return createTweet(req, me);
    const timeline = /^\/2\/users\/(\d+)\/tweets$/.exec(path);
    if (m === "GET" && timeline) {
      checkParams(url, TIMELINE_PARAMS);
      const start = url.searchParams.get("start_time");
      const list = state.tweets
        .filter((t) => t.author === timeline[1] && !t.replyTo && (!start || t.createdAt >= new Date(start)))
        .reverse()
        .slice(0, Number(url.searchParams.get("max_results") ?? 10));
      const keys = list.flatMap((t) => t.mediaIds.map((id) => state.media.get(id)!));
      const media: WireMedia[] = keys.map((k) => ({
        media_key: k.key,
        type: k.category === "tweet_image" ? "photo" : k.category === "tweet_gif" ? "animated_gif" : "video",
        url: `https://pbs.twimg.com/media/${k.key}.jpg`,
      }));
      return Response.json({
        data: list.map((t) => postJson(t, url)),
        includes: { media },
        meta: { result_count: list.length },
      });
    }
    if (m === "GET" && path === "/2/tweets") {
      checkParams(url, POSTS_PARAMS);
      const ids = (url.searchParams.get("ids") ?? "").split(",").filter(Boolean);
      if (ids.length === 0 || ids.length > 100) throw new Problem(400, "Invalid Request", "ids must list 1 to 100 ids");
      return Response.json({ data: state.tweets.filter((t) => ids.includes(t.id)).map((t) => postJson(t, url)) });
    }
    throw new Problem(404, "Not Found Error", `No route ${m} ${path}`);
  }

  /**
   * A post as X answers a read: id, text and its edit history always, other fields only as `post.fields`
   * and `expansions` ask. The names are 2.167's unless the legacy switch is on.
   */
  function postJson(t: Tweet, url: URL): Record<string, unknown> {
    const fields = (url.searchParams.get("post.fields") ?? "").split(",");
    const expansions = (url.searchParams.get("expansions") ?? "").split(",");
    const refs = [
      ...(t.quoteOf ? [{ type: "quoted" as const, id: t.quoteOf }] : []),
      ...(t.replyTo ? [{ type: "replied_to" as const, id: t.replyTo }] : []),
    ];
    const metrics = {
      repost_count: t.reposts,
      reply_count: t.replies,
      like_count: t.likes,
      quote_count: t.quotes,
      bookmark_count: t.bookmarks,
      impression_count: t.impressions,
    };
    const post: WirePost = {
      id: t.id,
      text: t.text,
      edit_history_post_ids: [t.id],
      ...(fields.includes("created_at") && { created_at: t.createdAt.toISOString() }),
      ...(fields.includes("attachments") &&
        t.mediaIds.length > 0 && { attachments: { media_keys: t.mediaIds.map((id) => state.media.get(id)!.key) } }),
      ...(expansions.includes("referenced_posts") && refs.length > 0 && { referenced_posts: refs }),
      ...(fields.includes("public_metrics") && { public_metrics: metrics }),
    };
    if (!legacyNames) return post;
    const { edit_history_post_ids, referenced_posts, public_metrics, ...rest } = post;
    return {
      ...rest,
      edit_history_tweet_ids: edit_history_post_ids,
      ...(referenced_posts && { referenced_tweets: referenced_posts }),
      ...(public_metrics && {
        public_metrics: { ...public_metrics, repost_count: undefined, retweet_count: public_metrics.repost_count },
      }),
    };
  }

  async function createTweet(req: Request, me: string): Promise<Response> {
    const b = await jsonBody<CreatePostBody>(req, CREATE_POST_KEYS);
    const text = b.text ?? "";
    const ids = b.media?.media_ids ?? [];
    if (!text && ids.length === 0) throw new Problem(400, "Invalid Request", "text or media is required");
    if (weightedLength(text) > MAX_WEIGHT) throw new Problem(400, "Invalid Request", "text is too long");
    const items = ids.map((id) => state.media.get(id));
    if (items.some((i) => !i || i.owner !== me))
      throw new Problem(400, "Invalid Request", "media_ids contains an unknown id");
    if (items.some((i) => i!.state !== "succeeded"))
      throw new Problem(400, "Invalid Request", "media is not processed yet");
    const videos = items.filter((i) => i!.category !== "tweet_image");
    if (ids.length > 4 || (videos.length && ids.length > 1))
      throw new Problem(400, "Invalid Request", "up to 4 images, or 1 video or GIF");
    const replyTo = b.reply?.in_reply_to_tweet_id ?? null;
    const parent = replyTo ? state.tweets.find((t) => t.id === replyTo) : undefined;
    if (replyTo && !parent) throw new Problem(400, "Invalid Request", "in_reply_to_tweet_id does not exist");
    const quoteOf = b.quote_tweet_id ?? null;
    const quoted = quoteOf ? state.tweets.find((t) => t.id === quoteOf) : undefined;
    if (quoteOf && !quoted) throw new Problem(400, "Invalid Request", "quote_tweet_id does not exist");
    if (quoteOf && replyTo) throw new Problem(400, "Invalid Request", "a post cannot both quote and reply");
    if (text && state.tweets.some((t) => t.author === me && t.text === text))
      throw new Problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.");
    const tweet: Tweet = {
      id: id19(),
      author: me,
      text,
      mediaIds: ids,
      replyTo,
      quoteOf,
      createdAt: new Date(),
      likes: 0,
      reposts: 0,
      replies: 0,
      quotes: 0,
      bookmarks: 0,
      impressions: 0,
    };
    if (parent) parent.replies += 1;
    if (quoted) quoted.quotes += 1;
    state.tweets.push(tweet);
    state.emulated.push({
      id: tweet.id,
      text,
      replyTo,
      createdAt: tweet.createdAt,
      media: items.map((i) => ({
        type: i!.category === "tweet_image" ? "image" : i!.category === "tweet_gif" ? "gif" : "video",
        contentType: i!.type,
        size: i!.total,
        ...(i!.alt !== undefined && { alt: i!.alt }),
      })),
    });
    return Response.json(
      {
        data: legacyNames
          ? { id: tweet.id, text, edit_history_tweet_ids: [tweet.id] }
          : { id: tweet.id, text, edit_history_post_ids: [tweet.id] },
      },
      { status: 201 },
    );
  }

  function failureResponse(f: FailureSpec, req: Request): Response | null {
    if (f.kind === "rate_limit") {
      const wait = f.retryAfterSeconds ?? 900;
      return problem(429, "Too Many Requests", "Too Many Requests", {
        "x-rate-limit-limit": "100",
        "x-rate-limit-remaining": "0",
        "x-rate-limit-reset": String(Math.ceil(Date.now() / 1000) + wait),
      });
    }
    if (f.kind === "server_error") return problem(503, "Service Unavailable", "Service Unavailable");
    if (f.kind === "forbidden")
      return problem(403, "Forbidden", "You are not permitted to use this endpoint with your access level.");
    if (f.kind === "auth_expired") {
      oauth.expire(req);
      return problem(401, "Unauthorized", "Unauthorized");
    }
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;
  let legacyNames = false;
  const log: ReturnType<XEmulator["requests"]> = [];

  return {
    platform: "twitter",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/2/") && !path.includes("oauth2"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url)),
      error: Problem,
      errorResponse: (e) => problem(e.status, e.title, e.message, e.headers),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      followers = n;
    },
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
    registerClient: (id, secret) => oauth.registerClient(id, secret),
    engage(id, counts) {
      const t = state.tweets.find((x) => x.id === id);
      if (!t) throw new Error(`no post ${id}`);
      addCounts(t, counts);
    },
    expireTokens: () => oauth.expireAll(),
    answerWithLegacyNames(on) {
      legacyNames = on;
    },
    requests: () => [...log],
  };
}

export default defineEmulator(() => createXEmulator());
