/**
 * An emulator of the Neynar v2 endpoints the Farcaster plugin calls: managed signers (create, signed key
 * request checked against the app's custody address by EIP-712 recovery, approval, lookup), users,
 * casts (byte limit, embeds, parents, channel, idempotency key), the user's feed and cast lookups with
 * reaction counts. Errors use Neynar's `{code, message}` shape. Each cast is also made into the CastAdd
 * message Neynar would submit and checked by the protocol's own validator (./emulator-protocol.ts).
 *
 * Sandbox rule: the approval link is a page of the emulator that approves at once, as the user "sandbox
 * caster" (one user, so connecting again finds the same account).
 */
import { randomBytes } from "node:crypto";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import {
  addCounts,
  failingHandler,
  FailurePlan,
  mountBase,
  resettable,
  emulatorState,
} from "../../src/platform/emulator-kit.ts";
import { castAddMessage, ed25519KeyPair, farcasterCore, signedKeyRequestTypedData } from "./emulator-protocol.ts";

/** The settings sandbox profiles run the plugin with. The mnemonic is the well-known public test one. */
export const SANDBOX_SETTINGS = {
  API_KEY: "NEYNAR_SANDBOX_API_KEY",
  APP_FID: "9999",
  APP_MNEMONIC: "test test test test test test test test test test test junk",
};

const MAX_TEXT_BYTES = 1024;
const MAX_EMBEDS = 2;
const MAX_URL_BYTES = 256;
const HASH = /^0x[0-9a-f]{40}$/;

interface Signer {
  uuid: string;
  publicKey: `0x${string}`;
  /** The Ed25519 seed Neynar keeps for a managed signer and signs casts with. */
  privateKey: string;
  status: "generated" | "pending_approval" | "approved" | "revoked";
  fid?: number;
}

interface User {
  fid: number;
  username: string;
  displayName: string;
  followers: number;
}

interface Cast {
  hash: string;
  fid: number;
  text: string;
  embeds: ({ url: string } | { cast_id: { hash: string; fid: number } })[];
  parentHash: string | null;
  channelId: string | null;
  timestamp: Date;
  likes: number;
  recasts: number;
  replies: number;
}

export interface FarcasterEmulator extends Emulator {
  /** Registers an app (its FID and the custody mnemonic whose key signs its requests). */
  registerApp(fid: number, mnemonic: string): void;
  /** The user approvals land on (default: the sandbox caster). */
  approveAs(user: { fid: number; username: string }): void;
  revokeSigner(uuid: string): void;
  /** The encoded CastAdd message of a cast (protobuf bytes), as the network holds it. */
  message(hash: string): Uint8Array | undefined;
  engage(hash: string, counts: { likes?: number; recasts?: number }): void;
}

class NeynarError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });

export function createFarcasterEmulator(): FarcasterEmulator {
  const failures = new FailurePlan();
  const state = resettable(() => ({
    apps: new Map<number, string>(),
    signers: new Map<string, Signer>(),
    users: new Map<number, User>(),
    casts: [] as Cast[],
    idem: new Map<string, Cast>(),
    messages: new Map<string, Uint8Array>(),
    emulated: [] as EmulatedPost[],
  }));
  /** App FID → custody mnemonic; its address is derived when a signature is checked (viem loads lazily). */
  let approver = { fid: 10001, username: "sandbox-caster" };
  const keys = new Set([SANDBOX_SETTINGS.API_KEY]);

  // Loading the protocol package takes most of a second: start now rather than on the first cast.
  void farcasterCore().catch(() => {});
  const registerApp = (fid: number, mnemonic: string) => void state.apps.set(fid, mnemonic);
  registerApp(Number(SANDBOX_SETTINGS.APP_FID), SANDBOX_SETTINGS.APP_MNEMONIC);

  function user(fid: number, username = `user${fid}`): User {
    let u = state.users.get(fid);
    if (!u) {
      u = { fid, username, displayName: username, followers: 0 };
      state.users.set(fid, u);
    }
    return u;
  }

  function checkKey(req: Request) {
    const key = req.headers.get("x-api-key");
    if (!key || !keys.has(key)) throw new NeynarError(401, "Unauthorized", "Invalid or missing API key");
  }

  async function body(req: Request): Promise<Record<string, unknown>> {
    if (!(req.headers.get("content-type") ?? "").includes("application/json"))
      throw new NeynarError(400, "InvalidContentType", "Content-Type must be application/json");
    try {
      const b = await req.json();
      if (!b || typeof b !== "object") throw new Error();
      return b as Record<string, unknown>;
    } catch {
      throw new NeynarError(400, "InvalidJson", "Request body is not valid JSON");
    }
  }

  const signerJson = (s: Signer, base?: string) => ({
    signer_uuid: s.uuid,
    public_key: s.publicKey,
    status: s.status,
    ...(s.fid !== undefined && { fid: s.fid }),
    ...(base && s.status === "pending_approval" && { signer_approval_url: `${base}/approve/${s.uuid}` }),
  });

  const castJson = (c: Cast) => {
    const u = user(c.fid);
    return {
      hash: c.hash,
      author: { fid: c.fid, username: u.username, display_name: u.displayName },
      text: c.text,
      timestamp: c.timestamp.toISOString(),
      parent_hash: c.parentHash,
      channel: c.channelId ? { id: c.channelId } : null,
      embeds: c.embeds,
      reactions: { likes_count: c.likes, recasts_count: c.recasts },
      replies: { count: c.replies },
    };
  };

  async function createCast(req: Request): Promise<Response> {
    const b = await body(req);
    const signer = state.signers.get(String(b.signer_uuid ?? ""));
    if (!signer) throw new NeynarError(404, "NotFound", "Signer not found");
    if (signer.status !== "approved" || signer.fid === undefined)
      throw new NeynarError(403, "Forbidden", `Signer is ${signer.status}, not approved`);
    if (typeof b.text !== "string") throw new NeynarError(400, "InvalidField", "text must be a string");
    if (Buffer.byteLength(b.text, "utf8") > MAX_TEXT_BYTES)
      throw new NeynarError(400, "InvalidField", `text must be at most ${MAX_TEXT_BYTES} bytes`);
    const embeds = (b.embeds ?? []) as unknown[];
    if (!Array.isArray(embeds) || embeds.length > MAX_EMBEDS)
      throw new NeynarError(400, "InvalidField", `at most ${MAX_EMBEDS} embeds`);
    for (const e of embeds) {
      const url = (e as { url?: unknown })?.url;
      if (typeof url !== "string" || !/^https?:\/\//.test(url) || Buffer.byteLength(url) > MAX_URL_BYTES) {
        throw new NeynarError(
          400,
          "InvalidField",
          `embeds[].url must be an http(s) URL of at most ${MAX_URL_BYTES} bytes`,
        );
      }
    }
    if (
      b.parent !== undefined &&
      (typeof b.parent !== "string" || !(HASH.test(b.parent) || /^https?:\/\//.test(b.parent)))
    ) {
      throw new NeynarError(400, "InvalidField", "parent must be a cast hash or a channel URL");
    }
    if (b.idem !== undefined && (typeof b.idem !== "string" || b.idem.length > 16))
      throw new NeynarError(400, "InvalidField", "idem must be a string of at most 16 characters");
    const idemKey = b.idem ? `${signer.fid}:${b.idem}` : null;
    const earlier = idemKey ? state.idem.get(idemKey) : undefined;
    if (earlier)
      return json({ success: true, cast: { hash: earlier.hash, author: { fid: earlier.fid }, text: earlier.text } });
    const parentHash = typeof b.parent === "string" && HASH.test(b.parent) ? b.parent : null;
    const parentCast = parentHash ? state.casts.find((c) => c.hash === parentHash) : undefined;
    const timestamp = new Date();
    // A sandbox signer saved before signers had keys cannot sign: its casts skip the protocol check.
    const message = signer.privateKey
      ? await castAddMessage({
          fid: signer.fid,
          privateKey: signer.privateKey,
          text: b.text,
          embeds: embeds.map((e) => (e as { url: string }).url),
          parent: parentHash
            ? { fid: Number(b.parent_author_fid) || parentCast?.fid || signer.fid, hash: parentHash }
            : typeof b.parent === "string"
              ? { url: b.parent }
              : undefined,
          timestamp,
        })
      : null;
    if (message && !message.ok)
      throw new NeynarError(400, "InvalidField", `The cast is not a valid Farcaster message: ${message.reason}`);
    const cast: Cast = {
      hash: message?.hash ?? `0x${randomBytes(20).toString("hex")}`,
      fid: signer.fid,
      text: b.text,
      embeds: embeds as Cast["embeds"],
      parentHash,
      channelId: typeof b.channel_id === "string" ? b.channel_id : null,
      timestamp,
      likes: 0,
      recasts: 0,
      replies: 0,
    };
    if (parentCast) parentCast.replies += 1;
    state.casts.push(cast);
    if (message) state.messages.set(cast.hash, message.bytes);
    if (idemKey) state.idem.set(idemKey, cast);
    state.emulated.push({
      id: cast.hash,
      text: cast.text,
      media: embeds.map((e) => {
        const url = (e as { url: string }).url;
        return { type: /\.(mp4|mov|webm|m3u8)(\?|$)/i.test(url) ? "video" : "image" };
      }),
      replyTo: parentHash,
      options: cast.channelId ? { channel_id: cast.channelId } : {},
      createdAt: cast.timestamp,
    });
    return json({ success: true, cast: { hash: cast.hash, author: { fid: cast.fid }, text: cast.text } });
  }

  async function route(req: Request, path: string, url: URL, base: string): Promise<Response> {
    const m = req.method;
    if (m === "GET" && path.startsWith("/approve/")) {
      const s = state.signers.get(path.slice("/approve/".length));
      if (!s || s.status !== "pending_approval")
        return new Response("This approval link is not valid.", {
          status: 404,
          headers: { "content-type": "text/plain" },
        });
      s.status = "approved";
      s.fid = user(approver.fid, approver.username).fid;
      // Plain text: the page is served on Crier's own origin, where only Crier's pages are HTML.
      return new Response("Approved in the Farcaster sandbox. Return to Crier and press the button.", {
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    }
    checkKey(req);
    if (m === "POST" && path === "/v2/farcaster/signer") {
      const s: Signer = { uuid: crypto.randomUUID(), ...ed25519KeyPair(), status: "generated" };
      state.signers.set(s.uuid, s);
      return json(signerJson(s));
    }
    if (m === "POST" && path === "/v2/farcaster/signer/signed_key") {
      const b = await body(req);
      const s = state.signers.get(String(b.signer_uuid ?? ""));
      if (!s) throw new NeynarError(404, "NotFound", "Signer not found");
      if (s.status !== "generated") throw new NeynarError(400, "InvalidState", `Signer is already ${s.status}`);
      const appFid = Number(b.app_fid);
      const mnemonic = state.apps.get(appFid);
      if (!mnemonic) throw new NeynarError(400, "InvalidField", `app_fid ${b.app_fid} is not a registered app`);
      const [{ recoverTypedDataAddress }, { mnemonicToAccount }] = await Promise.all([
        import("viem"),
        import("viem/accounts"),
      ]);
      const custody = mnemonicToAccount(mnemonic).address.toLowerCase();
      const deadline = Number(b.deadline);
      if (!Number.isInteger(deadline) || deadline * 1000 <= Date.now())
        throw new NeynarError(400, "InvalidField", "deadline must be a future unix time in seconds");
      let recovered: string;
      try {
        recovered = await recoverTypedDataAddress({
          ...(await signedKeyRequestTypedData()),
          primaryType: "SignedKeyRequest",
          message: { requestFid: BigInt(appFid), key: s.publicKey, deadline: BigInt(deadline) },
          signature: String(b.signature) as `0x${string}`,
        });
      } catch {
        throw new NeynarError(400, "InvalidSignature", "signature is not a valid EIP-712 signature");
      }
      if (recovered.toLowerCase() !== custody)
        throw new NeynarError(400, "InvalidSignature", "signature was not made by the app's custody address");
      s.status = "pending_approval";
      return json(signerJson(s, base));
    }
    if (m === "GET" && path === "/v2/farcaster/signer") {
      const s = state.signers.get(url.searchParams.get("signer_uuid") ?? "");
      if (!s) throw new NeynarError(404, "NotFound", "Signer not found");
      return json(signerJson(s, base));
    }
    if (m === "GET" && path === "/v2/farcaster/user/bulk") {
      const fids = (url.searchParams.get("fids") ?? "")
        .split(",")
        .map(Number)
        .filter((n) => Number.isInteger(n) && n > 0);
      if (fids.length === 0) throw new NeynarError(400, "InvalidField", "fids is required");
      return json({
        users: fids
          .filter((f) => state.users.has(f))
          .map((f) => {
            const u = state.users.get(f)!;
            return {
              fid: u.fid,
              username: u.username,
              display_name: u.displayName,
              pfp_url: null,
              follower_count: u.followers,
            };
          }),
      });
    }
    if (m === "POST" && path === "/v2/farcaster/cast") return createCast(req);
    if (m === "GET" && path === "/v2/farcaster/feed/user/casts") {
      const fid = Number(url.searchParams.get("fid"));
      const limit = Math.min(150, Number(url.searchParams.get("limit") ?? 25));
      const withReplies = url.searchParams.get("include_replies") !== "false";
      const list = state.casts
        .filter((c) => c.fid === fid && (withReplies || !c.parentHash))
        .slice()
        .reverse()
        .slice(0, limit);
      return json({ casts: list.map(castJson), next: { cursor: null } });
    }
    if (m === "GET" && path === "/v2/farcaster/casts") {
      const hashes = (url.searchParams.get("casts") ?? "").split(",").filter(Boolean);
      return json({ result: { casts: state.casts.filter((c) => hashes.includes(c.hash)).map(castJson) } });
    }
    throw new NeynarError(404, "NotFound", `No route ${m} ${path}`);
  }

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit")
      return json({ code: "RateLimitExceeded", message: "Too many requests" }, 429, {
        "retry-after": String(f.retryAfterSeconds ?? 60),
      });
    if (f.kind === "server_error") return json({ code: "InternalServerError", message: "Internal server error" }, 500);
    if (f.kind === "auth_expired") return json({ code: "Forbidden", message: "Signer has been revoked" }, 403);
    return null;
  }

  return {
    platform: "farcaster",
    state: emulatorState({ state }),
    sandboxSettings: SANDBOX_SETTINGS,
    // The approval link is opened by the user's browser, not by the plugin.
    browserPaths: ["/approve/"],
    ...failingHandler({
      failures,
      canFail: (path) => path.startsWith("/v2/"),
      failureResponse,
      route: (req, path) => route(req, path, new URL(req.url), mountBase(req, path)),
      error: NeynarError,
      errorResponse: (e) => json({ code: e.code, message: e.message }, e.status),
    }),
    posts: () => [...state.emulated],
    setFollowers(n) {
      for (const u of state.users.values()) u.followers = n;
    },
    reset() {
      failures.clear();
      state.reset();
      registerApp(Number(SANDBOX_SETTINGS.APP_FID), SANDBOX_SETTINGS.APP_MNEMONIC);
    },
    registerApp,
    approveAs(u) {
      approver = u;
    },
    revokeSigner(uuid) {
      const s = state.signers.get(uuid);
      if (s) s.status = "revoked";
    },
    message: (hash) => state.messages.get(hash),
    engage(hash, counts) {
      const c = state.casts.find((x) => x.hash === hash);
      if (!c) throw new Error(`no cast ${hash}`);
      addCounts(c, counts);
    },
  };
}

export default defineEmulator(() => createFarcasterEmulator());
