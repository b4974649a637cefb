/**
 * An emulator of the Snapchat surface the plugin uses: OAuth (client id and secret in the form; code
 * and refresh grants), the public profile, encrypted media containers (the key and IV are checked by
 * decrypting the finished upload, so a wrong cipher fails), chunk ADD parts of at most 32 MB and
 * FINALIZE, Spotlights (video only, description 160, xx_XX locale) and Stories. Answers use Snap's
 * `{request_status, request_id, display_message, error_code}` envelope.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the profile sandbox.snap.
 */
import { inspectMedia } from "../../src/platform/emulator-media.ts";
import { createDecipheriv, randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  failingHandler,
  FailurePlan,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";

const MB = 1024 * 1024;
const ACCESS_TTL_S = 3600;

interface Media {
  id: string;
  type: "IMAGE" | "VIDEO";
  key: Buffer;
  iv: Buffer;
  parts: Map<number, Buffer>;
  state: "UPLOADING" | "READY" | "INVALID";
}

class SnapError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const envelope = (body: Record<string, unknown>, status = 200) =>
  Response.json({ request_status: "SUCCESS", request_id: randomBytes(8).toString("hex"), ...body }, { status });
const refusal = (status: number, code: string, message: string) =>
  Response.json(
    { request_status: "ERROR", request_id: randomBytes(8).toString("hex"), display_message: message, error_code: code },
    { status },
  );

export function createSnapchatEmulator(): Emulator {
  const failures = new FailurePlan();
  const oauth = new OAuthServer({
    clientAuth: "body",
    accessTtlS: ACCESS_TTL_S,
    refresh: "reissued",
    answer: { token_type: "Bearer", scope: "snapchat-profile-api" },
    refuse: (why) =>
      why === "invalid_client"
        ? Response.json({ error: why }, { status: 401 })
        : Response.json({ error: "invalid_grant" }, { status: 400 }),
  });
  const state = resettable(() => ({ media: new Map<string, Media>(), emulated: [] as EmulatedPost[] }));
  const me = { id: "5a1b2c3d-sandbox-profile", display_name: "Sandbox Snap", snap_user_name: "sandbox.snap" };

  function authed(req: Request) {
    if (!oauth.bearer(req)) throw new SnapError(401, "UNAUTHORIZED", "The access token is invalid or expired.");
  }

  /** The finished upload must decrypt with the container's key and IV to a file of its declared type. */
  function check(m: Media): boolean {
    try {
      const joined = Buffer.concat([...m.parts.entries()].sort(([a], [b]) => a - b).map(([, p]) => p));
      const d = createDecipheriv("aes-256-cbc", m.key, m.iv);
      const full = Buffer.concat([d.update(joined), d.final()]);
      // Only the type is checked: Snap's Public Profile API pages give no media limits of their own.
      const mime = inspectMedia(full).mime ?? "";
      return m.type === "VIDEO"
        ? ["video/mp4", "video/quicktime"].includes(mime)
        : ["image/jpeg", "image/png"].includes(mime);
    } catch {
      return false;
    }
  }

  async function route(req: Request, path: string, url: URL): Promise<Response> {
    const m = req.method;
    if (m === "GET" && (path === "/oauth/authorize" || path === "/login/oauth2/authorize"))
      return oauth.authorize(
        url,
        () => new SnapError(400, "INVALID_REQUEST", "client_id and redirect_uri are required"),
      );
    if (m === "POST" && (path === "/login/oauth2/access_token" || path === "/oauth/token")) return oauth.token(req);
    authed(req);
    if (m === "GET" && path === "/v1/public_profiles/my_profile")
      return envelope({
        public_profile: { ...me, logo_urls: { original_logo_url: "https://cf-st.sc-cdn.net/sandbox.png" } },
      });
    const base = `/v1/public_profiles/${me.id}`;
    if (!path.startsWith(`${base}/`) && path.startsWith("/v1/public_profiles/"))
      throw new SnapError(403, "FORBIDDEN", "This token cannot act for that profile.");
    if (m === "POST" && path === `${base}/media`) {
      const b = (await req.json().catch(() => null)) as {
        type?: string;
        name?: string;
        key?: string;
        iv?: string;
      } | null;
      const key = Buffer.from(b?.key ?? "", "base64");
      const iv = Buffer.from(b?.iv ?? "", "base64");
      // Create Media: type, name, key and iv are all required (developers.snap.com/api/marketing-api/
      // Public-Profile-API/ProfileAssetManagement, "Create Media", checked 2026-11-26).
      if (
        (b?.type !== "IMAGE" && b?.type !== "VIDEO") ||
        typeof b.name !== "string" ||
        b.name === "" ||
        key.length !== 32 ||
        iv.length !== 16
      )
        throw new SnapError(
          400,
          "INVALID_REQUEST",
          "type IMAGE or VIDEO, a name, a 32-byte key and a 16-byte iv (base64) are required",
        );
      const item: Media = { id: crypto.randomUUID(), type: b.type, key, iv, parts: new Map(), state: "UPLOADING" };
      state.media.set(item.id, item);
      return envelope({
        media_id: item.id,
        add_path: `${base}/media/${item.id}/multipart-upload-add`,
        finalize_path: `${base}/media/${item.id}/multipart-upload-finalize`,
      });
    }
    const part = new RegExp(`^${base}/media/([\\w-]+)/multipart-upload-(add|finalize)$`).exec(path);
    if (m === "POST" && part) {
      const item = state.media.get(part[1]);
      if (!item || item.state !== "UPLOADING")
        throw new SnapError(400, "INVALID_MEDIA", "No open upload for this media");
      const form = await req.formData().catch(() => null);
      if (part[2] === "add") {
        const file = form?.get("file");
        const n = Number(form?.get("part_number"));
        if (form?.get("action") !== "ADD" || !(file instanceof Blob) || !Number.isInteger(n) || n < 1)
          throw new SnapError(400, "INVALID_REQUEST", "action ADD, part_number and file are required");
        if (file.size > 32 * MB) throw new SnapError(400, "INVALID_REQUEST", "A part may be at most 32 MB");
        item.parts.set(n, Buffer.from(await file.arrayBuffer()));
        return envelope({});
      }
      if (form?.get("action") !== "FINALIZE")
        throw new SnapError(400, "INVALID_REQUEST", "action FINALIZE is required");
      item.state = check(item) ? "READY" : "INVALID";
      return item.state === "READY" ? envelope({}) : refusal(400, "INVALID_MEDIA", "The media could not be decoded");
    }
    if (m === "POST" && (path === `${base}/spotlights` || path === `${base}/stories`)) {
      const b = (await req.json().catch(() => null)) as {
        media_id?: string;
        description?: string;
        locale?: string;
      } | null;
      const item = state.media.get(b?.media_id ?? "");
      if (!item || item.state !== "READY") return refusal(400, "MEDIA_PROCESSING", "The media is not ready yet");
      const spotlight = path.endsWith("/spotlights");
      if (spotlight) {
        if (item.type !== "VIDEO") throw new SnapError(400, "INVALID_MEDIA_TYPE", "Spotlight takes videos only");
        if ([...(b?.description ?? "")].length > 160)
          throw new SnapError(400, "INVALID_REQUEST", "description is longer than 160");
        if (b?.locale && !/^[a-z]{2}_[A-Z]{2}$/.test(b.locale))
          throw new SnapError(400, "INVALID_REQUEST", "locale must look like en_US");
      }
      const id = crypto.randomUUID();
      state.emulated.push({
        id,
        text: spotlight ? (b?.description ?? "") : "",
        media: [{ type: item.type === "VIDEO" ? "video" : "image" }],
        options: {
          placement: spotlight ? "spotlight" : "public_story",
          ...(spotlight && { locale: b?.locale ?? "en_US" }),
        },
        createdAt: new Date(),
      });
      return envelope(spotlight ? { spotlight: { id, status: "SUBMITTED" } } : { story: { id } });
    }
    throw new SnapError(404, "NOT_FOUND", `No route ${m} ${path}`);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return new Response(
        JSON.stringify({ request_status: "ERROR", display_message: "Too many requests", error_code: "RATE_LIMITED" }),
        {
          status: 429,
          headers: { "content-type": "application/json", "retry-after": String(f.retryAfterSeconds ?? 60) },
        },
      );
    if (f.kind === "server_error") return refusal(500, "INTERNAL_ERROR", "Internal error");
    if (f.kind === "auth_expired") return refusal(401, "UNAUTHORIZED", "The access token is invalid or expired.");
    return null;
  }

  return {
    platform: "snapchat",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/v1/"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url)),
      error: SnapError,
      errorResponse: (e) => refusal(e.status, e.code, e.message),
    }),
    posts: () => [...state.emulated],
    reset() {
      failures.clear();
      oauth.reset();
      state.reset();
    },
  };
}

export default defineEmulator(() => createSnapchatEmulator());
