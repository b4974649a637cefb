/**
 * Discord channels, two ways (docs: discord.com/developers/docs, API v10, checked 2026-11-26):
 *
 * - through the server's bot (CRIER_DISCORD_BOT_TOKEN, CRIER_DISCORD_APPLICATION_ID): the connect page
 *   shows the bot's invite link and the channels it can post in; the person connecting proves they
 *   manage the channel with a one-time code (connect.ts). Replies, metrics, fetchRecent and the server's
 *   member count work in this mode;
 * - through an incoming webhook URL the user pastes: no bot needed. A webhook can only post, so thread
 *   items and first comments follow as ordinary messages, and there is nothing to read back but its own
 *   messages (metrics).
 *
 * A post is one message: text (2000 characters), up to 10 files uploaded with it (alt text as each
 * attachment's description) and up to 10 embeds from platform_options. A thread's later items reply to
 * the item before them (message_reference), in the channel where the first was posted; Crier does not
 * open a Discord thread, which would hide the rest from the channel. Every create carries a nonce derived
 * from the target with enforce_nonce, so Discord answers a repeated attempt with the message already made.
 */
import { t } from "elysia";
import type { APIEmbed, APIMessage } from "discord-api-types/v10";
import {
  definePlugin,
  unreadableMedia,
  type AccountStats,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type PostMetrics,
  type PublishJob,
  type RecentPost,
} from "../../src/platform/sdk.ts";
import { MB } from "../../src/platform/limits.ts";
import { publishAsReply } from "../../src/platform/first-comment.ts";
import {
  API,
  DEFAULT_API_URL,
  bodyOf,
  channelMessageBody,
  classifyResponse,
  nonceOf,
  webhookMessageBody,
  type MessageParts,
} from "./api.ts";
import { botToken, connect } from "./connect.ts";

// docs: resources/message#create-message: content "up to 2000 characters"; embeds up to 10, "up to 6000
// characters" across them; reference#uploading-files: up to 10 files, "default file upload limit of
// 10 MiB" per request for bots and webhooks (a boosted server allows more). Attachment description
// (alt text) up to 1024 characters (resources/message#attachment-object).
const TEXT_MAX = 2000;
const FILES_MAX = 10;
const UPLOAD_MAX = 10 * MB;
const ALT_MAX = 1024;

const Embed = t.Object(
  {
    title: t.Optional(t.String({ maxLength: 256 })),
    description: t.Optional(t.String({ maxLength: 4096 })),
    url: t.Optional(t.String({ format: "uri" })),
    color: t.Optional(t.Integer({ minimum: 0, maximum: 0xffffff, description: "RGB as an integer (0xRRGGBB)." })),
    timestamp: t.Optional(t.String({ format: "date-time" })),
    footer: t.Optional(t.Object({ text: t.String({ maxLength: 2048 }), icon_url: t.Optional(t.String()) })),
    image: t.Optional(t.Object({ url: t.String() })),
    thumbnail: t.Optional(t.Object({ url: t.String() })),
    author: t.Optional(
      t.Object({ name: t.String({ maxLength: 256 }), url: t.Optional(t.String()), icon_url: t.Optional(t.String()) }),
    ),
    fields: t.Optional(
      t.Array(
        t.Object({
          name: t.String({ maxLength: 256 }),
          value: t.String({ maxLength: 1024 }),
          inline: t.Optional(t.Boolean()),
        }),
        { maxItems: 25 },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      "A rich embed as Discord's embed object (docs: resources/message#embed-object); all embeds together hold at most 6000 characters.",
  },
);

const optionsSchema = t.Object(
  {
    embeds: t.Optional(t.Array(Embed, { maxItems: 10, description: "Up to 10 embeds shown under the text." })),
    silent: t.Optional(t.Boolean({ description: "Posts without a notification (SUPPRESS_NOTIFICATIONS)." })),
    suppress_embeds: t.Optional(t.Boolean({ description: "No link previews for the links in the text." })),
    allow_mentions: t.Optional(
      t.Boolean({
        description:
          "Lets @everyone, @here, role and user mentions in the text notify; by default they are shown but notify nobody.",
      }),
    ),
  },
  { additionalProperties: false },
);

interface Options {
  embeds?: APIEmbed[];
  silent?: boolean;
  suppress_embeds?: boolean;
  allow_mentions?: boolean;
}

const permanent = (reason: string, code: string): Outcome => ({ kind: "permanent", reason, code });

type Mode = { kind: "bot"; token: string; channelId: string } | { kind: "webhook"; id: string; token: string };

/** How this account posts: its webhook, or the server's bot in its channel. */
function modeOf(ctx: PluginContext): Mode | Outcome {
  const c = ctx.credentials;
  if (c.mode === "webhook") return { kind: "webhook", id: String(c.webhook_id), token: String(c.webhook_token) };
  const token = botToken(ctx.settings);
  if (!token)
    return permanent(
      "Discord's bot is not configured on this server: set CRIER_DISCORD_BOT_TOKEN, or reconnect the channel with a webhook URL.",
      "platform_not_configured",
    );
  return { kind: "bot", token, channelId: String(c.channel_id ?? ctx.account.remoteId) };
}
const isOutcome = (m: Mode | Outcome): m is Outcome => "kind" in m && m.kind !== "bot" && m.kind !== "webhook";

export const botHeaders = (token: string) => ({ authorization: `Bot ${token}` });

function messageUrl(ctx: PluginContext, m: Pick<APIMessage, "id" | "channel_id">): string | null {
  const guild = ctx.credentials.guild_id ?? ctx.account.metadata.guild_id;
  return typeof guild === "string" && guild ? `https://discord.com/channels/${guild}/${m.channel_id}/${m.id}` : null;
}

const extension = (type: string) =>
  ({
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "video/mp4": "mp4",
    "video/quicktime": "mov",
    "video/webm": "webm",
  })[type] ?? "bin";

/** The job's files, read once: each within the upload limit, all of them together too (one request). */
async function files(
  ctx: PluginContext,
  media: MediaItem[],
): Promise<{ ok: true; files: File[] } | { ok: false; outcome: Outcome }> {
  if (media.length > FILES_MAX)
    return { ok: false, outcome: permanent(`Discord takes at most ${FILES_MAX} files in a message`, "too_many_media") };
  const out: File[] = [];
  let total = 0;
  for (const [i, item] of media.entries()) {
    let bytes: Uint8Array;
    let type: string;
    try {
      const body = await ctx.media.open(item);
      type = body.contentType.split(";")[0].trim().toLowerCase();
      bytes = await body.bytes();
    } catch (e) {
      return { ok: false, outcome: unreadableMedia(e) };
    }
    total += bytes.length;
    if (total > UPLOAD_MAX)
      return {
        ok: false,
        outcome: permanent(
          `media ${i + 1} brings the message's files to ${total} bytes; Discord takes ${UPLOAD_MAX} bytes of files per message`,
          "media_too_large",
        ),
      };
    out.push(new File([bytes as Uint8Array<ArrayBuffer>], `file${i}.${extension(type)}`, { type }));
  }
  return { ok: true, files: out };
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const mode = modeOf(ctx);
  if (isOutcome(mode)) return mode;
  const options = job.options as Options;
  const read = await files(ctx, job.media);
  if (!read.ok) return read.outcome;
  const parts: MessageParts = {
    content: job.content,
    embeds: options.embeds,
    attachments: read.files.map((f, i) => ({
      filename: f.name,
      description: job.media[i].alt_text?.slice(0, ALT_MAX),
    })),
    silent: options.silent,
    suppressEmbeds: options.suppress_embeds,
    allowMentions: options.allow_mentions,
  };
  const sent =
    mode.kind === "bot"
      ? await ctx.http.request<APIMessage>("POST", `${API}/channels/${mode.channelId}/messages`, {
          headers: botHeaders(mode.token),
          ...bodyOf(
            channelMessageBody(parts, {
              nonce: nonceOf(job.idempotencyToken),
              ...(job.replyTo && { replyTo: { messageId: job.replyTo.platformPostId, channelId: mode.channelId } }),
            }),
            read.files,
          ),
          creates: true,
        })
      : // A webhook can neither reply nor take a nonce: a thread's later items follow as plain messages.
        await ctx.http.request<APIMessage>("POST", `${API}/webhooks/${mode.id}/${mode.token}`, {
          query: { wait: true },
          ...bodyOf(webhookMessageBody(parts), read.files),
          creates: true,
        });
  if (!sent.ok) return sent.outcome;
  return { kind: "published", platformPostId: sent.body.id, url: messageUrl(ctx, sent.body) };
}

/** One message as Discord has it now: by the bot from the channel, by a webhook from its own messages. */
async function readMessage(ctx: PluginContext, mode: Exclude<Mode, Outcome>, id: string) {
  return mode.kind === "bot"
    ? ctx.http.request<APIMessage>("GET", `${API}/channels/${mode.channelId}/messages/${id}`, {
        headers: botHeaders(mode.token),
      })
    : ctx.http.request<APIMessage>("GET", `${API}/webhooks/${mode.id}/${mode.token}/messages/${id}`);
}

/** Discord exposes reactions on a message (each emoji's count): their sum is the message's likes. */
async function metrics(ctx: PluginContext, ids: string[]): Promise<Record<string, PostMetrics>> {
  const mode = modeOf(ctx);
  if (isOutcome(mode)) throw new Error(mode.kind === "permanent" ? mode.reason : "Discord is not configured");
  const out: Record<string, PostMetrics> = {};
  for (const id of ids) {
    const res = await readMessage(ctx, mode, id);
    if (!res.ok) {
      if (res.status === 404) continue; // deleted on Discord
      throw new Error(`Discord message ${id}: ${res.outcome.reason}`);
    }
    const likes = (res.body.reactions ?? []).reduce((n, r) => n + r.count, 0);
    out[id] = { views: null, likes, comments: null, shares: null, saves: null };
  }
  return out;
}

const kindOf = (type: string | undefined): "image" | "video" | null =>
  type?.startsWith("image/") ? "image" : type?.startsWith("video/") ? "video" : null;

/**
 * The channel's latest messages (bot mode). Without the Message Content intent (a privileged setting of
 * the bot) Discord shows a bot only the text of its own messages and of those mentioning it; messages
 * whose text and files it cannot see are left out.
 */
async function fetchRecent(ctx: PluginContext, since: Date | null): Promise<RecentPost[]> {
  const mode = modeOf(ctx);
  if (isOutcome(mode)) throw new Error(mode.kind === "permanent" ? mode.reason : "Discord is not configured");
  if (mode.kind === "webhook")
    throw new Error(
      "A Discord account connected by webhook cannot read its channel; connect it through the bot to use it as a source.",
    );
  const res = await ctx.http.request<APIMessage[]>("GET", `${API}/channels/${mode.channelId}/messages`, {
    headers: botHeaders(mode.token),
    query: { limit: 50 },
  });
  if (!res.ok) throw new Error(`Discord channel messages: ${res.outcome.reason}`);
  const out: RecentPost[] = [];
  for (const m of res.body) {
    const createdAt = new Date(m.timestamp);
    if (since && createdAt <= since) continue;
    if (!m.content && m.attachments.length === 0) continue;
    const media = m.attachments
      .map((a) => ({ a, type: kindOf(a.content_type) }))
      .filter((x): x is { a: (typeof m.attachments)[number]; type: "image" | "video" } => x.type !== null)
      .map(({ a, type }) => ({
        url: a.url,
        type,
        downloadable: true,
        ...(a.width && a.height ? { width: a.width, height: a.height } : {}),
        ...(a.description ? { alt_text: a.description } : {}),
      }));
    out.push({
      platformPostId: m.id,
      url: messageUrl(ctx, m),
      content: m.content,
      media,
      createdAt,
      kind: media.some((x) => x.type === "video") ? "video" : media.length ? "image" : "text",
    });
  }
  return out;
}

/** The server's approximate member count (bot mode); a webhook cannot read its server. */
async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const mode = modeOf(ctx);
  if (isOutcome(mode) || mode.kind === "webhook") return { followers: null };
  const guild = String(ctx.credentials.guild_id ?? ctx.account.metadata.guild_id ?? "");
  const res = await ctx.http.request<{ approximate_member_count?: number }>("GET", `${API}/guilds/${guild}`, {
    headers: botHeaders(mode.token),
    query: { with_counts: true },
  });
  if (!res.ok) throw new Error(`Discord guild: ${res.outcome.reason}`);
  return { followers: res.body.approximate_member_count ?? null };
}

export default definePlugin({
  platform: "discord",
  displayName: "Discord",
  capabilities: {
    destination: true,
    source: true,
    backfill: false,
    text: true,
    images: true,
    video: true,
    replies: true,
    threads: true,
  },
  mediaRequirements: {
    // Discord takes any file; these are the kinds its clients show inline.
    supported_formats: [
      "image/jpeg",
      "image/png",
      "image/gif",
      "image/webp",
      "video/mp4",
      "video/quicktime",
      "video/webm",
    ],
    convertible_formats: {},
    max_size_bytes: { image: UPLOAD_MAX, video: UPLOAD_MAX, gif: UPLOAD_MAX },
    file_constraints: {
      maxFiles: FILES_MAX,
      maxImageFiles: FILES_MAX,
      maxVideoFiles: FILES_MAX,
      maxGifFiles: FILES_MAX,
      allowMixedMedia: true,
      totalMaxBytes: UPLOAD_MAX,
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    aspect_ratio: null,
    thumbnail: null,
  },
  optionsSchema,
  textLimit: { max: TEXT_MAX, unit: "characters" },
  altText: { image: { max_length: ALT_MAX, unit: "characters" }, video: { max_length: ALT_MAX, unit: "characters" } },
  defaultApiUrl: DEFAULT_API_URL,
  // docs: topics/rate-limits: a global 50 requests per second per bot, and per-route buckets (a channel's
  // messages are one); a 429 carries retry_after and requeues the target.
  concurrency: 8,
  connect,
  disconnect: {
    message:
      "Channel disconnected. The bot stays in the server; remove it there, or delete the webhook, to end its access.",
  },
  classifyResponse,
  publish,
  firstComment: {
    kind: "reply",
    textLimit: { max: TEXT_MAX, unit: "characters" },
    publish: (ctx, comment) => publishAsReply(publish, ctx, comment),
  },
  fetchRecent,
  metrics,
  metricNames: ["likes"],
  accountStats,
});
