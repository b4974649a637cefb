/**
 * An emulator of the X API v2 surface the plugin uses: OAuth 2 (authorize with PKCE S256, code exchange
 * with client authentication, 30-second single-use codes, rotating refresh tokens, two-hour access
 * tokens), users/me, simple image upload and chunked video upload with processing states, post creation
 * (weighted 280, media rules, replies, duplicate refusal), the user's timeline and public metrics.
 * Errors are problem+json `{title, detail, type, status}`; rate limits carry x-rate-limit-* headers.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user sandbox_x, and the sandbox
 * authorize page's codes (sandbox_…) are accepted without PKCE.
 */
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

/** What X itself refuses above, in weighted characters. */
const MAX_WEIGHT = 280;

const MB = 1024 * 1024;
const ACCESS_TTL_MS = 2 * 3600_000;
const CODE_TTL_MS = 30_000;
const IMAGE_MAX = 5 * MB;
const GIF_MAX = 15 * MB;
const VIDEO_MAX = 512 * MB;

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
}
interface Tweet {
  id: string;
  author: string;
  text: string;
  mediaIds: string[];
  replyTo: string | null;
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
}

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

  function mediaJson(m: Media) {
    const info =
      m.state === "succeeded" && m.category === "tweet_image"
        ? undefined
        : {
            state: m.state,
            ...(m.state === "pending" || m.state === "in_progress" ? { check_after_secs: 1 } : {}),
            ...(m.state === "failed" && {
              error: { code: 1, name: "InvalidMedia", message: "Unsupported video format" },
            }),
          };
    return { id: m.id, media_key: m.key, size: m.total, ...(info && { processing_info: info }) };
  }

  async function simpleUpload(req: Request, owner: string): Promise<Response> {
    const form = await req.formData().catch(() => null);
    const file = form?.get("media");
    if (!(file instanceof Blob)) throw new Problem(400, "Invalid Request", "media is required");
    const category = String(form!.get("media_category") ?? "tweet_image");
    if (!["tweet_image", "tweet_gif"].includes(category))
      throw new Problem(400, "Invalid Request", "media_category must be tweet_image or tweet_gif for a simple upload");
    const max = category === "tweet_gif" ? GIF_MAX : IMAGE_MAX;
    if (file.size > max) throw new Problem(400, "Invalid Request", `media is larger than ${max} bytes`);
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

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize") return authorize(url);
    if (m === "POST" && (path === "/2/oauth2/token" || path === "/oauth/token")) return oauth.token(req);
    const me = authed(req);
    if (m === "GET" && path === "/2/users/me") {
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
    if (m === "POST" && path === "/2/media/upload/initialize") {
      const b = (await req.json().catch(() => ({}))) as {
        media_type?: string;
        total_bytes?: number;
        media_category?: string;
      };
      if (!b.media_type?.startsWith("video/") || !Number.isInteger(b.total_bytes) || b.total_bytes! <= 0)
        throw new Problem(400, "Invalid Request", "media_type (video/*) and total_bytes are required");
      if (b.total_bytes! > VIDEO_MAX)
        throw new Problem(400, "Invalid Request", `total_bytes is larger than ${VIDEO_MAX}`);
      const v: Media = {
        id: id19(),
        key: "",
        owner: me,
        category: b.media_category ?? "tweet_video",
        type: b.media_type,
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
      const first = v.parts.get(0) ?? new Uint8Array();
      const mp4 = first.length > 8 && Buffer.from(first.subarray(4, 8)).toString("latin1") === "ftyp";
      v.state = mp4 ? "pending" : "failed";
      return Response.json({ data: mediaJson(v) });
    }
    if (m === "GET" && path === "/2/media/upload" && url.searchParams.get("command") === "STATUS") {
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
      const start = url.searchParams.get("start_time");
      const list = state.tweets
        .filter((t) => t.author === timeline[1] && !t.replyTo && (!start || t.createdAt >= new Date(start)))
        .reverse()
        .slice(0, Number(url.searchParams.get("max_results") ?? 10));
      const keys = list.flatMap((t) => t.mediaIds.map((id) => state.media.get(id)!));
      return Response.json({
        data: list.map((t) => ({
          id: t.id,
          text: t.text,
          created_at: t.createdAt.toISOString(),
          edit_history_tweet_ids: [t.id],
          ...(t.mediaIds.length && { attachments: { media_keys: t.mediaIds.map((id) => state.media.get(id)!.key) } }),
        })),
        includes: {
          media: keys.map((k) => ({
            media_key: k.key,
            type: k.category === "tweet_image" ? "photo" : k.category === "tweet_gif" ? "animated_gif" : "video",
            url: `https://pbs.twimg.com/media/${k.key}.jpg`,
          })),
        },
        meta: { result_count: list.length },
      });
    }
    if (m === "GET" && path === "/2/tweets") {
      const ids = (url.searchParams.get("ids") ?? "").split(",").filter(Boolean);
      if (ids.length === 0 || ids.length > 100) throw new Problem(400, "Invalid Request", "ids must list 1 to 100 ids");
      return Response.json({
        data: state.tweets
          .filter((t) => ids.includes(t.id))
          .map((t) => ({
            id: t.id,
            text: t.text,
            edit_history_tweet_ids: [t.id],
            public_metrics: {
              retweet_count: t.reposts,
              reply_count: t.replies,
              like_count: t.likes,
              quote_count: t.quotes,
              bookmark_count: t.bookmarks,
              impression_count: t.impressions,
            },
          })),
      });
    }
    throw new Problem(404, "Not Found Error", `No route ${m} ${path}`);
  }

  async function createTweet(req: Request, me: string): Promise<Response> {
    const b = (await req.json().catch(() => null)) as {
      text?: string;
      media?: { media_ids?: string[] };
      reply?: { in_reply_to_tweet_id?: string };
    } | null;
    if (!b) throw new Problem(400, "Invalid Request", "The body is not valid JSON");
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
    if (text && state.tweets.some((t) => t.author === me && t.text === text))
      throw new Problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.");
    const tweet: Tweet = {
      id: id19(),
      author: me,
      text,
      mediaIds: ids,
      replyTo,
      createdAt: new Date(),
      likes: 0,
      reposts: 0,
      replies: 0,
      quotes: 0,
      bookmarks: 0,
      impressions: 0,
    };
    if (parent) parent.replies += 1;
    state.tweets.push(tweet);
    state.emulated.push({
      id: tweet.id,
      text,
      replyTo,
      createdAt: tweet.createdAt,
      media: items.map((i) => ({
        type: i!.category === "tweet_image" ? "image" : "video",
        contentType: i!.type,
        size: i!.total,
      })),
    });
    return Response.json({ data: { id: tweet.id, text, edit_history_tweet_ids: [tweet.id] } }, { status: 201 });
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
  };
}

export default defineEmulator(() => createXEmulator());
