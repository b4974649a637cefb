/**
 * Farcaster casts through Neynar managed signers. Connecting creates a signer, signs its key request
 * with the app's custody key (EIP-712 SignedKeyRequest) and shows the user Neynar's approval link; once
 * approved in the Farcaster app the signer posts for the user. Media are URL embeds: the protocol has no
 * upload, so clients fetch the media from its public URL.
 */
import { createHash } from "node:crypto";
import { t } from "elysia";
import {
  ConnectError,
  definePlugin,
  type ConnectContext,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type AccountStats,
  type PostMetrics,
  type ProviderHttp,
  type PublishJob,
  type RecentMedia,
  type RecentPost,
} from "../../src/platform/sdk.ts";
import { GB, MB } from "../../src/platform/limits.ts";

/** Farcaster's key request validator on OP Mainnet: the domain the app's custody key signs under. */
export const SIGNED_KEY_REQUEST_DOMAIN = {
  name: "Farcaster SignedKeyRequestValidator",
  version: "1",
  chainId: 10,
  verifyingContract: "0x00000000FC700472606ED4fA22623Acf62c60553",
} as const;

export const SIGNED_KEY_REQUEST_TYPES = {
  SignedKeyRequest: [
    { name: "requestFid", type: "uint256" },
    { name: "key", type: "bytes" },
    { name: "deadline", type: "uint256" },
  ],
} as const;

const MAX_BYTES = 1024;
const MAX_EMBEDS = 2;
/** How long the user has to approve a signer request. */
const APPROVAL_WINDOW_S = 24 * 3600;

const castUrl = (hash: string) => `https://farcaster.xyz/~/conversations/${hash}`;

const apiKey = (settings: Record<string, string | undefined>) =>
  settings.API_KEY ?? settings.CRIER_FARCASTER_API_KEY ?? "";

function call<T>(
  http: ProviderHttp,
  settings: Record<string, string | undefined>,
  method: string,
  path: string,
  opts: Parameters<ProviderHttp["request"]>[2] = {},
) {
  return http.request<T>(method, path, { ...opts, headers: { "x-api-key": apiKey(settings), ...opts.headers } });
}

interface Signer {
  signer_uuid: string;
  public_key: `0x${string}`;
  status: "generated" | "pending_approval" | "approved" | "revoked";
  signer_approval_url?: string;
  fid?: number;
}

async function prepare(c: ConnectContext) {
  const mnemonic = c.settings.APP_MNEMONIC ?? "";
  const appFid = Number(c.settings.APP_FID);
  if (!Number.isInteger(appFid) || appFid <= 0)
    throw new ConnectError(
      "This server's CRIER_FARCASTER_APP_FID is not a Farcaster id; the administrator must fix it.",
    );
  // viem is loaded on first use: it is only needed here, and loading it costs every process start.
  const { mnemonicToAccount } = await import("viem/accounts");
  let account: ReturnType<typeof mnemonicToAccount>;
  try {
    account = mnemonicToAccount(mnemonic);
  } catch {
    throw new ConnectError(
      "This server's CRIER_FARCASTER_APP_MNEMONIC is not a valid mnemonic; the administrator must fix it.",
    );
  }
  const created = await call<Signer>(c.http, c.settings, "POST", "/v2/farcaster/signer");
  if (!created.ok) throw new ConnectError(`Neynar did not create a signer: ${created.outcome.reason}`);
  const deadline = Math.floor(c.now().getTime() / 1000) + APPROVAL_WINDOW_S;
  const signature = await account.signTypedData({
    domain: SIGNED_KEY_REQUEST_DOMAIN,
    types: SIGNED_KEY_REQUEST_TYPES,
    primaryType: "SignedKeyRequest",
    message: { requestFid: BigInt(appFid), key: created.body.public_key, deadline: BigInt(deadline) },
  });
  const registered = await call<Signer>(c.http, c.settings, "POST", "/v2/farcaster/signer/signed_key", {
    json: { signer_uuid: created.body.signer_uuid, app_fid: appFid, deadline, signature },
  });
  if (!registered.ok) throw new ConnectError(`Neynar refused the signer request: ${registered.outcome.reason}`);
  if (!registered.body.signer_approval_url) throw new ConnectError("Neynar answered without an approval link.");
  return {
    carry: { signer_uuid: created.body.signer_uuid },
    link: { url: registered.body.signer_approval_url, label: "Approve Crier in the Farcaster app" },
  };
}

interface NeynarUser {
  fid: number;
  username: string;
  display_name?: string;
  pfp_url?: string;
  follower_count?: number;
}

async function verify(c: ConnectContext, values: Record<string, string>) {
  const uuid = values.signer_uuid;
  if (!uuid) throw new ConnectError("This page lost its signer; start again from the API.");
  const signer = await call<Signer>(c.http, c.settings, "GET", "/v2/farcaster/signer", {
    query: { signer_uuid: uuid },
  });
  if (!signer.ok) throw new ConnectError(`Neynar did not answer about the signer: ${signer.outcome.reason}`);
  if (signer.body.status !== "approved" || !signer.body.fid) {
    throw new ConnectError(
      signer.body.status === "revoked"
        ? "This signer was revoked. Start again from the API."
        : "Not approved yet: open the approval link, approve Crier in the Farcaster app, then press the button again.",
    );
  }
  const users = await call<{ users: NeynarUser[] }>(c.http, c.settings, "GET", "/v2/farcaster/user/bulk", {
    query: { fids: signer.body.fid },
  });
  const user = users.ok ? users.body.users?.[0] : undefined;
  return {
    remoteId: String(signer.body.fid),
    username: user?.username ?? `fid:${signer.body.fid}`,
    avatarUrl: user?.pfp_url ?? null,
    credentials: { signer_uuid: uuid },
    metadata: { fid: signer.body.fid, followers_count: user?.follower_count ?? null },
  };
}

/** Neynar's idempotency key: at most 16 characters, stable across attempts of one target. */
const idemOf = (token: string) => createHash("sha256").update(token).digest("hex").slice(0, 16);

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const options = job.options as { channel_id?: string; reply_to?: { hash: string; author_fid: number } | null };
  const parent = job.replyTo
    ? { parent: job.replyTo.platformPostId, parent_author_fid: Number(ctx.account.remoteId) }
    : options.reply_to
      ? { parent: options.reply_to.hash, parent_author_fid: options.reply_to.author_fid }
      : {};
  const res = await call<{ success: boolean; cast: { hash: string } }>(
    ctx.http,
    ctx.settings,
    "POST",
    "/v2/farcaster/cast",
    {
      creates: true,
      // Neynar honours `idem` (below): a repeated cast with the same key is not cast twice.
      idempotent: true,
      json: {
        signer_uuid: ctx.credentials.signer_uuid,
        text: job.content,
        ...(job.media.length && { embeds: job.media.map((m) => ({ url: m.url })) }),
        ...parent,
        ...(options.channel_id && !job.replyTo && { channel_id: options.channel_id }),
        idem: idemOf(job.idempotencyToken),
      },
    },
  );
  if (!res.ok) return res.outcome;
  const hash = res.body.cast?.hash;
  if (!hash) return { kind: "unknown", reason: "Neynar accepted the cast but answered without its hash" };
  return { kind: "published", platformPostId: hash, url: castUrl(hash) };
}

interface NeynarCast {
  hash: string;
  text: string;
  timestamp: string;
  parent_hash?: string | null;
  embeds?: ({ url?: string; metadata?: { content_type?: string } } & { cast_id?: unknown })[];
  reactions?: { likes_count?: number; recasts_count?: number };
  replies?: { count?: number };
}

function mediaOf(cast: NeynarCast): RecentMedia[] {
  return (cast.embeds ?? [])
    .filter((e) => e.url)
    .map((e) => {
      const type = e.metadata?.content_type ?? "";
      const video = type.startsWith("video/") || /\.(mp4|mov|webm|m3u8)(\?|$)/i.test(e.url!);
      // Farcaster videos are HLS playlists (.m3u8): a list of segments, not a file to carry.
      const playlist = /mpegurl/i.test(type) || /\.m3u8(\?|$)/i.test(e.url!);
      return { url: e.url!, type: video ? "video" : "image", downloadable: !playlist };
    });
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const res = await call<{ casts: NeynarCast[] }>(ctx.http, ctx.settings, "GET", "/v2/farcaster/feed/user/casts", {
    query: { fid: ctx.account.remoteId, limit: 50, include_replies: false },
  });
  if (!res.ok) throw new Error(`Neynar feed: ${res.outcome.reason}`);
  return res.body.casts
    .map((cast): RecentPost => {
      const media = mediaOf(cast);
      const quote = (cast.embeds ?? []).some((e) => e.cast_id);
      return {
        platformPostId: cast.hash,
        url: castUrl(cast.hash),
        content: cast.text,
        media,
        createdAt: new Date(cast.timestamp),
        kind: quote ? "quote" : media.some((m) => m.type === "video") ? "video" : media.length ? "image" : "text",
      };
    })
    .filter((p) => !since || p.createdAt > since);
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = {};
  if (ids.length === 0) return out;
  const res = await call<{ result: { casts: NeynarCast[] } }>(ctx.http, ctx.settings, "GET", "/v2/farcaster/casts", {
    query: { casts: ids.join(",") },
  });
  if (!res.ok) throw new Error(`Neynar casts: ${res.outcome.reason}`);
  for (const cast of res.body.result.casts) {
    out[cast.hash] = {
      views: null,
      likes: cast.reactions?.likes_count ?? null,
      comments: cast.replies?.count ?? null,
      shares: cast.reactions?.recasts_count ?? null,
      saves: null,
    };
  }
  return out;
}

async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const res = await call<{ users: NeynarUser[] }>(ctx.http, ctx.settings, "GET", "/v2/farcaster/user/bulk", {
    query: { fids: ctx.account.remoteId },
  });
  if (!res.ok) throw new Error(`Neynar user: ${res.outcome.reason}`);
  return { followers: res.body.users[0]?.follower_count ?? null };
}

export default definePlugin({
  platform: "farcaster",
  displayName: "Farcaster",
  defaultApiUrl: "https://api.neynar.com",
  // LONG_CAST: up to 1,024 bytes (plain casts stop at 320).
  textLimit: { max: MAX_BYTES, unit: "bytes" },
  // No alt text: CastAddBody embeds in the Farcaster protocol are bare URLs, with no place for a description (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
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
    supported_formats: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"],
    convertible_formats: {
      // Casts embed URLs; clients play MP4 (https://docs.farcaster.xyz/developers/guides/writing/casts, read 2026-11-26).
      "video/quicktime": "video/mp4",
      "video/webm": "video/mp4",
    },
    // Media travel as URL embeds the clients fetch; Crier's own upload limits are the only byte caps.
    max_size_bytes: { image: 20 * MB, video: 1 * GB, gif: 15 * MB },
    file_constraints: {
      maxFiles: MAX_EMBEDS,
      maxImageFiles: MAX_EMBEDS,
      maxVideoFiles: MAX_EMBEDS,
      maxGifFiles: MAX_EMBEDS,
      allowMixedMedia: true,
      delivery: "URL embeds",
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
      channel_id: t.Optional(t.String({ minLength: 1 })),
      reply_to: t.Optional(
        t.Union([
          t.Object({
            hash: t.String({ pattern: "^0x[0-9a-fA-F]{40}$", description: "The full cast hash." }),
            author_fid: t.Integer({ minimum: 1 }),
          }),
          t.Null(),
        ]),
      ),
    },
    { additionalProperties: true },
  ),
  connect: {
    mode: "managed_signer",
    requiredSettings: ["API_KEY", "APP_FID", "APP_MNEMONIC"],
    title: "Connect a Farcaster account",
    instructions:
      "Open the approval link below on a device with the Farcaster app, approve Crier there, then come back and press the button. " +
      "Crier gets a signer that can cast for you; you can revoke it in the Farcaster app at any time.",
    fields: [],
    prepare,
    verify,
  },
  classifyResponse(res) {
    const body = res.body as { message?: string; code?: string } | null;
    // A revoked or unapproved signer is a lost authorization: the user must connect again.
    if (res.status === 403 && /signer/i.test(body?.message ?? ""))
      return { kind: "auth_expired", reason: body!.message! };
    return undefined;
  },
  publish,
  fetchRecent,
  metrics,
  accountStats,
  metricNames: ["likes", "comments", "shares"],
  disconnect: {
    disableRecord: true,
    providerRevocationRequired: true,
    providerRevocationUrl: "https://farcaster.xyz/~/settings/connected-apps",
    message:
      "Account disconnected and its record disabled. The Farcaster signer stays valid until you revoke it in the Farcaster app (Settings, Connected apps).",
  },
});
