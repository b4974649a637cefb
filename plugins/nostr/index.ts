/**
 * Nostr notes (kind 1) signed by the user's NIP-46 remote signer and sent to relays. Crier never holds
 * the user's key: it keeps a client key of its own and the bunker pointer, and asks the signer to sign
 * each note. Media are URLs in the content with NIP-92 imeta tags (the media's public URL). The relays
 * are the "API": CRIER_NOSTR_API_URL (default a public relay) plus CRIER_NOSTR_RELAYS.
 */
import { t } from "elysia";
import type { AbstractSimplePool } from "nostr-tools/abstract-pool";
import type { BunkerPointer, BunkerSigner } from "nostr-tools/nip46";
import type { Event, EventTemplate } from "nostr-tools/pure";
import {
  ConnectError,
  definePlugin,
  type ConnectContext,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type PostMetrics,
  type ProviderHttp,
  type PublishJob,
  type RecentMedia,
  type RecentPost,
} from "../../src/platform/sdk.ts";
import { urlHostProblem } from "../../src/platform/address-rule.ts";
import { GB, MB } from "../../src/platform/limits.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";

const MAX_BYTES = 64_000;
const DEFAULT_TIMEOUT_MS = 15_000;
/** Relays give no Retry-After; wait this long after "rate-limited:" before trying again. */
const RATE_LIMIT_BACKOFF_MS = 60_000;
const BUNKER = /^bunker:\/\/([0-9a-f]{64})\??([?/\w:.=&%-]*)$/i;

const wsUrl = (url: string) => url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);

/** The relays notes go to: the configured base (the emulator for sandbox profiles) and CRIER_NOSTR_RELAYS. */
function relaysOf(http: ProviderHttp, settings: Record<string, string | undefined>): string[] {
  const extra = (settings.RELAYS ?? "")
    .split(",")
    .map((r) => r.trim())
    .filter((r) => /^wss?:\/\//.test(r));
  return [...new Set([wsUrl(http.baseUrl), ...extra])];
}

const relayKey = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
  } catch {
    return url;
  }
};

/**
 * Why a bunker's relays may not be dialled, or null. They come from the user (the bunker URI), so each
 * one the operator did not configure must pass the address rule of every request made on a user's
 * behalf: no loopback, private, link-local or metadata address, checked before each dial.
 */
async function bunkerRelayProblem(
  http: ProviderHttp,
  settings: Record<string, string | undefined>,
  relays: string[],
): Promise<string | null> {
  const configured = new Set(relaysOf(http, settings).map(relayKey));
  for (const relay of relays) {
    if (configured.has(relayKey(relay))) continue;
    const problem = await urlHostProblem(relay);
    if (problem) return `The signer's relay ${relay} ${problem}; Crier does not connect there.`;
  }
  return null;
}

// nostr-tools is imported on first use, like viem in the Farcaster plugin: loading it builds its curve
// tables, ≈ 5 MB of every server's idle memory whether or not it has a Nostr account.
const pure = () => import("nostr-tools/pure");
const nip19 = () => import("nostr-tools/nip19");
const nip46 = () => import("nostr-tools/nip46");

async function pool(http: ProviderHttp): Promise<AbstractSimplePool> {
  const [{ AbstractSimplePool }, { verifyEvent }] = await Promise.all([import("nostr-tools/abstract-pool"), pure()]);
  return new AbstractSimplePool({
    verifyEvent: (e) => verifyEvent(e),
    websocketImplementation: http.webSocket ?? WebSocket,
    maxWaitForConnection: http.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    enablePing: false,
    enableReconnect: false,
  });
}

class Timeout extends Error {}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p,
    new Promise<never>(
      (_, reject) => (timer = setTimeout(() => reject(new Timeout(`${what}: no answer within ${ms} ms`)), ms)),
    ),
  ]).finally(() => clearTimeout(timer));
}

function parseBunker(input: string): BunkerPointer | null {
  const m = BUNKER.exec(input.trim());
  if (!m) return null;
  const params = new URLSearchParams(m[2].replace(/^\?/, ""));
  const relays = params.getAll("relay").filter((r) => /^wss?:\/\//.test(r));
  if (relays.length === 0) return null;
  return { pubkey: m[1].toLowerCase(), relays, secret: params.get("secret") };
}

interface StoredCredentials {
  client_secret_key: string;
  bunker: BunkerPointer;
}

async function signerFor(creds: StoredCredentials, p: AbstractSimplePool): Promise<BunkerSigner> {
  const { BunkerSigner } = await nip46();
  return BunkerSigner.fromBunker(Uint8Array.from(Buffer.from(creds.client_secret_key, "hex")), creds.bunker, {
    pool: p,
  });
}

async function prepare(c: ConnectContext) {
  // Sandbox profiles get the emulator's bunker filled in, pointing at the relay this flow uses.
  const sandbox = c.settings.SANDBOX_BUNKER_URI;
  return {
    carry: {},
    ...(sandbox && {
      values: { bunker: sandbox.replace("{relay}", encodeURIComponent(relaysOf(c.http, c.settings)[0])) },
    }),
  };
}

async function verify(c: ConnectContext, values: Record<string, string>) {
  const bunker = parseBunker(values.bunker ?? "");
  if (!bunker)
    throw new ConnectError(
      "Enter a bunker URI: bunker://<64 hex characters>?relay=wss://…&secret=…, as your signer app shows it.",
    );
  const refused = await bunkerRelayProblem(c.http, c.settings, bunker.relays);
  if (refused) throw new ConnectError(`${refused} Use a bunker URI whose relays are public.`);
  const [{ generateSecretKey, getPublicKey }, { npubEncode }, { BunkerSigner }] = await Promise.all([
    pure(),
    nip19(),
    nip46(),
  ]);
  const clientSk = generateSecretKey();
  const p = await pool(c.http);
  const signer = BunkerSigner.fromBunker(clientSk, bunker, { pool: p });
  const wait = c.http.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    await within(signer.connect(), wait, "connecting to the remote signer");
    const pubkey = await within(signer.getPublicKey(), wait, "asking the remote signer for the public key");
    if (!/^[0-9a-f]{64}$/.test(pubkey))
      throw new ConnectError("The remote signer answered with an invalid public key.");
    const credentials: StoredCredentials = { client_secret_key: Buffer.from(clientSk).toString("hex"), bunker };
    return {
      remoteId: pubkey,
      username: npubEncode(pubkey),
      credentials: { ...credentials },
      metadata: { client_pubkey: getPublicKey(clientSk), relays: bunker.relays },
    };
  } catch (e) {
    if (e instanceof ConnectError) throw e;
    if (e instanceof Timeout)
      throw new ConnectError(
        `The remote signer did not answer in time. Check that it is online and listens on ${bunker.relays.join(", ")}.`,
      );
    throw new ConnectError(`The remote signer refused: ${String((e as Error)?.message ?? e)}`);
  } finally {
    await signer.close();
    p.destroy();
  }
}

function noteTemplate(ctx: PluginContext, job: PublishJob, relay: string): EventTemplate {
  const tags: string[][] = [];
  let content = job.content;
  for (const m of job.media) {
    content += `${content ? "\n" : ""}${m.url}`;
    const imeta = ["imeta", `url ${m.url}`];
    if (m.mime_type) imeta.push(`m ${m.mime_type}`);
    else imeta.push(`m ${m.type === "video" ? "video/mp4" : guessImageType(m.url)}`);
    if (m.width && m.height) imeta.push(`dim ${m.width}x${m.height}`);
    // NIP-92 imeta takes NIP-94's `alt`, the file's description (github.com/nostr-protocol/nips 92.md, 2026-11-26).
    if (m.alt_text) imeta.push(`alt ${m.alt_text}`);
    tags.push(imeta);
  }
  if (job.replyTo) {
    // NIP-10 marked tags: the thread's root, the note replied to when it is not the root, and the author.
    const parent = job.replyTo.platformPostId;
    const root = job.replyTo.rootPlatformPostId ?? parent;
    tags.push(["e", root, relay, "root"]);
    if (root !== parent) tags.push(["e", parent, relay, "reply"]);
    tags.push(["p", ctx.account.remoteId]);
  }
  for (const tag of new Set(
    (job.content.match(/(?:^|\s)#([\p{L}\p{N}_]+)/gu) ?? []).map((h) => h.trim().slice(1).toLowerCase()),
  ))
    tags.push(["t", tag]);
  return { kind: 1, created_at: Math.floor(ctx.now().getTime() / 1000), tags, content };
}

function guessImageType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:\?|$)/i.exec(url)?.[1]?.toLowerCase();
  return (
    ({ png: "image/png", gif: "image/gif", webp: "image/webp" } as Record<string, string>)[ext ?? ""] ?? "image/jpeg"
  );
}

async function noteUrl(event: Event, relay: string): Promise<string> {
  const { neventEncode } = await nip19();
  return `https://njump.me/${neventEncode({ id: event.id, relays: [relay], author: event.pubkey })}`;
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const creds = ctx.credentials as unknown as StoredCredentials;
  // Nothing is signed or sent when the signer's relays point inside now.
  const refused = await bunkerRelayProblem(ctx.http, ctx.settings, creds.bunker.relays);
  if (refused) return { kind: "permanent", reason: refused };
  const relays = relaysOf(ctx.http, ctx.settings);
  const template = noteTemplate(ctx, job, relays[0]);
  const wait = ctx.http.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const p = await pool(ctx.http);
  const signer = await signerFor(creds, p);
  try {
    let event: Event;
    try {
      event = await within(signer.signEvent(template), wait, "the remote signer");
    } catch (e) {
      const reason = String((e as Error)?.message ?? e);
      // Nothing was sent to a relay yet, so any failure here left no note behind.
      if (e instanceof Timeout) return { kind: "retryable", reason };
      if (/unauthori[sz]ed|denied|revoked|not allowed|permission/i.test(reason))
        return { kind: "auth_expired", reason: `the remote signer refused: ${reason}` };
      return { kind: "retryable", reason: `the remote signer failed: ${reason}` };
    }
    const results = await Promise.allSettled(p.publish(relays, event).map((r) => within(r, wait, "the relay")));
    if (results.some((r) => r.status === "fulfilled"))
      return { kind: "published", platformPostId: event.id, url: await noteUrl(event, relays[0]) };
    const reasons = results.map((r) => (r as PromiseRejectedResult).reason);
    const messages = reasons.map((r) => String((r as Error)?.message ?? r));
    const text = messages.join("; ");
    // A relay that took the note but did not say so may have stored it.
    if (reasons.some((r) => r instanceof Timeout) || messages.some((m) => /timed out/i.test(m)))
      return { kind: "unknown", reason: text };
    // NIP-01 prefixes: rate-limited and error are worth another try; blocked, invalid, pow, restricted are not.
    if (messages.every((m) => /^(rate-limited|error):|connection|closed|failed/i.test(m))) {
      return {
        kind: "retryable",
        reason: text,
        ...(messages.some((m) => /^rate-limited:/.test(m)) && { retryAfterMs: RATE_LIMIT_BACKOFF_MS }),
      };
    }
    return { kind: "permanent", reason: text };
  } finally {
    await signer.close();
    p.destroy();
  }
}

function mediaOf(event: Event): RecentMedia[] {
  return event.tags
    .filter((t) => t[0] === "imeta")
    .flatMap((t) => {
      const url = t.find((x) => x.startsWith("url "))?.slice(4);
      const mime = t.find((x) => x.startsWith("m "))?.slice(2) ?? "";
      // An imeta tag (NIP-92) describes an attached file by its URL.
      return url
        ? [{ url, type: mime.startsWith("video/") ? "video" : "image", downloadable: true } satisfies RecentMedia]
        : [];
    });
}

async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const relays = relaysOf(ctx.http, ctx.settings);
  const p = await pool(ctx.http);
  try {
    const events = await p.querySync(
      relays,
      {
        authors: [ctx.account.remoteId],
        kinds: [1],
        limit: 50,
        ...(since && { since: Math.floor(since.getTime() / 1000) + 1 }),
      },
      { maxWait: ctx.http.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    );
    const notes = events.filter((e) => !e.tags.some((t) => t[0] === "e")).sort((a, b) => b.created_at - a.created_at);
    return await Promise.all(
      notes.map(async (e) => {
        const media = mediaOf(e);
        return {
          platformPostId: e.id,
          url: await noteUrl(e, relays[0]),
          content: e.content,
          media,
          createdAt: new Date(e.created_at * 1000),
          kind: media.some((m) => m.type === "video")
            ? "video"
            : media.length
              ? "image"
              : e.tags.some((t) => t[0] === "q")
                ? "quote"
                : "text",
        } satisfies RecentPost;
      }),
    );
  } finally {
    p.destroy();
  }
}

async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const out: Record<string, PostMetrics> = Object.fromEntries(
    ids.map((id) => [id, { views: null, likes: 0, comments: 0, shares: 0, saves: null }]),
  );
  if (ids.length === 0) return out;
  const p = await pool(ctx.http);
  try {
    // Engagement on Nostr is counted from events that point at the note: reactions, reposts, replies.
    const events = await p.querySync(
      relaysOf(ctx.http, ctx.settings),
      { kinds: [1, 6, 7], "#e": ids },
      { maxWait: ctx.http.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    );
    for (const e of events) {
      const target = e.tags.find((t) => t[0] === "e" && ids.includes(t[1]))?.[1];
      if (!target) continue;
      const m = out[target];
      if (e.kind === 7 && e.content !== "-") m.likes = (m.likes ?? 0) + 1;
      if (e.kind === 6) m.shares = (m.shares ?? 0) + 1;
      if (e.kind === 1) m.comments = (m.comments ?? 0) + 1;
    }
    return out;
  } finally {
    p.destroy();
  }
}

export default definePlugin({
  platform: "nostr",
  displayName: "Nostr",
  // The relays are the API; the default is one public relay, CRIER_NOSTR_RELAYS adds more.
  defaultApiUrl: "wss://relay.damus.io",
  // No protocol limit: relays advertise max_content_length (NIP-11); 64 KB is what common relays accept.
  textLimit: { max: MAX_BYTES, unit: "bytes" },
  // The imeta `alt` field (NIP-92, NIP-94) has no length of its own; the event's content cap does not count tags.
  altText: { image: { max_length: null, unit: "characters" }, video: { max_length: null, unit: "characters" } },
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
    supported_formats: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/webp",
      "video/mp4",
      "video/webm",
      "video/quicktime",
    ],
    convertible_formats: {},
    // Media are linked by URL; these are Crier's own upload limits.
    max_size_bytes: { image: 20 * MB, video: 1 * GB, gif: 15 * MB },
    file_constraints: {
      maxFiles: 10,
      maxImageFiles: 10,
      maxVideoFiles: 10,
      maxGifFiles: 10,
      allowMixedMedia: true,
      delivery: "URLs with NIP-92 imeta tags",
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema: t.Object({}, { additionalProperties: true }),
  connect: {
    mode: "remote_signer",
    title: "Connect a Nostr account",
    instructions:
      "Crier signs through your remote signer (NIP-46) and never sees your key. In your signer app (nsec.app, Amber, a bunker…) " +
      "create a connection for Crier and paste its bunker URI here; the signer may ask you to approve.",
    fields: [{ name: "bunker", label: "Bunker URI", type: "text", placeholder: "bunker://…?relay=wss://…&secret=…" }],
    prepare,
    verify,
  },
  publish,
  // The first comment is a kind-1 reply: an "e" tag naming the published note with the "root" marker
  // and a "p" tag naming its author, the account itself (NIP-10, github.com/nostr-protocol/nips/blob/master/10.md,
  // checked 2026-11-26); same limit as a note.
  firstComment: {
    kind: "reply",
    textLimit: { max: MAX_BYTES, unit: "bytes" },
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment),
  },
  fetchRecent,
  metrics,
  metricNames: ["likes", "comments", "shares"],
  async onDisconnect(ctx) {
    // Best effort: ask the signer to forget Crier's client key (never over a relay that points inside).
    const creds = ctx.credentials as unknown as StoredCredentials;
    const refused = await bunkerRelayProblem(ctx.http, ctx.settings, creds.bunker.relays);
    if (refused) {
      ctx.log.warn("nostr signer logout skipped", { error: refused });
      return;
    }
    const p = await pool(ctx.http);
    const signer = await signerFor(creds, p);
    try {
      await within(signer.logout(), ctx.http.timeoutMs ?? DEFAULT_TIMEOUT_MS, "the remote signer");
    } catch (e) {
      ctx.log.warn("nostr signer logout failed", { error: String((e as Error)?.message ?? e) });
    } finally {
      await signer.close();
      p.destroy();
    }
  },
  disconnect: {
    disableRecord: true,
    providerRevocationRequired: false,
    message:
      "Account disconnected and its record disabled. Crier asked your remote signer to log it out (best effort); revoke Crier in your signer app as well if you want to be sure.",
  },
});
