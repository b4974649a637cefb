/**
 * An emulator of the Vimeo API 3.4 surface the plugin uses: OAuth (authorize, code exchange with client
 * Basic auth, a token answer carrying the user; tokens do not expire), video creation with a tus upload
 * link, tus PATCH/HEAD with offsets, transcoding that completes over status checks, the user's videos,
 * stats, and deletion; creating needs the upload scope and deleting the delete scope. Errors are `{error, developer_message, error_code}`.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user "Sandbox Vimeo".
 */
import { inspectMedia } from "../../src/platform/emulator-media.ts";
import { randomBytes } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { ListVideosQuery, UploadVideo } from "./contract.ts";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";

const TITLE_MAX = 128;
const VIEWS = ["anybody", "contacts", "disable", "nobody", "password", "unlisted", "users"];

interface Video {
  id: string;
  owner: string;
  name: string;
  description: string;
  view: string;
  size: number;
  bytes: Uint8Array[];
  offset: number;
  transcode: "in_progress" | "complete" | "error";
  checks: number;
  createdAt: Date;
  plays: number;
  likes: number;
  comments: number;
  uploadToken: string;
}

export interface VimeoEmulator extends Emulator {
  engage(id: string, counts: { plays?: number; likes?: number; comments?: number }): void;
  /** Makes the next videos fail to upload because the weekly quota is used up. */
  exhaustQuota(): void;
}

class VimeoError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

/**
 * The scope each request needs, as Vimeo's OpenAPI description secures it (github.com/vimeo/openapi,
 * api.yaml: upload_video_alt1 `oauth2: [upload]`, delete_video `oauth2: [delete]`; checked 2026-11-26).
 * Without it Vimeo answers 403 `Your access token does not have the "<scope>" scope`.
 */
const SCOPE_OF: Record<string, string> = { "POST /me/videos": "upload", "DELETE /videos": "delete" };

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { "content-type": "application/vnd.vimeo.video+json", ...headers } });

export function createVimeoEmulator(): VimeoEmulator {
  const failures = new FailurePlan();
  const user = {
    uri: "/users/200000001",
    name: "Sandbox Vimeo",
    link: "https://vimeo.com/user200000001",
    pictures: { base_link: "https://i.vimeocdn.com/portrait/sandbox" },
  };
  const oauth = new OAuthServer({
    clientAuth: "basic",
    newToken: () => randomBytes(16).toString("hex"),
    answer: { token_type: "bearer", scope: "public private upload delete stats", user },
    refuse(why) {
      if (why === "invalid_client") throw new VimeoError(401, "Your client credentials are invalid.", 8001);
      if (why === "unsupported_grant_type") throw new VimeoError(400, "grant_type must be authorization_code", 2204);
      throw new VimeoError(400, "The authorization code is invalid or was already used.", 2207);
    },
  });
  const state = resettable(() => ({
    videos: new Map<string, Video>(),
    emulated: [] as EmulatedPost[],
    quotaLeft: Infinity,
  }));

  function authed(req: Request): string {
    if (!oauth.bearer(req)) throw new VimeoError(401, "You must provide a valid authenticated access token.", 8003);
    return user.uri;
  }

  const videoJson = (v: Video, base: string) => ({
    uri: `/videos/${v.id}`,
    name: v.name,
    description: v.description,
    link:
      v.view === "unlisted" ? `https://vimeo.com/${v.id}/${v.uploadToken.slice(0, 10)}` : `https://vimeo.com/${v.id}`,
    created_time: v.createdAt.toISOString(),
    privacy: { view: v.view },
    upload: {
      approach: "tus",
      size: v.size,
      status: v.offset < v.size ? "in_progress" : "complete",
      upload_link: `${base}/upload/${v.uploadToken}`,
    },
    transcode: { status: v.offset < v.size ? "in_progress" : v.transcode },
    pictures: { base_link: `https://i.vimeocdn.com/video/${v.id}` },
    stats: { plays: v.plays },
    metadata: { connections: { likes: { total: v.likes }, comments: { total: v.comments } } },
  });

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return oauth.authorize(url, () => new VimeoError(400, "client_id and redirect_uri are required", 2200));
    if (m === "POST" && (path === "/oauth/access_token" || path === "/oauth/token")) return oauth.token(req);
    const upload = /^\/upload\/([a-f0-9]+)$/.exec(path);
    if (upload) {
      // tus: the upload link is its own credential, as Vimeo's are.
      const v = [...state.videos.values()].find((x) => x.uploadToken === upload[1]);
      if (!v) return new Response("not found", { status: 404 });
      const tus = { "tus-resumable": "1.0.0", "upload-offset": String(v.offset), "upload-length": String(v.size) };
      if (m === "HEAD") return new Response(null, { status: 200, headers: tus });
      if (m !== "PATCH") return new Response(null, { status: 405 });
      if (req.headers.get("tus-resumable") !== "1.0.0")
        return new Response("Tus-Resumable 1.0.0 required", { status: 412 });
      if (req.headers.get("content-type") !== "application/offset+octet-stream")
        return new Response("wrong content type", { status: 415 });
      if (Number(req.headers.get("upload-offset")) !== v.offset)
        return new Response("offset mismatch", { status: 409, headers: tus });
      const chunk = new Uint8Array(await req.arrayBuffer());
      if (v.offset + chunk.length > v.size) return new Response("more bytes than the declared size", { status: 413 });
      v.bytes.push(chunk);
      v.offset += chunk.length;
      if (v.offset === v.size) {
        // Vimeo transcodes any common video container (MP4, MOV, WebM, MKV, …: vimeo.com/help, "Video
        // and audio compression guidelines", checked 2026-11-26); anything else ends in error.
        const seen = inspectMedia(Buffer.concat(v.bytes.filter((b) => b instanceof Uint8Array)));
        v.transcode = seen.mime?.startsWith("video/") ? "in_progress" : "error";
      }
      return new Response(null, { status: 204, headers: { ...tus, "upload-offset": String(v.offset) } });
    }
    const owner = authed(req);
    const needed = SCOPE_OF[`${m} ${path.replace(/\/\d+$/, "")}`];
    if (needed && !oauth.granted(req, needed))
      throw new VimeoError(403, `Your access token does not have the "${needed}" scope`);
    if (m === "POST" && path === "/me/videos") {
      const b = (await req.json().catch(() => null)) as {
        upload?: { approach?: string; size?: string | number };
        name?: string;
        description?: string;
        privacy?: { view?: string };
      } | null;
      // Vimeo's published schema first (2204: "The request contains invalid body parameters").
      const invalid = Value.Errors(UploadVideo, b).First();
      if (invalid) throw new VimeoError(400, `Invalid body parameter ${invalid.path}: ${invalid.message}`, 2204);
      const size = Number(b?.upload?.size);
      if (!b || b.upload?.approach !== "tus" || !Number.isInteger(size) || size <= 0)
        throw new VimeoError(400, "upload.approach must be tus with a size", 2204);
      if (b.name !== undefined && (typeof b.name !== "string" || b.name.length > TITLE_MAX))
        throw new VimeoError(400, `name must be at most ${TITLE_MAX} characters`, 2204);
      const view = b.privacy?.view ?? "anybody";
      if (!VIEWS.includes(view)) throw new VimeoError(400, "privacy.view is not valid", 2204);
      if (state.quotaLeft <= 0) throw new VimeoError(403, "You have reached your weekly upload limit.", 4102);
      state.quotaLeft -= 1;
      const v: Video = {
        id: String(900000000 + state.videos.size + 1),
        owner,
        name: b.name ?? "Untitled",
        description: b.description ?? "",
        view,
        size,
        bytes: [],
        offset: 0,
        transcode: "in_progress",
        checks: 0,
        createdAt: new Date(),
        plays: 0,
        likes: 0,
        comments: 0,
        uploadToken: randomBytes(12).toString("hex"),
      };
      state.videos.set(v.id, v);
      state.emulated.push({
        id: v.id,
        text: `${v.name}\n${v.description}`,
        media: [{ type: "video", size }],
        options: { privacy_view: view },
        createdAt: v.createdAt,
      });
      return json(videoJson(v, base), 201);
    }
    const one = /^\/videos\/(\d+)$/.exec(path);
    if (one) {
      const v = state.videos.get(one[1]);
      if (!v || v.owner !== owner) throw new VimeoError(404, "The requested video couldn't be found.", 5000);
      if (m === "DELETE") {
        state.videos.delete(v.id);
        state.emulated = state.emulated.filter((p) => p.id !== v.id);
        return new Response(null, { status: 204 });
      }
      if (m === "GET") {
        // Transcoding finishes over the status checks that follow a complete upload.
        if (v.offset === v.size && v.transcode === "in_progress" && ++v.checks >= 2) v.transcode = "complete";
        return json(videoJson(v, base));
      }
    }
    if (m === "GET" && path === "/me")
      return json({
        uri: `/users/${owner}`,
        metadata: { connections: { followers: { uri: `/users/${owner}/followers`, total: followers } } },
      });
    if (m === "GET" && path === "/me/videos") {
      const invalid = Value.Errors(ListVideosQuery, Object.fromEntries(url.searchParams)).First();
      if (invalid) throw new VimeoError(400, `Invalid parameter ${invalid.path}: ${invalid.message}`, 2204);
      const list = [...state.videos.values()]
        .filter((v) => v.owner === owner)
        .reverse()
        .slice(0, Number(url.searchParams.get("per_page") ?? 25));
      return json({ total: list.length, data: list.map((v) => videoJson(v, base)) });
    }
    throw new VimeoError(404, `No route ${m} ${path}`, 5000);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return json({ error: "Too many API requests. Wait a moment and try again.", error_code: 9000 }, 429, {
        "retry-after": String(f.retryAfterSeconds ?? 60),
        "x-ratelimit-remaining": "0",
      });
    if (f.kind === "server_error")
      return json({ error: "Something strange occurred. Please try again.", error_code: 5001 }, 500);
    if (f.kind === "auth_expired")
      return json({ error: "You must provide a valid authenticated access token.", error_code: 8003 }, 401);
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "vimeo",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => !path.startsWith("/oauth"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: VimeoError,
      errorResponse: (e) =>
        json(
          { error: e.message, developer_message: e.message, ...(e.code !== undefined && { error_code: e.code }) },
          e.status,
        ),
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
      const v = state.videos.get(id);
      if (!v) throw new Error(`no video ${id}`);
      addCounts(v, counts);
    },
    exhaustQuota() {
      state.quotaLeft = 0;
    },
  };
}

export default defineEmulator(() => createVimeoEmulator());
