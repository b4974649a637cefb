/**
 * An emulator of the Pinterest API v5 surface the plugin uses: OAuth (Basic client auth, code and
 * continuous refresh grants), the user account, boards, pins (every body held to Pinterest's published
 * PinCreate schema, contract.ts; image_base64 and multiple_image_base64 decoded and type-checked,
 * image_url, multiple_image_urls 2–5, video_id with a required cover), the scopes each operation lists,
 * video media registration with a signed multipart upload whose fields must all come back,
 * processing over status reads, pin lists and lifetime metrics. Errors are `{code, message}`.
 *
 * Sandbox rule: client "sandbox"/"sandbox", every authorization is the user sandbox_pinner, who has one
 * board, "Crier".
 */
import { breach, inspectMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import { randomBytes } from "node:crypto";
import { Value } from "@sinclair/typebox/value";
import { MediaUploadCreate, PinCreate, SCOPES } from "./contract.ts";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  failingHandler,
  FailurePlan,
  mountBase,
  OAuthServer,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";

const ACCESS_TTL_S = 30 * 86400;

interface Video {
  id: string;
  policy: string;
  uploaded: boolean;
  status: "registered" | "processing" | "succeeded" | "failed";
  reads: number;
}
interface Pin {
  id: string;
  board: string;
  title: string;
  description: string;
  link: string | null;
  kind: "image" | "video" | "carousel";
  count: number;
  createdAt: Date;
  metrics: Record<string, number>;
}

export interface PinterestEmulator extends Emulator {
  engage(id: string, m: Partial<Record<"impression" | "save" | "reaction" | "comment" | "pin_click", number>>): void;
}

// Pinterest's product specs (help.pinterest.com/en/business/article/pinterest-product-specs, checked
// 2026-11-26): images at most 20 MB; video MP4, MOV or M4V, H.264 or H.265, at most 2 GB, 4 seconds to
// 15 minutes, aspect ratio between 1:2 and 1.91:1. A video out of spec ends its media "failed".
const IMAGE_RULE: MediaRule = { maxBytes: 20 * 1024 * 1024 };
const VIDEO_RULE: MediaRule = {
  types: ["video/mp4", "video/quicktime"],
  codecs: ["avc1", "avc3", "hvc1", "hev1"],
  maxBytes: 2 * 1024 * 1024 * 1024,
  minDuration: 4,
  maxDuration: 15 * 60,
  minAspect: 1 / 2,
  maxAspect: 1.91,
};

class PinError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const sniff = (b: Buffer) =>
  b[0] === 0xff && b[1] === 0xd8 ? "image/jpeg" : b.subarray(1, 4).toString("latin1") === "PNG" ? "image/png" : null;

export function createPinterestEmulator(): PinterestEmulator {
  const failures = new FailurePlan();
  const oauth = new OAuthServer({
    clientAuth: "basic",
    accessTtlS: ACCESS_TTL_S,
    refresh: "rotating",
    newToken: (kind) => `${kind === "access" ? "pina" : "pinr"}_${randomBytes(20).toString("hex")}`,
    answer: {
      token_type: "bearer",
      refresh_token_expires_in: 60 * 86400,
      scope: "boards:read,boards:write,pins:read,pins:write,user_accounts:read",
    },
    refuse(why) {
      if (why === "invalid_client") throw new PinError(401, 1, "Invalid client credentials.");
      if (why === "invalid_refresh_token") throw new PinError(400, 1, "Invalid refresh token.");
      if (why === "unsupported_grant_type") throw new PinError(400, 1, "Unsupported grant_type.");
      throw new PinError(400, 1, "Invalid authorization code.");
    },
  });
  const state = resettable(() => ({
    videos: new Map<string, Video>(),
    pins: [] as Pin[],
    emulated: [] as EmulatedPost[],
  }));
  const user = {
    id: "1100000000000000001",
    username: "sandbox_pinner",
    profile_image: "https://i.pinimg.com/sandbox.jpg",
    account_type: "BUSINESS",
  };
  const boards = [{ id: "1100000000000000100", name: "Crier", privacy: "PUBLIC" }];

  function authed(req: Request) {
    if (!oauth.bearer(req)) throw new PinError(401, 2, "Authentication failed.");
  }

  /** The body against Pinterest's published schema: the first error, in the {code, message} Pinterest answers. */
  function conform(schema: Parameters<typeof Value.Check>[0], body: unknown): void {
    const first = Value.Errors(schema, body).First();
    if (first) throw new PinError(400, 1, `Invalid request body: ${first.path || "body"} ${first.message}.`);
  }

  async function createPin(req: Request): Promise<Response> {
    const b = (await req.json().catch(() => null)) as {
      board_id?: string;
      title?: string;
      description?: string;
      link?: string;
      alt_text?: string | null;
      media_source?: Record<string, unknown>;
    } | null;
    conform(PinCreate, b);
    if (!b?.board_id || !boards.some((x) => x.id === b.board_id)) throw new PinError(404, 2001, "Board not found.");
    const title = b.title ?? "";
    const description = b.description ?? "";
    if (title.length > 100) throw new PinError(400, 1, "title must be at most 100 characters.");
    if (description.length > 800) throw new PinError(400, 1, "description must be at most 800 characters.");
    if (b.link && (b.link.length > 2048 || !/^https?:\/\//.test(b.link)))
      throw new PinError(400, 1, "link is invalid.");
    const src = b.media_source ?? {};
    let kind: Pin["kind"];
    let count = 1;
    switch (src.source_type) {
      case "image_base64": {
        const declared = src.content_type;
        if (declared !== "image/jpeg" && declared !== "image/png")
          throw new PinError(400, 1, "content_type must be image/jpeg or image/png.");
        const data = Buffer.from(String(src.data ?? ""), "base64");
        if (sniff(data) !== declared) throw new PinError(400, 1, "The image data does not match its content_type.");
        if (breach(inspectMedia(data), IMAGE_RULE)) throw new PinError(400, 1, "The image is larger than 20 MB.");
        kind = "image";
        break;
      }
      case "image_url":
        if (!/^https?:\/\//.test(String(src.url ?? ""))) throw new PinError(400, 1, "media_source.url is invalid.");
        kind = "image";
        break;
      case "multiple_image_base64": {
        const items = (src.items ?? []) as { content_type?: string; data?: string }[];
        for (const i of items)
          if (sniff(Buffer.from(String(i.data ?? ""), "base64")) !== i.content_type)
            throw new PinError(400, 1, "An image's data does not match its content_type.");
        kind = "carousel";
        count = items.length;
        break;
      }
      case "multiple_image_urls": {
        const items = (src.items ?? []) as { url?: string }[];
        if (items.length < 2 || items.length > 5 || items.some((i) => !/^https?:\/\//.test(i.url ?? "")))
          throw new PinError(400, 1, "multiple_image_urls needs 2 to 5 image URLs.");
        kind = "carousel";
        count = items.length;
        break;
      }
      case "video_id": {
        const v = state.videos.get(String(src.media_id ?? ""));
        if (!v || v.status !== "succeeded") throw new PinError(400, 1, "The video is not uploaded or not processed.");
        if (!src.cover_image_url && src.cover_image_key_frame_time === undefined && !src.cover_image_data) {
          throw new PinError(
            400,
            1,
            "A cover is required: cover_image_url or cover_image_content_type and cover_image_data, or cover_image_key_frame_time.",
          );
        }
        kind = "video";
        break;
      }
      default:
        throw new PinError(400, 1, "media_source.source_type is invalid.");
    }
    const pin: Pin = {
      id: String(1_100_000_000_000_000_000n + BigInt(randomBytes(5).readUIntBE(0, 5))),
      board: b.board_id,
      title,
      description,
      link: b.link ?? null,
      kind,
      count,
      createdAt: new Date(),
      metrics: {},
    };
    state.pins.push(pin);
    state.emulated.push({
      id: pin.id,
      text: `${title}\n${description}`,
      // The pin's alt_text (checked above against PinCreate: at most 500 characters) describes its first file.
      media: Array.from({ length: count }, (_, i) => ({
        type: kind === "video" ? "video" : "image",
        ...(i === 0 && typeof b.alt_text === "string" && { alt: b.alt_text }),
      })),
      options: { board_id: pin.board, source_type: src.source_type },
      createdAt: pin.createdAt,
    });
    return Response.json(pinJson(pin), { status: 201 });
  }

  const pinJson = (p: Pin) => ({
    id: p.id,
    board_id: p.board,
    title: p.title,
    description: p.description,
    link: p.link,
    created_at: p.createdAt.toISOString(),
    media:
      p.kind === "video"
        ? { media_type: "video", cover_image_url: `https://i.pinimg.com/videos/${p.id}.jpg` }
        : {
            media_type: p.kind === "carousel" ? "multiple_images" : "image",
            images: { "1200x": { url: `https://i.pinimg.com/1200x/${p.id}.jpg` } },
          },
  });

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path === "/oauth/authorize")
      return oauth.authorize(url, () => new PinError(400, 1, "client_id and redirect_uri are required."));
    if (m === "POST" && path === "/oauth/token") return oauth.token(req);
    const upload = /^\/upload\/(\d+)$/.exec(path);
    if (m === "POST" && upload) {
      // The storage upload: every signed field must come back, and the file must be a video.
      const v = state.videos.get(upload[1]);
      const form = await req.formData().catch(() => null);
      if (!v || !form || form.get("policy") !== v.policy || form.get("key") !== `videos/${v.id}`)
        return new Response("<Error><Code>AccessDenied</Code></Error>", { status: 403 });
      const file = form.get("file");
      if (!(file instanceof Blob)) return new Response("<Error><Code>InvalidArgument</Code></Error>", { status: 400 });
      v.uploaded = true;
      v.status = breach(inspectMedia(new Uint8Array(await file.arrayBuffer())), VIDEO_RULE) ? "failed" : "processing";
      return new Response(null, { status: 204 });
    }
    authed(req);
    const operation = `${m} ${path.replace(/^\/pins\/\d+$/, "/pins/{pin_id}").replace(/^\/media\/\d+$/, "/media/{media_id}")}`;
    if ((SCOPES[operation] ?? []).some((scope) => !oauth.granted(req, scope)))
      throw new PinError(403, 29, "You are not permitted to access that resource.");
    if (m === "GET" && path === "/user_account")
      return Response.json({ ...user, follower_count: followers, following_count: 0, pin_count: state.pins.length });
    if (m === "GET" && path === "/boards") return Response.json({ items: boards, bookmark: null });
    if (m === "POST" && path === "/media") {
      conform(MediaUploadCreate, await req.json().catch(() => null));
      const v: Video = {
        id: String(5_000_000 + state.videos.size + 1),
        policy: randomBytes(16).toString("base64"),
        uploaded: false,
        status: "registered",
        reads: 0,
      };
      state.videos.set(v.id, v);
      return Response.json(
        {
          media_id: v.id,
          media_type: "video",
          upload_url: `${base}/upload/${v.id}`,
          upload_parameters: {
            key: `videos/${v.id}`,
            policy: v.policy,
            "x-amz-algorithm": "AWS4-HMAC-SHA256",
            "x-amz-signature": randomBytes(16).toString("hex"),
            "Content-Type": "multipart/form-data",
          },
        },
        { status: 201 },
      );
    }
    const media = /^\/media\/(\d+)$/.exec(path);
    if (m === "GET" && media) {
      const v = state.videos.get(media[1]);
      if (!v) throw new PinError(404, 1, "Media not found.");
      if (v.status === "processing" && ++v.reads >= 2) v.status = "succeeded";
      return Response.json({ media_id: v.id, media_type: "video", status: v.status });
    }
    if (m === "POST" && path === "/pins") return createPin(req);
    if (m === "GET" && path === "/pins")
      return Response.json({
        items: [...state.pins]
          .reverse()
          .slice(0, Number(url.searchParams.get("page_size") ?? 25))
          .map(pinJson),
        bookmark: null,
      });
    const one = /^\/pins\/(\d+)$/.exec(path);
    if (m === "GET" && one) {
      const p = state.pins.find((x) => x.id === one[1]);
      if (!p) throw new PinError(404, 50, "Pin not found.");
      const lifetime = {
        impression: 0,
        save: 0,
        pin_click: 0,
        outbound_click: 0,
        reaction: 0,
        comment: 0,
        ...p.metrics,
      };
      return Response.json({
        ...pinJson(p),
        ...(url.searchParams.get("pin_metrics") === "true" && {
          pin_metrics: { "90d": lifetime, lifetime_metrics: lifetime },
        }),
      });
    }
    throw new PinError(404, 1, `No route ${m} ${path}`);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return Response.json(
        { code: 8, message: "You have exceeded your rate limit. Try again later." },
        { status: 429, headers: { "retry-after": String(f.retryAfterSeconds ?? 60) } },
      );
    if (f.kind === "server_error") return Response.json({ code: 3, message: "Service unavailable." }, { status: 503 });
    if (f.kind === "auth_expired")
      return Response.json({ code: 2, message: "Authentication failed." }, { status: 401 });
    return null;
  }

  // The audience every account reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "pinterest",
    state: emulatorState({ state, oauth }),
    sandboxSettings: { CLIENT_ID: "sandbox", CLIENT_SECRET: "sandbox" },
    ...failingHandler({
      failures,
      canFail: (path) => !path.startsWith("/oauth") && !path.startsWith("/upload"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: PinError,
      errorResponse: (e) => Response.json({ code: e.code, message: e.message }, { status: e.status }),
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
    engage(id, m) {
      const p = state.pins.find((x) => x.id === id);
      if (!p) throw new Error(`no pin ${id}`);
      for (const [k, v] of Object.entries(m)) p.metrics[k] = (p.metrics[k] ?? 0) + (v ?? 0);
    },
  };
}

export default defineEmulator(() => createPinterestEmulator());
