/**
 * Telegram channels through the Bot API. The server has one bot (CRIER_TELEGRAM_BOT_TOKEN); connecting a
 * channel checks that this bot is an administrator allowed to post there, and that the person connecting
 * can post there too: they post a one-time code in the channel, which the bot must see (proof.ts).
 * Publishes text, a photo, a video, an animation or an album (2 to 10 photos and videos), uploading the
 * files itself so media need not be reachable by Telegram. Bots cannot read channel history or counts: no fetchRecent, no metrics.
 */
import { t } from "elysia";
import {
  ConnectError,
  definePlugin,
  unreadableMedia,
  type ConnectAttempt,
  type ConnectContext,
  type FailureOutcome,
  type MediaItem,
  type Outcome,
  type PluginContext,
  type ProviderHttp,
  type ProviderResponse,
  type PublishJob,
  type AccountStats,
} from "../../src/platform/sdk.ts";
import { MB } from "../../src/platform/limits.ts";
import { ALLOWED_UPDATES, findCodePost, proofCode, UpdatesUnreadable } from "./proof.ts";
// The Bot API's own method signatures (grammY's generated types; Bot API 9, checked 2026-11-26): every
// call's parameters and answer are typed by them, so a misnamed or retired parameter does not compile.
// Type-only: nothing of the package runs.
import type { ApiMethods, Opts } from "@grammyjs/types";

const DEFAULT_API_URL = "https://api.telegram.org";
const TEXT_MAX = 4096;
const CAPTION_MAX = 1024;
const ALBUM_MAX = 10;
// Limits of files a bot uploads (by URL they are lower: 5 MB photos, 20 MB other files).
const PHOTO_MAX = 10 * MB;
const FILE_MAX = 50 * MB;

const optionsSchema = t.Object(
  {
    disable_notification: t.Optional(t.Boolean({ description: "Sends the post silently: subscribers get no sound." })),
    protect_content: t.Optional(t.Boolean({ description: "Prevents forwarding and saving of the post." })),
    disable_link_preview: t.Optional(t.Boolean({ description: "No preview of the first link (text posts)." })),
  },
  { additionalProperties: false },
);

type Options = { disable_notification?: boolean; protect_content?: boolean; disable_link_preview?: boolean };

interface TgResult<T> {
  ok: true;
  result: T;
}
/** A file part of a multipart call. */
type F = File;
type Method = keyof ApiMethods<F>;
type Result<M extends Method> = Awaited<ReturnType<ApiMethods<F>[M]>>;
/** A method's parameters without its file fields, which travel as separate multipart parts. */
type Fields<M extends Method, Files extends keyof Opts<F>[M] = never> = Omit<Opts<F>[M], Files>;

type Step<T> = { ok: true; value: T } | { ok: false; outcome: FailureOutcome };
const permanent = (reason: string, code?: string): FailureOutcome => ({
  kind: "permanent",
  reason,
  ...(code && { code }),
});

export function botToken(settings: Record<string, string | undefined>): string | undefined {
  return settings.CRIER_TELEGRAM_BOT_TOKEN ?? settings.BOT_TOKEN;
}

/**
 * One Bot API call. The token travels in the path (the HTTP client keeps it out of logs). A multipart
 * body is built by `form` from the same typed parameters.
 */
async function call<M extends Method>(
  http: ProviderHttp,
  token: string,
  method: M,
  params: Opts<F>[M] | Multipart<M>,
  creates = false,
) {
  return http.request<TgResult<Result<M>>>("POST", `/bot${token}/${method}`, {
    ...(params instanceof FormData ? { multipart: params } : { json: params }),
    creates,
  });
}

/** Telegram's own signals: retry_after in the body, 401 for a revoked token, 403 for a bot removed from the chat. */
function classifyResponse(res: ProviderResponse): FailureOutcome | undefined {
  const body = res.body as {
    description?: string;
    parameters?: { retry_after?: number; migrate_to_chat_id?: number };
  } | null;
  const reason = body?.description ?? `HTTP ${res.status}`;
  const retryAfter = body?.parameters?.retry_after;
  if (res.status === 429 || typeof retryAfter === "number") {
    return { kind: "retryable", reason, ...(typeof retryAfter === "number" && { retryAfterMs: retryAfter * 1000 }) };
  }
  // The token is the server's bot, shared by every Telegram account: a revoked one concerns them all.
  if (res.status === 401)
    return { kind: "auth_expired", reason: `Telegram refused the bot token: ${reason}`, scope: "server" };
  if (res.status === 403) return { kind: "auth_expired", reason: `the bot lost access to the channel: ${reason}` };
  if (body?.parameters?.migrate_to_chat_id)
    return permanent(`the chat moved to ${body.parameters.migrate_to_chat_id}; reconnect it`, "chat_migrated");
  return undefined;
}

const notConfigured =
  "Telegram is not configured on this server: set CRIER_TELEGRAM_BOT_TOKEN to the token of the bot @BotFather gave you.";

interface Opened {
  item: MediaItem;
  kind: "photo" | "video" | "animation";
  contentType: string;
  bytes: Uint8Array<ArrayBuffer>;
}

async function openAll(ctx: PluginContext, media: MediaItem[]): Promise<Step<Opened[]>> {
  const out: Opened[] = [];
  for (const [i, item] of media.entries()) {
    let contentType: string;
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      const body = await ctx.media.open(item);
      contentType = body.contentType.split(";")[0].trim().toLowerCase();
      bytes = (await body.bytes()) as Uint8Array<ArrayBuffer>;
    } catch (e) {
      return { ok: false, outcome: unreadableMedia(e) };
    }
    const kind = contentType === "image/gif" ? "animation" : item.type === "video" ? "video" : "photo";
    const max = kind === "photo" ? PHOTO_MAX : FILE_MAX;
    if (bytes.length > max)
      return {
        ok: false,
        outcome: permanent(
          `media ${i + 1} is ${bytes.length} bytes; a bot may upload ${kind === "photo" ? "photos" : "files"} up to ${max} bytes`,
          "media_too_large",
        ),
      };
    out.push({ item, kind, contentType, bytes });
  }
  return { ok: true, value: out };
}

const fileName = (o: Opened, i: number) =>
  `file${i}.${o.contentType.split("/")[1]?.replace("quicktime", "mov").replace("jpeg", "jpg") ?? "bin"}`;

/** A multipart body for method M (the brand keeps one method's form from being sent to another). */
type Multipart<M extends Method> = FormData & { readonly method?: M };

/** Multipart fields: scalars as text, objects as JSON, as the Bot API reads them; files as parts. */
function form<M extends Method, Files extends keyof Opts<F>[M] = never>(
  _method: M,
  fields: Fields<M, Files>,
  files: Partial<Record<Files | `file${number}`, File>> = {},
): Multipart<M> {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (v === undefined) continue;
    f.append(k, typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  for (const [k, v] of Object.entries(files)) if (v) f.append(k, v as File);
  return f;
}

/** What every send shares: the chat, notification and protection flags, the message replied to. */
type Common = Pick<Opts<F>["sendMessage"], "chat_id" | "disable_notification" | "protect_content" | "reply_parameters">;

/** sendPhoto, sendVideo or sendAnimation for one file; sendMediaGroup for an album (its first message stands for it). */
async function sendMedia(
  ctx: PluginContext,
  token: string,
  common: Common,
  files: Opened[],
  caption: string | undefined,
) {
  const part = (f: Opened, i: number) => new File([f.bytes], fileName(f, i), { type: f.contentType });
  if (files.length === 1) {
    const [f] = files;
    if (f.kind === "photo")
      return call(ctx.http, token, "sendPhoto", form("sendPhoto", { ...common, caption }, { photo: part(f, 0) }), true);
    if (f.kind === "animation")
      return call(
        ctx.http,
        token,
        "sendAnimation",
        form("sendAnimation", { ...common, caption }, { animation: part(f, 0) }),
        true,
      );
    const video: Fields<"sendVideo", "video"> = {
      ...common,
      caption,
      supports_streaming: true,
      ...(f.item.width && f.item.height ? { width: f.item.width, height: f.item.height } : {}),
      ...(f.item.duration ? { duration: Math.round(f.item.duration) } : {}),
    };
    return call(ctx.http, token, "sendVideo", form("sendVideo", video, { video: part(f, 0) }), true);
  }
  const album: Opts<F>["sendMediaGroup"] = {
    ...common,
    media: files.map((f, i) =>
      f.kind === "video"
        ? {
            type: "video" as const,
            media: `attach://file${i}`,
            ...(i === 0 && caption && { caption }),
            supports_streaming: true,
          }
        : { type: "photo" as const, media: `attach://file${i}`, ...(i === 0 && caption && { caption }) },
    ),
  };
  const parts = Object.fromEntries(files.map((f, i) => [`file${i}`, part(f, i)]));
  const res = await call(ctx.http, token, "sendMediaGroup", form("sendMediaGroup", album, parts), true);
  return res.ok ? { ...res, body: { ok: true as const, result: res.body.result[0] } } : res;
}

async function publish(ctx: PluginContext, job: PublishJob): Promise<Outcome> {
  const token = botToken(ctx.settings);
  if (!token) return permanent(notConfigured, "platform_not_configured");
  const options = job.options as Options;
  const text = job.content;
  const common: Common = {
    chat_id: String(ctx.credentials.chat_id ?? ctx.account.remoteId),
    disable_notification: options.disable_notification,
    protect_content: options.protect_content,
    ...(job.replyTo && { reply_parameters: { message_id: Number(job.replyTo.platformPostId) } }),
  };

  let sent;
  if (job.media.length === 0) {
    sent = await call(
      ctx.http,
      token,
      "sendMessage",
      {
        ...common,
        text,
        ...(options.disable_link_preview && { link_preview_options: { is_disabled: true } }),
      },
      true,
    );
  } else {
    const opened = await openAll(ctx, job.media);
    if (!opened.ok) return opened.outcome;
    if (opened.value.length > 1 && opened.value.some((f) => f.kind === "animation")) {
      return permanent("a GIF cannot be part of a Telegram album; post it alone", "gif_in_album");
    }
    sent = await sendMedia(ctx, token, common, opened.value, text.trim() ? text : undefined);
  }
  if (!sent.ok) return sent.outcome;
  const id = String(sent.body.result.message_id);
  const username = ctx.account.metadata.username;
  return {
    kind: "published",
    platformPostId: id,
    url: typeof username === "string" && username ? `https://t.me/${username}/${id}` : null,
  };
}

/** "@name", "name", "t.me/name", "https://t.me/name" or a numeric id like -1001234567890. */
export function normaliseChannel(raw: string): string | null {
  const v = raw
    .trim()
    .replace(/^(https?:\/\/)?(t\.me|telegram\.me)\//i, "")
    .replace(/^@/, "");
  if (/^-?\d+$/.test(v)) return v;
  if (/^[a-zA-Z][a-zA-Z0-9_]{3,31}$/.test(v)) return `@${v}`;
  return null;
}

/** The one-time code of the attempt, shown on the form; in the sandbox the emulator posts it for the user. */
async function prepare(c: ConnectContext, attempt: ConnectAttempt) {
  const sandbox = Boolean(c.settings.SANDBOX_ADMIN_POST_PATH);
  return {
    carry: {},
    code: {
      label: sandbox
        ? "Your one-time code (sandbox: the emulator posts it in the channel for you when you connect):"
        : "Post this one-time code in the channel (a message of its own, from your account), then connect:",
      value: proofCode(attempt),
    },
  };
}

const ownershipUnproven = (code: string, channel: string) =>
  new ConnectError(
    `Telegram shows no post of ${code} in ${channel}. Post ${code} in ${channel} as a message of the channel ` +
      "(you must be allowed to post there), then press Connect again within the five minutes of this link. " +
      "The bot removes the message once it has seen it, when it may delete messages.",
    "channel_ownership_unproven",
  );

/**
 * The proof that the user can post in the channel: the attempt's code in a post of that chat. In the
 * sandbox the emulator makes the post first, as the user would in Telegram.
 */
async function proveControl(
  c: ConnectContext,
  token: string,
  chat: { id: number; username?: string; title?: string },
  attempt: ConnectAttempt,
) {
  const code = proofCode(attempt);
  const sandboxPost = c.settings.SANDBOX_ADMIN_POST_PATH;
  if (sandboxPost) await c.http.request("POST", sandboxPost, { json: { chat_id: chat.id, text: code } });
  const key = `${c.http.baseUrl}\n${token}`;
  const page = (offset: number | undefined) =>
    call(c.http, token, "getUpdates", {
      ...(offset !== undefined && { offset }),
      limit: 100,
      timeout: 0,
      allowed_updates: ALLOWED_UPDATES,
    });
  let post;
  try {
    post = await findCodePost(key, page, { chatId: chat.id, code, now: c.now().getTime() });
  } catch (e) {
    if (!(e instanceof UpdatesUnreadable)) throw e;
    if (e.status === 409)
      throw new ConnectError(
        /webhook/i.test(e.message)
          ? "This server's bot has a webhook set, so Crier cannot read the code from the channel; the administrator must remove the webhook (deleteWebhook): the bot given to Crier must serve Crier alone."
          : `Another program is reading this server's bot's updates (${e.message}); the bot given to Crier must serve Crier alone. Try again in a moment.`,
        "telegram_updates_unavailable",
      );
    throw new ConnectError(`Telegram did not answer while looking for the code: ${e.message}. Try again in a moment.`);
  }
  if (!post) throw ownershipUnproven(code, chat.username ? `@${chat.username}` : (chat.title ?? String(chat.id)));
  // Nice to have: the code has served. Only a bot allowed to delete messages may remove a person's post.
  const removed = await call(c.http, token, "deleteMessage", { chat_id: chat.id, message_id: post.messageId });
  if (!removed.ok) c.log.info("telegram: the code message stays in the channel", { reason: removed.outcome.reason });
}

async function verify(c: ConnectContext, values: Record<string, string>, attempt?: ConnectAttempt) {
  const token = botToken(c.settings);
  if (!token) throw new ConnectError(notConfigured);
  if (!attempt)
    throw new ConnectError("Connect a Telegram channel from its connection page: it shows the code to post.");
  const chatId = normaliseChannel(values.channel ?? "");
  if (!chatId)
    throw new ConnectError(
      "Enter the channel's @username, its t.me link, or for a private channel its numeric id (like -1001234567890).",
    );
  const me = await call(c.http, token, "getMe", {});
  if (!me.ok)
    throw new ConnectError(
      me.outcome.kind === "auth_expired"
        ? "Telegram refused this server's bot token; the administrator must check CRIER_TELEGRAM_BOT_TOKEN."
        : `Telegram did not answer: ${me.outcome.reason}`,
    );
  const bot = me.body.result;
  const addBot = `Add @${bot.username} to the channel as an administrator allowed to post messages, then try again.`;
  const chat = await call(c.http, token, "getChat", { chat_id: chatId });
  if (!chat.ok) {
    if (chat.outcome.kind === "retryable")
      throw new ConnectError(`Telegram is busy; try again shortly (${chat.outcome.reason}).`);
    throw new ConnectError(`Telegram cannot see this channel from the bot. ${addBot}`);
  }
  const info = chat.body.result;
  if (info.type !== "channel")
    throw new ConnectError(`This is a ${info.type}, not a channel: Crier posts to Telegram channels.`);
  const member = await call(c.http, token, "getChatMember", {
    chat_id: info.id,
    user_id: bot.id,
  });
  if (!member.ok) throw new ConnectError(`Telegram did not say whether the bot is an administrator. ${addBot}`);
  const { status } = member.body.result;
  const can_post_messages = member.body.result.status === "administrator" && member.body.result.can_post_messages;
  if (status !== "creator" && !(status === "administrator" && can_post_messages === true)) {
    throw new ConnectError(
      status === "administrator"
        ? `@${bot.username} is an administrator but may not post messages: allow "Post messages" in its rights.`
        : addBot,
    );
  }
  // Whoever connects must show they can post there too, every time: the bot is every profile's.
  await proveControl(c, token, info, attempt);
  return {
    remoteId: String(info.id),
    username: info.username ? `@${info.username}` : info.title || String(info.id as number),
    avatarUrl: null,
    // The bot token is the server's, not the account's: only the chat is kept.
    credentials: { chat_id: String(info.id), bot_id: bot.id },
    metadata: {
      chat_id: String(info.id),
      title: info.title ?? null,
      username: info.username ?? null,
      bot_username: bot.username,
      private: !info.username,
    },
  };
}

/** On disconnect the bot leaves the channel, unless another connected account of this server posts there. */
async function onDisconnect(ctx: PluginContext, p: { remoteStillUsed: boolean }): Promise<void> {
  if (!p.remoteStillUsed) await leaveChannel(ctx);
}

export async function leaveChannel(ctx: PluginContext): Promise<void> {
  const token = botToken(ctx.settings);
  if (!token) return;
  const res = await call(ctx.http, token, "leaveChat", {
    chat_id: String(ctx.credentials.chat_id ?? ctx.account.remoteId),
  });
  if (!res.ok) ctx.log.warn("telegram: the bot could not leave the channel", { reason: res.outcome.reason });
}

/** A channel's audience is its member count, which a bot that is a member may read. */
async function accountStats(ctx: PluginContext): Promise<AccountStats> {
  const token = botToken(ctx.settings);
  if (!token) throw new Error(notConfigured);
  const res = await call(ctx.http, token, "getChatMemberCount", {
    chat_id: String(ctx.credentials.chat_id ?? ctx.account.remoteId),
  });
  if (!res.ok) throw new Error(`Telegram getChatMemberCount: ${res.outcome.reason}`);
  return { followers: typeof res.body.result === "number" ? res.body.result : null };
}

export default definePlugin({
  platform: "telegram",
  displayName: "Telegram",
  capabilities: {
    destination: true,
    source: false,
    backfill: false,
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
      "image/webp",
      "image/gif",
      "video/mp4",
      "video/quicktime",
      "video/webm",
    ],
    convertible_formats: {},
    max_size_bytes: { image: PHOTO_MAX, video: FILE_MAX, gif: FILE_MAX },
    file_constraints: {
      maxFiles: ALBUM_MAX,
      maxImageFiles: ALBUM_MAX,
      maxVideoFiles: ALBUM_MAX,
      maxGifFiles: 1,
      allowMixedMedia: true,
      gifBehavior: "animation_alone",
      maxPhotoWidthPlusHeight: 10000,
    },
    required_media: null,
    max_hashtags: null,
    min_video_duration_seconds: null,
    max_video_duration_seconds: null,
    // Photos: "width and height ratio must be at most 20" (core.telegram.org/bots/api#sendphoto, checked
    // 2026-11-26); the same rule's width plus height of at most 10000 is file_constraints.maxPhotoWidthPlusHeight.
    aspect_ratio: { image: { min: "1:20", max: "20:1" } },
    thumbnail: null,
  },
  optionsSchema,
  textLimit: { max: TEXT_MAX, unit: "utf16", withMediaMax: CAPTION_MAX },
  // No alt text: the Bot API's sendPhoto, sendVideo and sendMediaGroup take no alt text (checked 2026-11-26); media[].alt_text is ignored.
  altText: null,
  defaultApiUrl: DEFAULT_API_URL,
  // Per channel (= per account: the engine publishes to one at a time) about 1 message a second and 20 a
  // minute; per bot, so across every account of this server, "no more than 30 messages per second or so"
  // (core.telegram.org/bots/faq, "Broadcasting to users"). 8 calls at once of ≥ 250 ms each stay near
  // that; a 429 carries retry_after and requeues the target.
  concurrency: 8,
  connect: {
    mode: "credential_form_url",
    requiredSettings: ["CRIER_TELEGRAM_BOT_TOKEN"],
    title: "Connect a Telegram channel",
    instructions:
      "In Telegram, open the channel → Administrators → Add administrator, pick this server's bot and allow it to post messages " +
      "(and to delete messages, if it should remove the code afterwards). Then post the code below in the channel, " +
      "and enter the channel: its @username for a public channel, or its numeric id (like -1001234567890) for a private one.",
    fields: [
      {
        name: "channel",
        label: "Channel",
        type: "text",
        placeholder: "@mychannel",
        help: "@username, t.me link, or numeric id",
      },
    ],
    prepare,
    verify,
  },
  disconnect: {
    disableRecord: true,
    message:
      "Channel disconnected and its record disabled. The bot leaves the channel when no other account of this server uses it.",
  },
  onDisconnect,
  classifyResponse,
  publish,
  accountStats,
});
