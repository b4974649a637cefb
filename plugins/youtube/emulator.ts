/**
 * An emulator of the Google OAuth and YouTube Data API v3 surface the plugin uses: authorize (PKCE),
 * token (client id and secret in the body; code and refresh grants; one-hour access tokens), the
 * channel, resumable uploads (session, declared length and type checked, bytes create the video),
 * processing over status checks, the uploads playlist and statistics, and top-level comments on the
 * channel's videos (commentThreads insert and list, youtube.force-ssl). Errors use Google's
 * `{error:{code, message, errors:[{reason}]}}`. The video resource is checked against YouTube's own
 * contract (./contract.ts, from @googleapis/youtube): a field it does not declare is refused, as YouTube
 * refuses it, and the answers are typed by it. A project YouTube has not audited (setAudited(false))
 * gets its uploads made private. Rules and sources: docs/platforms.md, YouTube.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the channel "@sandboxtube".
 */
import { breach, inspectMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import { createHash, randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { googleOAuth } from "./emulator-oauth.ts";
import { thumbnailOf, type CustomThumbnail } from "./emulator-thumbnails.ts";
import {
  VIDEO_FIELDS,
  VIDEO_PARTS,
  COMMENT_THREAD_FIELDS,
  type ChannelListResponse,
  type CommentThread,
  type CommentThreadListResponse,
  type PlaylistItemListResponse,
  type Video as VideoResource,
  type VideoListResponse,
} from "./contract.ts";

/**
 * The scopes each call accepts (any one of them): the Authorization section of videos.insert,
 * videos.list, channels.list and playlistItems.list (developers.google.com/youtube/v3/docs, 2026-11-26).
 */
const YT = "https://www.googleapis.com/auth/";
const UPLOAD_SCOPES = [`${YT}youtube.upload`, `${YT}youtube`, `${YT}youtubepartner`, `${YT}youtube.force-ssl`];
const READ_SCOPES = [`${YT}youtube.readonly`, `${YT}youtube`, `${YT}youtubepartner`, `${YT}youtube.force-ssl`];
const PRIVACY = ["public", "unlisted", "private"];
/**
 * commentThreads.insert (developers.google.com/youtube/v3/docs/commentThreads/insert, read 2026-11-26):
 * youtube.force-ssl only; a commentThread with snippet.channelId, snippet.videoId and
 * snippet.topLevelComment.snippet.textOriginal; 400 channelOrVideoIdMissing, commentTextRequired,
 * commentTextTooLong; 404 channelNotFound, videoNotFound. The page names no number for "too long": the
 * emulator refuses past 10,000 characters, the limit Crier declares. commentThreads.list by videoId takes
 * the read scopes (force-ssl among them).
 */
const COMMENT_SCOPES = [`${YT}youtube.force-ssl`];
const COMMENT_MAX = 10_000;

interface TopComment {
  id: string;
  videoId: string;
  text: string;
  createdAt: Date;
}

interface Video {
  id: string;
  title: string;
  description: string;
  privacy: string;
  synthetic: boolean | null;
  size: number;
  status: "uploaded" | "processed" | "failed";
  checks: number;
  createdAt: Date;
  views: number;
  likes: number;
  comments: number;
  thumbnail?: CustomThumbnail;
}

interface Session {
  id: string;
  length: number;
  type: string;
  snippet: { title: string; description: string };
  privacy: string;
  synthetic: boolean | null;
  done: boolean;
}

export interface YouTubeEmulator extends Emulator {
  engage(id: string, counts: { views?: number; likes?: number; comments?: number }): void;
  expireTokens(): void;
  /**
   * A Google API project that has not passed YouTube's audit: "videos uploaded via the videos.insert
   * endpoint from unverified API projects created after 28 July 2020 will be restricted to private
   * viewing mode" (videos.insert reference, checked 2026-11-26).
   */
  setAudited(audited: boolean): void;
  /** The user grants only these of the requested scopes at the next consents (null: all requested). */
  grantOnly(scopes: string[] | null): void;
  /** Whether the Google account has a YouTube channel (channels.list?mine=true answers none without). */
  setChannel(exists: boolean): void;
  /** Whether the channel may set custom thumbnails (a channel that may not: thumbnails.set answers 403 forbidden). */
  setCustomThumbnails(allowed: boolean): void;
}

// videos.insert (developers.google.com/youtube/v3/docs/videos/insert, checked 2026-11-26): at most 256 GB,
// video/* (the formats of support.google.com/youtube/answer/4497585: MOV, MP4, WebM, …); at most 12 hours
// (support.google.com/youtube/answer/71673, checked 2026-11-26). A file that is none of these fails.
const VIDEO_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime", "video/webm", "video/x-matroska"],
  maxBytes: 256 * 1024 ** 3,
  maxDuration: 12 * 3600,
};

class GoogleError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const body = (status: number, reason: string, message: string) => ({
  error: {
    code: status,
    message,
    errors: [
      {
        message,
        domain: reason === "invalid" || reason === "insufficientPermissions" ? "global" : "youtube.video",
        reason,
      },
    ],
    status: status === 401 ? "UNAUTHENTICATED" : status === 403 ? "PERMISSION_DENIED" : "INVALID_ARGUMENT",
  },
});

/**
 * A field the resource does not declare: Google's front end answers 400 "Invalid JSON payload received.
 * Unknown name ... Cannot find field." before YouTube looks at the request.
 */
function refuseUnknown(value: unknown, known: string[], at: string) {
  if (value === undefined || value === null) return;
  if (typeof value !== "object" || Array.isArray(value))
    throw new GoogleError(400, "invalid", `Invalid JSON payload received. '${at}' must be an object.`);
  for (const name of Object.keys(value))
    if (!known.includes(name))
      throw new GoogleError(
        400,
        "invalid",
        `Invalid JSON payload received. Unknown name "${name}" at '${at}': Cannot find field.`,
      );
}

export function createYouTubeEmulator(): YouTubeEmulator {
  const failures = new FailurePlan();
  const oauth = googleOAuth();
  const state = resettable(() => ({
    sessions: new Map<string, Session>(),
    videos: [] as Video[],
    comments: [] as TopComment[],
    emulated: [] as EmulatedPost[],
    audited: true,
    hasChannel: true,
    customThumbnails: true,
  }));
  const channel = { id: "UCsandbox0000000000000001", title: "Sandbox Tube", customUrl: "@sandboxtube" };

  function authed(req: Request) {
    if (!oauth.bearer(req)) throw new GoogleError(401, "authError", "Request had invalid authentication credentials.");
  }

  /** A token without any of the scopes a call accepts: 403 insufficientPermissions. */
  function requireScope(req: Request, anyOf: string[]) {
    if (!anyOf.some((s) => oauth.scopesOf(req).includes(s)))
      throw new GoogleError(403, "insufficientPermissions", "Request had insufficient authentication scopes.");
  }

  const videoItem = (v: Video, parts: string[]): VideoResource => ({
    kind: "youtube#video",
    id: v.id,
    ...(parts.includes("snippet") && {
      snippet: {
        title: v.title,
        description: v.description,
        publishedAt: v.createdAt.toISOString(),
        channelId: channel.id,
      },
    }),
    ...(parts.includes("status") && {
      status: {
        uploadStatus: v.status,
        privacyStatus: v.privacy,
        ...(v.status === "failed" && { failureReason: "codec" }),
      },
    }),
    ...(parts.includes("processingDetails") && {
      processingDetails: {
        processingStatus: v.status === "processed" ? "succeeded" : v.status === "failed" ? "failed" : "processing",
      },
    }),
    ...(parts.includes("statistics") && {
      statistics: {
        viewCount: String(v.views),
        likeCount: String(v.likes),
        commentCount: String(v.comments),
        favoriteCount: "0",
      },
    }),
  });

  const threadJson = (c: TopComment): CommentThread => ({
    kind: "youtube#commentThread",
    id: c.id,
    snippet: {
      channelId: channel.id,
      videoId: c.videoId,
      canReply: true,
      totalReplyCount: 0,
      isPublic: true,
      topLevelComment: {
        kind: "youtube#comment",
        id: c.id,
        snippet: {
          channelId: channel.id,
          videoId: c.videoId,
          authorDisplayName: channel.customUrl,
          authorChannelId: { value: channel.id },
          textOriginal: c.text,
          textDisplay: c.text,
          likeCount: 0,
          publishedAt: c.createdAt.toISOString(),
          updatedAt: c.createdAt.toISOString(),
        },
      },
    },
  });

  async function insertThread(req: Request, url: URL): Promise<Response> {
    requireScope(req, COMMENT_SCOPES);
    const parts = (url.searchParams.get("part") ?? "").split(",").filter(Boolean);
    if (!parts.length)
      throw new GoogleError(400, "missingRequiredParameter", "No filter selected. Expected one of: part");
    const unknownPart = parts.find((p) => !["id", "replies", "snippet"].includes(p));
    if (unknownPart) throw new GoogleError(400, "unexpectedPart", `'${unknownPart}'`);
    const sent = (await req.json().catch(() => null)) as CommentThread | null;
    refuseUnknown(sent, COMMENT_THREAD_FIELDS.thread, "resource");
    refuseUnknown(sent?.snippet, COMMENT_THREAD_FIELDS.snippet, "resource.snippet");
    refuseUnknown(sent?.snippet?.topLevelComment, COMMENT_THREAD_FIELDS.comment, "resource.snippet.topLevelComment");
    refuseUnknown(
      sent?.snippet?.topLevelComment?.snippet,
      COMMENT_THREAD_FIELDS.commentSnippet,
      "resource.snippet.topLevelComment.snippet",
    );
    const s = sent?.snippet;
    if (!s?.channelId || !s.videoId)
      throw new GoogleError(400, "channelOrVideoIdMissing", "The comment thread must be linked to a video.");
    const text = s.topLevelComment?.snippet?.textOriginal ?? "";
    if (!text.trim()) throw new GoogleError(400, "commentTextRequired", "The comment must have text.");
    if ([...text].length > COMMENT_MAX)
      throw new GoogleError(400, "commentTextTooLong", "The comment text contains too many characters.");
    if (s.channelId !== channel.id) throw new GoogleError(404, "channelNotFound", "The channel was not found.");
    const v = state.videos.find((x) => x.id === s.videoId);
    if (!v) throw new GoogleError(404, "videoNotFound", "The video was not found.");
    const c: TopComment = {
      id: `Ug${randomBytes(12).toString("base64url")}4AaABAg`,
      videoId: v.id,
      text,
      createdAt: new Date(),
    };
    state.comments.push(c);
    v.comments += 1;
    state.emulated.push({ id: c.id, text, media: [], replyTo: v.id, createdAt: c.createdAt });
    return Response.json(threadJson(c));
  }

  function listThreads(url: URL): Response {
    const videoId = url.searchParams.get("videoId");
    if (!videoId)
      throw new GoogleError(400, "missingRequiredParameter", "No filter selected. Expected one of: videoId, id");
    if (!state.videos.some((x) => x.id === videoId))
      throw new GoogleError(404, "videoNotFound", "The video was not found.");
    const max = Number(url.searchParams.get("maxResults") ?? 20);
    const all = state.comments.filter((c) => c.videoId === videoId).reverse();
    return Response.json({
      kind: "youtube#commentThreadListResponse",
      items: all.slice(0, max).map(threadJson),
      ...(all.length > max && { nextPageToken: "next" }),
      pageInfo: { totalResults: all.length, resultsPerPage: max },
    } satisfies CommentThreadListResponse);
  }

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return oauth.authorize(
        url,
        () => new GoogleError(400, "invalid_request", "client_id and redirect_uri are required"),
      );
    if (m === "POST" && (path === "/token" || path === "/oauth/token")) return oauth.token(req);
    const session = /^\/upload\/session\/([a-f0-9]+)$/.exec(path);
    if (session && m === "PUT") {
      authed(req);
      const s = state.sessions.get(session[1]);
      if (!s || s.done) throw new GoogleError(404, "notFound", "The upload session was not found.");
      const bytes = new Uint8Array(await req.arrayBuffer());
      if (bytes.length !== s.length)
        throw new GoogleError(400, "invalidContentLength", `Expected ${s.length} bytes, got ${bytes.length}.`);
      s.done = true;
      const mp4 = !breach(inspectMedia(bytes), VIDEO_RULE);
      const v: Video = {
        id: randomBytes(8).toString("base64url").slice(0, 11),
        title: s.snippet.title,
        description: s.snippet.description,
        // An unaudited project's upload is private, whatever was asked.
        privacy: state.audited ? s.privacy : "private",
        synthetic: s.synthetic,
        size: bytes.length,
        status: mp4 ? "uploaded" : "failed",
        checks: 0,
        createdAt: new Date(),
        views: 0,
        likes: 0,
        comments: 0,
      };
      state.videos.push(v);
      state.emulated.push({
        id: v.id,
        text: `${v.title}\n${v.description}`,
        media: [{ type: "video", contentType: s.type, size: v.size }],
        options: { privacy_status: v.privacy, ai_generated: v.synthetic },
        createdAt: v.createdAt,
      });
      return Response.json(videoItem(v, ["snippet", "status"]));
    }
    authed(req);
    requireScope(req, path.startsWith("/upload/") ? UPLOAD_SCOPES : READ_SCOPES);
    if (m === "POST" && path === "/upload/youtube/v3/thumbnails/set") {
      const v = state.videos.find((x) => x.id === url.searchParams.get("videoId"));
      const set = await thumbnailOf(
        req,
        url,
        { exists: !!v, customThumbnails: state.customThumbnails },
        (status, reason, message) => new GoogleError(status, reason, message),
      );
      v!.thumbnail = set;
      const shown = state.emulated.find((p) => p.id === v!.id);
      if (shown) shown.options = { ...shown.options, thumbnail: { content_type: set.contentType, size: set.size } };
      return Response.json({
        kind: "youtube#thumbnailSetResponse",
        items: [{ default: { url: `https://i.ytimg.com/vi/${v!.id}/default.jpg`, width: 120, height: 90 } }],
      });
    }
    if (m === "POST" && path === "/upload/youtube/v3/videos") {
      if (url.searchParams.get("uploadType") !== "resumable")
        throw new GoogleError(400, "invalidUploadType", "uploadType must be resumable");
      const length = Number(req.headers.get("x-upload-content-length"));
      const type = req.headers.get("x-upload-content-type") ?? "";
      if (!Number.isInteger(length) || length <= 0 || !type.startsWith("video/"))
        throw new GoogleError(
          400,
          "invalidArgument",
          "X-Upload-Content-Length and a video X-Upload-Content-Type are required.",
        );
      // part names what the write sets: parts of the body it does not name are not written.
      const parts = (url.searchParams.get("part") ?? "").split(",").filter(Boolean);
      if (!parts.length)
        throw new GoogleError(400, "missingRequiredParameter", "No filter selected. Expected one of: part");
      const unknownPart = parts.find((p) => !VIDEO_PARTS.includes(p));
      if (unknownPart) throw new GoogleError(400, "unexpectedPart", `'${unknownPart}'`);
      const sent = (await req.json().catch(() => null)) as VideoResource | null;
      refuseUnknown(sent, VIDEO_FIELDS.video, "resource");
      refuseUnknown(sent?.snippet, VIDEO_FIELDS.snippet, "resource.snippet");
      refuseUnknown(sent?.status, VIDEO_FIELDS.status, "resource.status");
      const b = {
        snippet: parts.includes("snippet") ? sent?.snippet : undefined,
        status: parts.includes("status") ? sent?.status : undefined,
      };
      const title = b.snippet?.title ?? "";
      if (!title || title.length > 100 || /[<>]/.test(title))
        throw new GoogleError(400, "invalidTitle", "The request metadata specifies an invalid video title.");
      const description = b.snippet?.description ?? "";
      if (Buffer.byteLength(description, "utf8") > 5000 || /[<>]/.test(description))
        throw new GoogleError(
          400,
          "invalidDescription",
          "The request metadata specifies an invalid video description.",
        );
      const privacy = b.status?.privacyStatus ?? "public";
      if (!PRIVACY.includes(privacy)) throw new GoogleError(400, "invalidVideoMetadata", "privacyStatus is invalid.");
      const s: Session = {
        id: randomBytes(12).toString("hex"),
        length,
        type,
        snippet: { title, description },
        privacy,
        synthetic: b.status?.containsSyntheticMedia ?? null,
        done: false,
      };
      state.sessions.set(s.id, s);
      return new Response(null, { status: 200, headers: { location: `${base}/upload/session/${s.id}` } });
    }
    if (m === "POST" && path === "/youtube/v3/commentThreads") return insertThread(req, url);
    if (m === "GET" && path === "/youtube/v3/commentThreads") return listThreads(url);
    if (m === "GET" && path === "/youtube/v3/channels") {
      if (url.searchParams.get("mine") !== "true")
        throw new GoogleError(400, "missingRequiredParameter", "mine=true is required here.");
      const parts = (url.searchParams.get("part") ?? "").split(",");
      if (!state.hasChannel) return Response.json({ kind: "youtube#channelListResponse", items: [] });
      return Response.json({
        kind: "youtube#channelListResponse",
        items: [
          {
            kind: "youtube#channel",
            id: channel.id,
            ...(parts.includes("snippet") && {
              snippet: {
                title: channel.title,
                customUrl: channel.customUrl,
                thumbnails: { default: { url: "https://yt3.ggpht.com/sandbox" } },
              },
            }),
            ...(parts.includes("contentDetails") && {
              contentDetails: { relatedPlaylists: { uploads: `UU${channel.id.slice(2)}` } },
            }),
            ...(parts.includes("statistics") && {
              statistics: {
                viewCount: "0",
                subscriberCount: String(followers),
                hiddenSubscriberCount: false,
                videoCount: String(state.videos.length),
              },
            }),
          },
        ],
      } satisfies ChannelListResponse);
    }
    if (m === "GET" && path === "/youtube/v3/videos") {
      const ids = (url.searchParams.get("id") ?? "").split(",").filter(Boolean);
      const parts = (url.searchParams.get("part") ?? "").split(",");
      const items = state.videos.filter((v) => ids.includes(v.id));
      // Processing moves on with the status checks that follow an upload.
      for (const v of items)
        if (parts.includes("status") && v.status === "uploaded" && ++v.checks >= 2) v.status = "processed";
      return Response.json({
        kind: "youtube#videoListResponse",
        items: items.map((v) => videoItem(v, parts)),
      } satisfies VideoListResponse);
    }
    if (m === "GET" && path === "/youtube/v3/playlistItems") {
      if (url.searchParams.get("playlistId") !== `UU${channel.id.slice(2)}`)
        throw new GoogleError(404, "playlistNotFound", "The playlist was not found.");
      return Response.json({
        items: [...state.videos]
          .reverse()
          .slice(0, Number(url.searchParams.get("maxResults") ?? 5))
          .map((v) => ({
            snippet: {
              title: v.title,
              description: v.description,
              publishedAt: v.createdAt.toISOString(),
              thumbnails: { high: { url: `https://i.ytimg.com/vi/${v.id}/hqdefault.jpg` } },
            },
            contentDetails: { videoId: v.id, videoPublishedAt: v.createdAt.toISOString() },
          })),
      } satisfies PlaylistItemListResponse);
    }
    throw new GoogleError(404, "notFound", `No route ${m} ${path}`);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return Response.json(body(429, "rateLimitExceeded", "Too many requests."), {
        status: 429,
        headers: { "retry-after": String(f.retryAfterSeconds ?? 60) },
      });
    if (f.kind === "server_error") return Response.json(body(503, "backendError", "Backend Error"), { status: 503 });
    if (f.kind === "forbidden")
      return Response.json(body(403, "insufficientPermissions", "Request had insufficient authentication scopes."), {
        status: 403,
      });
    if (f.kind === "auth_expired") {
      oauth.expireAll();
      return Response.json(body(401, "authError", "Request had invalid authentication credentials."), { status: 401 });
    }
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "youtube",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path !== "/token" && !path.startsWith("/oauth"),
      // failNext({ on: "comments" }) names the comment calls, as on the other platforms.
      failureNames: (path) => (path === "/youtube/v3/commentThreads" ? [path, "comments"] : [path]),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: GoogleError,
      errorResponse: (e) => Response.json(body(e.status, e.reason, e.message), { status: e.status }),
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
    expireTokens: () => oauth.expireAll(),
    grantOnly: (scopes) => oauth.grantOnly(scopes),
    setChannel(exists) {
      state.hasChannel = exists;
    },
    setAudited(audited) {
      state.audited = audited;
    },
    setCustomThumbnails(allowed) {
      state.customThumbnails = allowed;
    },
  };
}

export default defineEmulator(() => createYouTubeEmulator());
