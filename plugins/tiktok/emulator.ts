/**
 * An emulator of the TikTok surface the plugin uses: OAuth v2 (client_key and secret in the form, code
 * and rotating refresh grants, the scopes each user granted), user info (each field behind its scope),
 * creator_info (privacy options of an unaudited app are
 * SELF_ONLY unless a test opens them), direct and inbox video init with FILE_UPLOAD chunk rules, chunk
 * PUTs checked against Content-Range, photo posts pulled from their URLs (JPEG or WebP), publish status
 * progressing over status fetches, video list and query; every endpoint behind its scope, and an
 * unaudited client limited to SELF_ONLY. Answers use TikTok's `{data, error:{code, message, log_id}}`
 * envelope. The rules and their sources: ./emulator-rules.ts.
 *
 * Sandbox rule: client key "sandbox"/"sandbox", every authorization is sandbox_tiktoker, whose privacy
 * options include PUBLIC_TO_EVERYONE.
 */
import { randomBytes } from "node:crypto";
import {
  defineEmulator,
  type EmulatedPost,
  type Emulator,
  type EmulatorOptions,
  type FailureSpec,
} from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { breach, inspectMedia, joinParts, pullMedia } from "../../src/platform/emulator-media.ts";
import { tiktokOAuth } from "./emulator-oauth.ts";
import {
  ENDPOINT_SCOPES,
  envelope,
  missingFieldScopes,
  PHOTO_DESCRIPTION_MAX_UTF16,
  PHOTO_TITLE_MAX_UTF16,
  UNAUDITED_CODE,
  USER_FIELD_SCOPES,
  VIDEO_TITLE_MAX_UTF16,
  KEEP_UPLOAD_BYTES,
  PHOTO_RULE,
  VIDEO_FAIL_REASON,
  VIDEO_RULE,
} from "./emulator-rules.ts";

const MB = 1024 * 1024;
const PRIVACY = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"];

interface Publish {
  id: string;
  kind: "video" | "photo";
  inbox: boolean;
  title: string;
  privacy: string;
  aigc: boolean | null;
  size: number;
  chunk: number;
  chunks: number;
  received: Map<number, number>;
  /** The chunks received, kept to read the whole file once it is in (up to KEEP_UPLOAD_BYTES). */
  parts: Map<number, Uint8Array>;
  status: "PROCESSING_UPLOAD" | "PROCESSING_DOWNLOAD" | "SEND_TO_USER_INBOX" | "PUBLISH_COMPLETE" | "FAILED";
  fail: string | null;
  polls: number;
  videoId: string | null;
  photos: number;
  uploadToken: string;
  /** post_info.video_cover_timestamp_ms of a direct video post: the frame TikTok shows as the cover. */
  coverMs?: number;
}

interface Video {
  id: string;
  title: string;
  createdAt: Date;
  views: number;
  likes: number;
  comments: number;
  shares: number;
}

export interface TikTokEmulator extends Emulator {
  engage(id: string, counts: Partial<Pick<Video, "views" | "likes" | "comments" | "shares">>): void;
  /** What creator_info offers: the privacy levels the creator's account allows. */
  setPrivacyOptions(options: string[]): void;
  /** An app TikTok has not audited yet: direct posts other than SELF_ONLY are refused. */
  setAudited(audited: boolean): void;
  /** The user grants only these of the requested scopes at the next consents (null: all requested). */
  grantOnly(scopes: string[] | null): void;
}

class TikTokError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function createTikTokEmulator(opts: EmulatorOptions = {}): TikTokEmulator {
  const failures = new FailurePlan();
  const user = {
    open_id: "-000sandboxOpenId",
    username: "sandbox_tiktoker",
    display_name: "Sandbox TikToker",
    avatar_url: "https://p16.tiktokcdn.com/sandbox.jpeg",
  };
  const oauth = tiktokOAuth(user.open_id);
  const state = resettable(() => ({
    publishes: new Map<string, Publish>(),
    videos: [] as Video[],
    emulated: [] as EmulatedPost[],
    privacyOptions: [...PRIVACY],
    audited: true,
  }));

  function authed(req: Request) {
    if (!oauth.bearer(req))
      throw new TikTokError(401, "access_token_invalid", "The access token is invalid or not found in the request.");
  }

  /** TikTok's answer to a call whose token lacks the scope: 401 scope_not_authorized. */
  function requireScope(req: Request, anyOf: string[] | undefined) {
    if (anyOf && !anyOf.some((s) => oauth.scopesOf(req).includes(s)))
      throw new TikTokError(
        401,
        "scope_not_authorized",
        `The user did not authorize the scope required for completing this request: ${anyOf.join(" or ")}.`,
      );
  }

  async function json<T>(req: Request): Promise<T> {
    // "Content-Type: application/json; charset=UTF-8" is a required header of every JSON endpoint.
    if (!(req.headers.get("content-type") ?? "").startsWith("application/json"))
      throw new TikTokError(400, "invalid_params", "Content-Type must be application/json; charset=UTF-8.");
    const b = await req.json().catch(() => null);
    if (!b || typeof b !== "object")
      throw new TikTokError(400, "invalid_params", "The request body is not valid JSON.");
    return b as T;
  }

  function newPublish(kind: Publish["kind"], inbox: boolean, extra: Partial<Publish>): Publish {
    const p: Publish = {
      id: `v_pub_file~v2-1.${randomBytes(8).toString("hex")}`,
      kind,
      inbox,
      title: "",
      privacy: "SELF_ONLY",
      aigc: null,
      size: 0,
      chunk: 0,
      chunks: 0,
      received: new Map(),
      parts: new Map(),
      status: "PROCESSING_UPLOAD",
      fail: null,
      polls: 0,
      videoId: null,
      photos: 0,
      uploadToken: randomBytes(12).toString("hex"),
      ...extra,
    };
    state.publishes.set(p.id, p);
    return p;
  }

  /** A direct post's privacy_level: one of creator_info's options, and SELF_ONLY for an unaudited app. */
  function checkPrivacy(privacy: string | undefined): string {
    if (!privacy || !state.privacyOptions.includes(privacy))
      throw new TikTokError(400, "privacy_level_option_mismatch", "privacy_level is not one of the creator's options.");
    if (!state.audited && privacy !== "SELF_ONLY")
      throw new TikTokError(403, UNAUDITED_CODE, "Unaudited clients can only post with SELF_ONLY privacy.");
    return privacy;
  }

  function checkSource(
    s: { source?: string; video_size?: number; chunk_size?: number; total_chunk_count?: number } | undefined,
  ) {
    if (s?.source !== "FILE_UPLOAD")
      throw new TikTokError(400, "invalid_params", "source_info.source must be FILE_UPLOAD here.");
    const { video_size: size = 0, chunk_size: chunk = 0, total_chunk_count: count = 0 } = s;
    if (size <= 0 || size > 4096 * MB) throw new TikTokError(400, "invalid_params", "video_size is out of range.");
    const valid =
      size <= 64 * MB
        ? chunk === size && count === 1
        : chunk >= 5 * MB && chunk <= 64 * MB && count === Math.floor(size / chunk) && count <= 1000;
    if (!valid)
      throw new TikTokError(400, "invalid_params", "chunk_size and total_chunk_count do not follow the chunk rules.");
    return { size, chunk, count };
  }

  /** The whole file is in: TikTok reads it and fails the post with the check it did not pass. */
  function finish(p: Publish) {
    // Over KEEP_UPLOAD_BYTES only the first chunk is kept: the type is known, what is further in is not.
    const refused = breach({ ...inspectMedia(joinParts(p.parts)), bytes: p.size }, VIDEO_RULE);
    p.parts.clear();
    if (refused) {
      p.status = "FAILED";
      p.fail = VIDEO_FAIL_REASON[refused.rule] ?? "file_format_check_failed";
      return;
    }
    p.status = "PROCESSING_DOWNLOAD";
  }

  function settle(p: Publish) {
    if (p.status !== "PROCESSING_DOWNLOAD" || ++p.polls < 2) return;
    if (p.inbox) {
      p.status = "SEND_TO_USER_INBOX";
      state.emulated.push({
        id: p.id,
        text: p.title,
        media: [{ type: p.kind === "video" ? "video" : "image" }],
        options: { publish_mode: "draft" },
        createdAt: new Date(),
      });
      return;
    }
    p.status = "PUBLISH_COMPLETE";
    const v: Video = {
      id: String(7_400_000_000_000_000_000n + BigInt(randomBytes(6).readUIntBE(0, 6))),
      title: p.title,
      createdAt: new Date(),
      views: 0,
      likes: 0,
      comments: 0,
      shares: 0,
    };
    // Only public posts get a public id (after moderation, here at once).
    if (p.privacy === "PUBLIC_TO_EVERYONE") p.videoId = v.id;
    state.videos.push(v);
    state.emulated.push({
      id: v.id,
      text: p.title,
      media: Array.from({ length: p.kind === "photo" ? p.photos : 1 }, () => ({
        type: p.kind === "video" ? "video" : "image",
      })),
      options: {
        privacy_level: p.privacy,
        ...(p.aigc !== null && { ai_generated: p.aigc }),
        ...(p.coverMs !== undefined && { video_cover_timestamp_ms: p.coverMs }),
      },
      createdAt: v.createdAt,
    });
  }

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && (path === "/oauth/authorize" || path === "/v2/auth/authorize/"))
      return oauth.authorize(
        url,
        () => new TikTokError(400, "invalid_request", "client_key and redirect_uri are required."),
      );
    if (m === "POST" && (path === "/v2/oauth/token/" || path === "/oauth/token")) return oauth.token(req);
    const upload = /^\/upload\/([a-f0-9]+)$/.exec(path);
    if (m === "PUT" && upload) {
      const p = [...state.publishes.values()].find((x) => x.uploadToken === upload[1]);
      if (!p || p.status !== "PROCESSING_UPLOAD") return new Response(null, { status: 404 });
      const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(req.headers.get("content-range") ?? "");
      const bytes = new Uint8Array(await req.arrayBuffer());
      if (!range || Number(range[3]) !== p.size || Number(range[2]) - Number(range[1]) + 1 !== bytes.length)
        return new Response(null, { status: 400 });
      const index = Math.floor(Number(range[1]) / p.chunk);
      if (index === 0 || p.size <= KEEP_UPLOAD_BYTES) p.parts.set(index, bytes);
      p.received.set(index, bytes.length);
      const total = [...p.received.values()].reduce((a, b) => a + b, 0);
      if (total < p.size) return new Response(null, { status: 206 });
      finish(p);
      return new Response(null, { status: 201 });
    }
    authed(req);
    requireScope(req, ENDPOINT_SCOPES[path]);
    if (m === "GET" && path === "/v2/user/info/") {
      const fields = (url.searchParams.get("fields") ?? "").split(",").filter(Boolean);
      const { unknown, missing } = missingFieldScopes(fields, oauth.scopesOf(req));
      if (!fields.length || unknown.length)
        throw new TikTokError(
          400,
          "invalid_params",
          `fields is required and takes only: ${Object.keys(USER_FIELD_SCOPES)}.`,
        );
      if (missing.length) requireScope(req, missing);
      const all: Record<string, unknown> = {
        ...user,
        union_id: "sandbox-union-id",
        follower_count: followers,
        following_count: 0,
        likes_count: 0,
        video_count: state.videos.length,
      };
      // Only the fields asked for come back.
      return envelope({ user: Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]])) });
    }
    if (m === "POST" && path === "/v2/post/publish/creator_info/query/") {
      return envelope({
        creator_avatar_url: user.avatar_url,
        creator_username: user.username,
        creator_nickname: user.display_name,
        privacy_level_options: state.privacyOptions,
        comment_disabled: false,
        duet_disabled: false,
        stitch_disabled: false,
        max_video_post_duration_sec: 600,
      });
    }
    if (m === "POST" && (path === "/v2/post/publish/video/init/" || path === "/v2/post/publish/inbox/video/init/")) {
      const inbox = path.includes("/inbox/");
      const b = await json<{
        post_info?: { title?: string; privacy_level?: string; is_aigc?: boolean; video_cover_timestamp_ms?: number };
        source_info?: { source?: string; video_size?: number; chunk_size?: number; total_chunk_count?: number };
      }>(req);
      const { size, chunk, count } = checkSource(b.source_info);
      let privacy = "SELF_ONLY";
      if (!inbox) {
        privacy = checkPrivacy(b.post_info?.privacy_level);
        if ((b.post_info?.title ?? "").length > VIDEO_TITLE_MAX_UTF16)
          throw new TikTokError(400, "invalid_params", `title is longer than ${VIDEO_TITLE_MAX_UTF16} UTF-16 runes.`);
      }
      // post_info.video_cover_timestamp_ms, int32: "Specify which frame (in milliseconds) to use as the video
      // cover" (developers.tiktok.com/doc/content-posting-api-reference-direct-post, checked 2026-11-26).
      const coverMs = b.post_info?.video_cover_timestamp_ms;
      if (coverMs !== undefined && (!Number.isInteger(coverMs) || coverMs < 0 || coverMs > 2 ** 31 - 1))
        throw new TikTokError(400, "invalid_params", "video_cover_timestamp_ms must be a non-negative int32.");
      const p = newPublish("video", inbox, {
        ...(coverMs !== undefined && !inbox && { coverMs }),
        title: b.post_info?.title ?? "",
        privacy,
        aigc: b.post_info?.is_aigc ?? null,
        size,
        chunk,
        chunks: count,
      });
      return envelope({ publish_id: p.id, upload_url: `${base}/upload/${p.uploadToken}` });
    }
    if (m === "POST" && path === "/v2/post/publish/content/init/") {
      const b = await json<{
        post_info?: { title?: string; description?: string; privacy_level?: string };
        source_info?: { source?: string; photo_images?: string[]; photo_cover_index?: number };
        post_mode?: string;
        media_type?: string;
      }>(req);
      if (b.media_type !== "PHOTO" || b.source_info?.source !== "PULL_FROM_URL")
        throw new TikTokError(400, "invalid_params", "media_type PHOTO with source PULL_FROM_URL is required.");
      const images = b.source_info.photo_images ?? [];
      if (images.length < 1 || images.length > 35)
        throw new TikTokError(400, "invalid_params", "photo_images takes 1 to 35 URLs.");
      if (b.post_mode !== "DIRECT_POST" && b.post_mode !== "MEDIA_UPLOAD")
        throw new TikTokError(400, "invalid_params", "post_mode must be DIRECT_POST or MEDIA_UPLOAD.");
      const inbox = b.post_mode === "MEDIA_UPLOAD";
      requireScope(req, [inbox ? "video.upload" : "video.publish"]);
      const privacy = inbox ? (b.post_info?.privacy_level ?? "") : checkPrivacy(b.post_info?.privacy_level);
      if ((b.post_info?.title ?? "").length > PHOTO_TITLE_MAX_UTF16)
        throw new TikTokError(400, "invalid_params", `title is longer than ${PHOTO_TITLE_MAX_UTF16} UTF-16 runes.`);
      if ((b.post_info?.description ?? "").length > PHOTO_DESCRIPTION_MAX_UTF16)
        throw new TikTokError(
          400,
          "invalid_params",
          `description is longer than ${PHOTO_DESCRIPTION_MAX_UTF16} UTF-16 runes.`,
        );
      const p = newPublish("photo", inbox, {
        title: `${b.post_info?.title ?? ""}\n${b.post_info?.description ?? ""}`,
        privacy,
        photos: images.length,
        status: "PROCESSING_DOWNLOAD",
      });
      // TikTok pulls each photo itself and reads it.
      for (const image of images) {
        const seen = await pullMedia(image, opts.pullMedia);
        const refused = seen && breach(seen, PHOTO_RULE);
        if (!seen || refused) {
          p.status = "FAILED";
          p.fail = !seen
            ? "url_ownership_unverified"
            : refused!.rule === "types"
              ? "picture_format_unsupported"
              : "picture_size_check_failed";
        }
      }
      return envelope({ publish_id: p.id });
    }
    if (m === "POST" && path === "/v2/post/publish/status/fetch/") {
      const b = await json<{ publish_id?: string }>(req);
      const p = state.publishes.get(b.publish_id ?? "");
      if (!p) throw new TikTokError(400, "invalid_publish_id", "publish_id does not exist.");
      settle(p);
      const res = envelope({
        status: p.status,
        ...(p.fail && { fail_reason: p.fail }),
        ...(p.videoId && { publicaly_available_post_id: ["__POST_ID__"] }),
        uploaded_bytes: p.size,
        downloaded_bytes: p.size,
      });
      // TikTok writes the id as a bare 19-digit number, more than a double holds exactly.
      return new Response((await res.text()).replace('"__POST_ID__"', p.videoId ?? ""), {
        headers: { "content-type": "application/json" },
      });
    }
    if (m === "POST" && path === "/v2/video/list/") {
      const list = [...state.videos].reverse().slice(0, 20);
      // Ids are strings here, as TikTok's video list sends them.
      return envelope({
        videos: list.map((v) => ({
          id: v.id,
          title: v.title,
          video_description: v.title,
          create_time: Math.floor(v.createdAt.getTime() / 1000),
          share_url: `https://www.tiktok.com/@${user.username}/video/${v.id}`,
        })),
        cursor: 0,
        has_more: false,
      });
    }
    if (m === "POST" && path === "/v2/video/query/") {
      const b = await json<{ filters?: { video_ids?: string[] } }>(req);
      const ids = b.filters?.video_ids ?? [];
      if (ids.length === 0 || ids.length > 20)
        throw new TikTokError(400, "invalid_params", "filters.video_ids takes 1 to 20 ids.");
      return envelope({
        videos: state.videos
          .filter((v) => ids.includes(v.id))
          .map((v) => ({
            id: v.id,
            view_count: v.views,
            like_count: v.likes,
            comment_count: v.comments,
            share_count: v.shares,
          })),
      });
    }
    throw new TikTokError(404, "not_found", `No route ${m} ${path}`);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit") return envelope({}, "rate_limit_exceeded", "The API rate limit was exceeded.", 429);
    if (f.kind === "server_error")
      return envelope({}, "internal_error", "Something went wrong. Please try again later.", 500);
    if (f.kind === "auth_expired")
      return envelope({}, "access_token_invalid", "The access token is invalid or not found in the request.", 401);
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "tiktok",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_KEY: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/v2/") && !path.startsWith("/v2/oauth") && !path.startsWith("/v2/auth"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: TikTokError,
      errorResponse: (e) => envelope({}, e.code, e.message, e.status),
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
    engage(id, counts) {
      const v = state.videos.find((x) => x.id === id);
      if (!v) throw new Error(`no video ${id}`);
      addCounts(v, counts);
    },
    setPrivacyOptions(options) {
      state.privacyOptions = [...options];
    },
    setAudited(audited) {
      state.audited = audited;
    },
    grantOnly: (scopes) => oauth.grantOnly(scopes),
  };
}

export default defineEmulator((opts) => createTikTokEmulator(opts));
