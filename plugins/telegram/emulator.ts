/**
 * An emulator of the Bot API methods the Telegram plugin calls, at /bot<token>/<method>. Parameters are
 * read from the query, JSON, urlencoded or multipart bodies as Telegram reads them; answers are
 * `{ok:true,result}` or `{ok:false,error_code,description,parameters?}`. It checks the token, the bot's
 * rights in the channel (administrator with can_post_messages), text 4096 and caption 1024 (UTF-16
 * units), albums of 2 to 10 photos and videos, upload sizes (photo 10 MB, other files 50 MB),
 * attach:// references and replies to existing messages. Posts an administrator makes in a channel
 * (channelPost(), a person's action) reach the bots of that channel as `channel_post` updates, read with
 * getUpdates (offset confirms, limit 1-100, allowed_updates, refused while a webhook is set) and kept 24
 * hours; deleteMessage removes one.
 *
 * Sandbox rule: any well-formed token is a bot, and a channel named for the first time exists with that
 * bot as its administrator. Tests shape other situations with channel() and revokeToken(). A sandbox user
 * has no Telegram app to post from: POST /crier-sandbox/channel-post {chat_id, text} posts as the
 * channel's administrator (the sandbox setting SANDBOX_ADMIN_POST_PATH names it to the plugin).
 */
import { breach, inspectMedia, type MediaRule } from "../../src/platform/emulator-media.ts";
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import { failingHandler, FailurePlan, resettable, emulatorState } from "../../src/platform/emulator-kit.ts";
import type { ApiMethods, Chat, ChatMemberAdministrator, Message, Update, User } from "@grammyjs/types";

/**
 * The Bot API's methods and answers as grammY's generated types declare them (Bot API 9, checked
 * 2026-11-26): each method the emulator serves must be one of them, and what it answers must have the
 * type the method returns, so an answer the adapter reads cannot drift from Telegram's own shape.
 */
type Bot_ = ApiMethods<File>;
type Answer<M extends keyof Bot_> = Awaited<ReturnType<Bot_[M]>>;
/**
 * The sends answer a Message whose kind (text, photo, video…) the emulator builds from the request; their
 * answers are checked down to the fields every message has (and the adapter reads).
 */
type Sent = Pick<Message, "message_id" | "date" | "chat">;
type SendMethod = "sendMessage" | "sendPhoto" | "sendVideo" | "sendAnimation" | "sendMediaGroup";
type Served<M extends keyof Bot_> = M extends SendMethod ? (Answer<M> extends unknown[] ? Sent[] : Sent) : Answer<M>;

const MB = 1024 * 1024;
const TOKEN = /^(\d{5,15}):[A-Za-z0-9_-]{30,}$/;
/** The token sandbox profiles use: any well-formed token works, this one is what the server is given. */
export const SANDBOX_BOT_TOKEN = "7000000001:SANDBOX_crier_bot_token_for_the_emulator";
/** Where a sandbox user's post as the channel's administrator is made (not a Bot API method). */
export const SANDBOX_ADMIN_POST_PATH = "/crier-sandbox/channel-post";
// core.telegram.org/bots/api#getupdates (checked 2026-11-26): updates wait for at most 24 hours, and
// without allowed_updates a bot gets every kind but chat_member, message_reaction and message_reaction_count.
const UPDATE_TTL_MS = 24 * 3600_000;
const DEFAULT_EXCLUDED = ["chat_member", "message_reaction", "message_reaction_count"];

type Status = "creator" | "administrator" | "member" | "left" | "kicked";

interface Bot {
  id: number;
  username: string;
  firstName: string;
}

interface Channel {
  id: number;
  title: string;
  username?: string;
  members: Map<number, { status: Status; canPost: boolean; canDelete?: boolean }>;
  nextMessageId: number;
  messages: Map<number, Record<string, unknown>>;
}

export interface ChannelSetup {
  title?: string;
  /** A public channel has a username; without one the channel is private. */
  username?: string | null;
  /** The bot's place in the channel (default administrator). */
  botStatus?: Status;
  /** An administrator's "Post messages" right (default true). */
  canPost?: boolean;
  /** An administrator's "Delete messages" right (default false). */
  canDelete?: boolean;
  /** Which bot the setup is about (default the sandbox bot). */
  token?: string;
}

export interface TelegramEmulator extends Emulator {
  /** Creates or changes a channel; `ref` is "@username" or a numeric id. Returns the chat id. */
  channel(ref: string, setup?: ChannelSetup): number;
  /** Makes Telegram answer 401 Unauthorized to a token, as after /revoke in @BotFather. */
  revokeToken(token: string): void;
  /** The messages of a channel as Telegram returned them (an album is one message per item). */
  messages(chatId: number): Record<string, unknown>[];
  /** The bot's status in a channel, e.g. "left" after leaveChat. */
  botStatus(chatId: number, token?: string): Status;
  /**
   * A person who administers the channel posts `text` in it (as Telegram's apps do: signed by the channel).
   * Every bot of the channel gets it as a channel_post update. Returns the message id.
   */
  channelPost(chatId: number, text: string): number;
}

class TgError extends Error {
  constructor(
    readonly code: number,
    description: string,
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
}

const reply = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const bad = (d: string) => new TgError(400, `Bad Request: ${d}`);

type Params = Record<string, string | File>;

async function readParams(req: Request, url: URL): Promise<Params> {
  const out: Params = {};
  url.searchParams.forEach((v, k) => (out[k] = v));
  if (req.method !== "POST") return out;
  const type = req.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    const body = await req.json().catch(() => {
      throw bad("can't parse JSON object");
    });
    for (const [k, v] of Object.entries(body ?? {})) out[k] = typeof v === "string" ? v : JSON.stringify(v);
  } else if (type.includes("multipart/form-data") || type.includes("application/x-www-form-urlencoded")) {
    const fd = await req.formData();
    fd.forEach((v, k) => (out[k] = v as string | File));
  }
  return out;
}

const str = (p: Params, k: string) => (typeof p[k] === "string" ? (p[k] as string) : undefined);
const flag = (p: Params, k: string) => {
  const v = str(p, k);
  return v === undefined ? undefined : v === "true" || v === "1";
};
function obj<T>(p: Params, k: string): T | undefined {
  const v = str(p, k);
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as T;
  } catch {
    throw bad(`can't parse ${k} JSON object`);
  }
}

/**
 * sendPhoto (core.telegram.org/bots/api#sendphoto, checked 2026-11-26): "The photo must be at most 10 MB
 * in size. The photo's width and height must not exceed 10000 in total. Width and height ratio must be
 * at most 20."
 */
const PHOTO_RULE: MediaRule = { maxSideSum: 10000, minAspect: 1 / 20, maxAspect: 20 };

function looksLikeImage(b: Uint8Array): boolean {
  const ascii = (from: number, to: number) => String.fromCharCode(...b.subarray(from, to));
  return (
    (b[0] === 0xff && b[1] === 0xd8) ||
    ascii(1, 4) === "PNG" ||
    ascii(0, 3) === "GIF" ||
    (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP")
  );
}

export function createTelegramEmulator(opts: { now?: () => number } = {}): TelegramEmulator {
  const now = opts.now ?? Date.now;
  const failures = new FailurePlan();
  const state = resettable(() => ({
    bots: new Map<string, Bot>(),
    revoked: new Set<string>(),
    channels: new Map<number, Channel>(),
    files: new Set<string>(),
    emulated: [] as EmulatedPost[],
    channelSeq: 1_000_000_001,
    // Per bot id: its unconfirmed updates, its allowed_updates (absent: the default), its webhook URL.
    updates: new Map<number, Update[]>(),
    allowedUpdates: new Map<number, string[]>(),
    webhooks: new Map<number, string>(),
    updateSeq: 100_000_001,
    // "<chat id>:<message id>" of the messages people (not bots) posted: deleteMessage tells them apart.
    peoplePosts: new Set<string>(),
  }));
  // Channel ids are -100 followed by ten digits.
  const newChannelId = () => -(1_000_000_000_000 + state.channelSeq++);

  function botFor(token: string): Bot {
    const m = TOKEN.exec(token);
    if (!m) throw new TgError(404, "Not Found");
    if (state.revoked.has(token)) throw new TgError(401, "Unauthorized");
    let bot = state.bots.get(token);
    if (!bot) {
      bot = { id: Number(m[1]), username: `crier_${m[1]}_bot`, firstName: "Crier" };
      state.bots.set(token, bot);
    }
    return bot;
  }

  const byUsername = (u: string) =>
    [...state.channels.values()].find((c) => c.username?.toLowerCase() === u.toLowerCase());

  function createChannel(id: number, username: string | undefined, bot: Bot): Channel {
    const ch: Channel = {
      id,
      title: username ? `${username} (sandbox)` : `Private channel ${id}`,
      username,
      members: new Map(),
      nextMessageId: 1,
      messages: new Map(),
    };
    ch.members.set(bot.id, { status: "administrator", canPost: true });
    state.channels.set(id, ch);
    return ch;
  }

  /** The chat a chat_id names; unknown channels spring into existence with this bot as admin (sandbox). */
  function chatOf(p: Params, bot: Bot): Channel {
    const ref = str(p, "chat_id")?.trim();
    if (!ref) throw bad("chat_id is empty");
    if (ref.startsWith("@")) {
      const name = ref.slice(1);
      if (!/^[a-zA-Z][a-zA-Z0-9_]{3,31}$/.test(name)) throw bad("chat not found");
      return byUsername(name) ?? createChannel(newChannelId(), name, bot);
    }
    if (!/^-?\d+$/.test(ref)) throw bad("chat not found");
    const id = Number(ref);
    const found = state.channels.get(id);
    if (found) {
      // A private channel is invisible to a bot that is not in it.
      if (!found.username && !isIn(found, bot)) throw bad("chat not found");
      return found;
    }
    if (ref.startsWith("-100")) return createChannel(id, undefined, bot);
    throw bad("chat not found");
  }

  const memberOf = (ch: Channel, bot: Bot) => ch.members.get(bot.id) ?? { status: "left" as Status, canPost: false };
  const isIn = (ch: Channel, bot: Bot) => ["creator", "administrator", "member"].includes(memberOf(ch, bot).status);

  function mayPost(ch: Channel, bot: Bot) {
    const m = memberOf(ch, bot);
    if (m.status === "kicked") throw new TgError(403, "Forbidden: bot was kicked from the channel chat");
    if (m.status === "left") throw new TgError(403, "Forbidden: bot is not a member of the channel chat");
    if (m.status === "member" || (m.status === "administrator" && !m.canPost))
      throw bad("need administrator rights in the channel chat");
  }

  const chatJson = (ch: Channel) => ({
    id: ch.id,
    title: ch.title,
    type: "channel" as const,
    ...(ch.username && { username: ch.username }),
  });
  const userJson = (bot: Bot) => ({
    id: bot.id,
    is_bot: true as const,
    first_name: bot.firstName,
    username: bot.username,
  });
  /** An administrator's rights as getChatMember lists them (all required fields of ChatMemberAdministrator). */
  const adminJson = (user: User, canPost: boolean, canDelete = false): ChatMemberAdministrator => ({
    status: "administrator",
    user,
    can_be_edited: false,
    is_anonymous: false,
    can_manage_chat: true,
    can_delete_messages: canDelete,
    can_manage_video_chats: false,
    can_restrict_members: false,
    can_promote_members: false,
    can_change_info: false,
    can_invite_users: true,
    can_post_stories: false,
    can_edit_stories: false,
    can_delete_stories: false,
    can_send_welcome_messages: false,
    can_post_messages: canPost,
    can_edit_messages: canPost,
  });

  function replyTarget(p: Params, ch: Channel): number | null {
    const rp = obj<{ message_id?: number }>(p, "reply_parameters");
    const legacy = str(p, "reply_to_message_id");
    const id = rp?.message_id ?? (legacy ? Number(legacy) : undefined);
    if (id === undefined) return null;
    if (!Number.isInteger(id) || !ch.messages.has(id)) throw bad("message to be replied not found");
    return id;
  }

  function checkCaption(caption: string | undefined) {
    if (caption !== undefined && caption.trimEnd().length > 1024) throw bad("message caption is too long");
  }

  /** A file parameter: an uploaded part, attach://<part>, a file_id this server issued, or an HTTP URL. */
  function fileOf(p: Params, value: string | File | undefined, kind: "photo" | "video" | "animation" | "document") {
    let f = value;
    if (typeof f === "string" && f.startsWith("attach://")) {
      f = p[f.slice("attach://".length)];
      if (!(f instanceof File)) throw bad("wrong file identifier/HTTP URL specified");
    }
    if (f === undefined || f === "") throw bad(`there is no ${kind} in the request`);
    if (typeof f === "string") {
      if (/^https?:\/\//.test(f)) return { type: kind, contentType: undefined, size: undefined };
      if (!state.files.has(f)) throw bad("wrong file identifier/HTTP URL specified");
      return { type: kind, contentType: undefined, size: undefined };
    }
    return { type: kind, contentType: f.type, size: f.size, file: f };
  }

  async function checkUpload(m: { type: string; size?: number; file?: File }) {
    if (!m.file) return;
    if (m.size! > 50 * MB) throw new TgError(413, "Request Entity Too Large");
    if (m.type === "photo") {
      if (m.size! > 10 * MB) throw bad("PHOTO_INVALID_DIMENSIONS");
      const bytes = new Uint8Array(await m.file.arrayBuffer());
      if (!looksLikeImage(bytes.subarray(0, 16))) throw bad("IMAGE_PROCESS_FAILED");
      if (breach(inspectMedia(bytes), PHOTO_RULE)) throw bad("PHOTO_INVALID_DIMENSIONS");
    }
  }

  function fileJson(kind: string, m: { size?: number }) {
    const file_id = `${kind.toUpperCase()}_${crypto.randomUUID().replaceAll("-", "")}`;
    state.files.add(file_id);
    const base = { file_id, file_unique_id: file_id.slice(-16), ...(m.size !== undefined && { file_size: m.size }) };
    return kind === "photo"
      ? [{ ...base, width: 1280, height: 720 }]
      : { ...base, width: 1280, height: 720, duration: 1 };
  }

  function record(
    ch: Channel,
    msgs: Record<string, unknown>[],
    p: Params,
    text: string,
    media: EmulatedPost["media"],
    replyTo: number | null,
    extra: Record<string, unknown> = {},
  ) {
    state.emulated.push({
      id: String(msgs[0].message_id),
      text,
      media,
      replyTo: replyTo === null ? null : String(replyTo),
      options: {
        chat_id: ch.id,
        ...(flag(p, "disable_notification") !== undefined && { disable_notification: flag(p, "disable_notification") }),
        ...(flag(p, "protect_content") !== undefined && { protect_content: flag(p, "protect_content") }),
        ...extra,
      },
      createdAt: new Date(now()),
    });
  }

  /**
   * A channel post. Its common part is typed as the Bot API's Message; the part that makes it a text,
   * photo or video message is the caller's, and the method's answer type checks the whole.
   */
  function newMessage<T extends object>(ch: Channel, p: Params, replyTo: number | null, fields: T) {
    const common: Message.CommonMessage & { chat: Message["chat"] } = {
      message_id: ch.nextMessageId++,
      sender_chat: chatJson(ch),
      chat: chatJson(ch),
      date: Math.floor(now() / 1000),
      ...(replyTo !== null && {
        // Stored without its own reply_to_message, as Telegram nests one level only.
        reply_to_message: ch.messages.get(replyTo) as unknown as NonNullable<Message.CommonMessage["reply_to_message"]>,
      }),
      ...(flag(p, "protect_content") && { has_protected_content: true as const }),
    };
    const msg = { ...common, ...fields };
    ch.messages.set(msg.message_id, { ...msg, reply_to_message: undefined });
    return msg;
  }

  /** Queues an update for every bot of the channel that asked for its kind. */
  function deliver(ch: Channel, kind: "channel_post", message: Message & Update.Channel) {
    for (const bot of state.bots.values()) {
      if (!isIn(ch, bot)) continue;
      const allowed = state.allowedUpdates.get(bot.id);
      if (allowed ? !allowed.includes(kind) : DEFAULT_EXCLUDED.includes(kind)) continue;
      const queue = state.updates.get(bot.id) ?? [];
      const update: Update = { update_id: state.updateSeq++, [kind]: message };
      queue.push(update);
      state.updates.set(bot.id, queue);
    }
  }

  function postAsAdmin(ch: Channel, text: string): number {
    const chat: Chat.ChannelChat = {
      id: ch.id,
      title: ch.title,
      type: "channel",
      ...(ch.username && { username: ch.username }),
    };
    const message: Message.TextMessage & Update.Channel = {
      message_id: ch.nextMessageId++,
      sender_chat: chat,
      chat,
      date: Math.floor(now() / 1000),
      text,
    };
    ch.messages.set(message.message_id, { ...message });
    state.peoplePosts.add(`${ch.id}:${message.message_id}`);
    deliver(ch, "channel_post", message);
    return message.message_id;
  }

  /** The bot's unconfirmed updates younger than 24 hours, oldest first. */
  function pending(bot: Bot): Update[] {
    const fresh = (state.updates.get(bot.id) ?? []).filter(
      (u) => now() - 1000 * (u.channel_post?.date ?? Math.floor(now() / 1000)) < UPDATE_TTL_MS,
    );
    state.updates.set(bot.id, fresh);
    return fresh;
  }

  async function sendSingle(p: Params, bot: Bot, kind: "photo" | "video" | "animation") {
    const ch = chatOf(p, bot);
    mayPost(ch, bot);
    const caption = str(p, "caption");
    checkCaption(caption);
    const m = fileOf(p, p[kind], kind);
    await checkUpload(m);
    const replyTo = replyTarget(p, ch);
    const msg = newMessage(ch, p, replyTo, { [kind]: fileJson(kind, m), ...(caption && { caption }) });
    record(
      ch,
      [msg],
      p,
      caption ?? "",
      [{ type: kind === "video" ? "video" : "image", contentType: m.contentType, size: m.size }],
      replyTo,
      kind === "video" && flag(p, "supports_streaming") !== undefined
        ? { supports_streaming: flag(p, "supports_streaming") }
        : {},
    );
    return msg;
  }

  const methods: { [M in keyof Bot_]?: (p: Params, bot: Bot) => Served<M> | Promise<Served<M>> } = {
    getMe: (_p, bot) => ({
      ...userJson(bot),
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
      can_connect_to_business: false,
      has_main_web_app: false,
      has_topics_enabled: false,
      allows_users_to_create_topics: false,
      can_manage_bots: false,
      supports_join_request_queries: false,
    }),
    getChat(p, bot) {
      const ch = chatOf(p, bot);
      return {
        ...chatJson(ch),
        accent_color_id: 0,
        max_reaction_count: 11,
        accepted_gift_types: {
          unlimited_gifts: false,
          limited_gifts: false,
          unique_gifts: false,
          premium_subscription: false,
          gifts_from_channels: false,
        },
      };
    },
    getChatMemberCount(p, bot) {
      chatOf(p, bot);
      return followers;
    },
    getChatMember(p, bot) {
      const ch = chatOf(p, bot);
      const userId = Number(str(p, "user_id"));
      if (!Number.isInteger(userId) || userId <= 0) throw bad("invalid user_id specified");
      const target = [...state.bots.values()].find((b) => b.id === userId);
      const m = ch.members.get(userId) ?? { status: "left" as Status, canPost: false };
      const user = target ? userJson(target) : { id: userId, is_bot: false, first_name: "User" };
      return m.status === "administrator"
        ? adminJson(user, m.canPost, m.canDelete ?? false)
        : m.status === "creator"
          ? { status: "creator", user, is_anonymous: false }
          : m.status === "member"
            ? { status: "member", user }
            : m.status === "kicked"
              ? { status: "kicked", user, until_date: 0 }
              : { status: "left", user };
    },
    getChatAdministrators(p, bot) {
      const ch = chatOf(p, bot);
      if (!isIn(ch, bot)) throw bad("chat not found");
      return [...ch.members.entries()]
        .filter(([, m]) => m.status === "administrator" || m.status === "creator")
        .map(([id, m]) => {
          const user = userJson(
            [...state.bots.values()].find((b) => b.id === id) ?? { id, username: `user${id}`, firstName: "User" },
          );
          return m.status === "creator"
            ? { status: "creator" as const, user, is_anonymous: false }
            : adminJson(user, m.canPost);
        });
    },
    // core.telegram.org/bots/api#getupdates (checked 2026-11-26).
    getUpdates(p, bot) {
      if (state.webhooks.has(bot.id))
        throw new TgError(
          409,
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
        );
      const limit = str(p, "limit") === undefined ? 100 : Number(str(p, "limit"));
      if (!Number.isInteger(limit)) throw bad("invalid limit specified");
      const allowed = obj<string[]>(p, "allowed_updates");
      // An empty list means the default kinds; absent keeps the previous setting.
      if (Array.isArray(allowed))
        allowed.length ? state.allowedUpdates.set(bot.id, allowed) : state.allowedUpdates.delete(bot.id);
      let queue = pending(bot);
      const offset = str(p, "offset") === undefined ? undefined : Number(str(p, "offset"));
      if (offset !== undefined && Number.isInteger(offset)) {
        // A positive offset confirms every earlier update; a negative one keeps only the last -offset.
        queue = offset >= 0 ? queue.filter((u) => u.update_id >= offset) : queue.slice(offset);
        state.updates.set(bot.id, queue);
      }
      // The reference accepts 1-100 and does not say what happens outside: the nearest bound is taken.
      return queue.slice(0, Math.min(100, Math.max(1, limit)));
    },
    setWebhook(p, bot) {
      const url = str(p, "url") ?? "";
      if (url === "") state.webhooks.delete(bot.id);
      else if (!url.startsWith("https://")) throw bad("bad webhook: An HTTPS URL must be provided for webhook");
      else state.webhooks.set(bot.id, url);
      return true;
    },
    deleteWebhook(p, bot) {
      state.webhooks.delete(bot.id);
      if (flag(p, "drop_pending_updates")) state.updates.set(bot.id, []);
      return true;
    },
    // core.telegram.org/bots/api#deletemessage (checked 2026-11-26): a bot deletes any message of a
    // channel with can_delete_messages, and its own outgoing ones with can_post_messages.
    deleteMessage(p, bot) {
      const ch = chatOf(p, bot);
      const id = Number(str(p, "message_id"));
      if (!ch.messages.has(id)) throw bad("message to delete not found");
      const m = memberOf(ch, bot);
      // The emulator has one bot per channel that posts; a message no person posted is that bot's.
      const own = !state.peoplePosts.has(`${ch.id}:${id}`);
      const may = m.status === "creator" || (m.status === "administrator" && (m.canDelete || (own && m.canPost)));
      if (!may) throw bad("message can't be deleted");
      ch.messages.delete(id);
      return true;
    },
    leaveChat(p, bot) {
      const ch = chatOf(p, bot);
      if (!isIn(ch, bot)) throw new TgError(403, "Forbidden: bot is not a member of the channel chat");
      ch.members.set(bot.id, { status: "left", canPost: false });
      return true;
    },
    sendMessage(p, bot) {
      const ch = chatOf(p, bot);
      mayPost(ch, bot);
      const text = str(p, "text") ?? "";
      // Telegram trims the text and counts UTF-16 code units.
      if (!text.trim()) throw bad("message text is empty");
      if (text.trim().length > 4096) throw bad("message is too long");
      const parseMode = str(p, "parse_mode");
      if (parseMode && !["HTML", "Markdown", "MarkdownV2"].includes(parseMode))
        throw bad(`unsupported parse_mode "${parseMode}"`);
      const lpo = obj<{ is_disabled?: boolean }>(p, "link_preview_options");
      const disabled = lpo?.is_disabled ?? flag(p, "disable_web_page_preview");
      const replyTo = replyTarget(p, ch);
      const msg = newMessage(ch, p, replyTo, {
        text: text.trim(),
        ...(disabled && { link_preview_options: { is_disabled: true } }),
      });
      record(ch, [msg], p, text.trim(), [], replyTo, disabled !== undefined ? { link_preview_disabled: disabled } : {});
      return msg;
    },
    sendPhoto: (p, bot) => sendSingle(p, bot, "photo"),
    sendVideo: (p, bot) => sendSingle(p, bot, "video"),
    sendAnimation: (p, bot) => sendSingle(p, bot, "animation"),
    async sendMediaGroup(p, bot) {
      const ch = chatOf(p, bot);
      mayPost(ch, bot);
      const items = obj<{ type?: string; media?: string; caption?: string }[]>(p, "media");
      if (!Array.isArray(items)) throw bad("media must be an array of InputMedia");
      if (items.length < 2 || items.length > 10) throw bad("wrong number of media in the group: 2 to 10 are allowed");
      const kinds = new Set(items.map((i) => i.type));
      for (const k of kinds)
        if (!["photo", "video", "audio", "document"].includes(k ?? ""))
          throw bad(`unsupported media type "${k}" in the group`);
      if ((kinds.has("audio") || kinds.has("document")) && kinds.size > 1)
        throw bad("audio and documents can be grouped only with their own type");
      const uploads = [];
      for (const it of items) {
        checkCaption(it.caption);
        const m = fileOf(p, it.media, it.type as "photo");
        await checkUpload(m);
        uploads.push({ it, m });
      }
      const replyTo = replyTarget(p, ch);
      const groupId = String(Date.now()) + Math.floor(Math.random() * 1000);
      const msgs = uploads.map(({ it, m }) =>
        newMessage(ch, p, replyTo, {
          media_group_id: groupId,
          [it.type!]: fileJson(it.type!, m),
          ...(it.caption && { caption: it.caption }),
        }),
      );
      record(
        ch,
        msgs,
        p,
        items
          .map((i) => i.caption)
          .filter(Boolean)
          .join("\n"),
        uploads.map(({ it, m }) => ({
          type: it.type === "photo" ? "image" : it.type!,
          contentType: m.contentType,
          size: m.size,
        })),
        replyTo,
      );
      return msgs;
    },
  };

  function failureResponse(f: FailureSpec): Response | null {
    if (f.kind === "rate_limit") {
      const s = f.retryAfterSeconds ?? 30;
      return reply(
        {
          ok: false,
          error_code: 429,
          description: `Too Many Requests: retry after ${s}`,
          parameters: { retry_after: s },
        },
        429,
      );
    }
    if (f.kind === "server_error")
      return reply({ ok: false, error_code: 500, description: "Internal Server Error" }, 500);
    if (f.kind === "auth_expired") return reply({ ok: false, error_code: 401, description: "Unauthorized" }, 401);
    return null;
  }

  const botCall = (path: string) => {
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(path);
    return m && { token: m[1], name: m[2] };
  };

  // A failure's `on` may name the Bot API method; the token is masked out of the path it sees.
  const botApi = failingHandler({
    failures,
    canFail: () => true,
    failureNames(path) {
      const { token, name } = botCall(path)!;
      return [path.replace(token, "***"), name];
    },
    failureResponse,
    async route(req, path) {
      const { token, name } = botCall(path)!;
      const bot = botFor(token);
      // Method names are case-insensitive in the Bot API.
      const method = Object.entries(methods).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
      if (!method) throw new TgError(404, "Not Found: method not found");
      const params = await readParams(req, new URL(req.url));
      return reply({ ok: true, result: await method(params, bot) });
    },
    error: TgError,
    errorResponse: (e) =>
      reply(
        { ok: false, error_code: e.code, description: e.message, ...(e.parameters && { parameters: e.parameters }) },
        e.code,
      ),
  });

  /** The sandbox user's post (see the header): an existing channel, a non-empty text. */
  async function sandboxAdminPost(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => null)) as { chat_id?: unknown; text?: unknown } | null;
    const ch = state.channels.get(Number(body?.chat_id));
    if (!ch || typeof body?.text !== "string" || !body.text.trim())
      return reply(
        { ok: false, error_code: 400, description: "Bad Request: chat_id of a channel and text needed" },
        400,
      );
    return reply({ ok: true, result: { message_id: postAsAdmin(ch, body.text) } });
  }

  // The member count every channel reports (accountStats); tests set it with setFollowers().
  let followers = 1000;

  return {
    platform: "telegram",
    state: emulatorState({ state }),
    // Both spellings: the sandbox fills required settings with placeholders under their full names.
    sandboxSettings: {
      CRIER_TELEGRAM_BOT_TOKEN: SANDBOX_BOT_TOKEN,
      BOT_TOKEN: SANDBOX_BOT_TOKEN,
      SANDBOX_ADMIN_POST_PATH,
    },
    async handle(req, path) {
      if (path === SANDBOX_ADMIN_POST_PATH && req.method === "POST") return sandboxAdminPost(req);
      if (!botCall(path)) return reply({ ok: false, error_code: 404, description: "Not Found" }, 404);
      return botApi.handle(req, path);
    },
    failNext: botApi.failNext,
    posts: () => [...state.emulated],
    setFollowers(n) {
      followers = n;
    },
    reset() {
      failures.clear();
      state.reset();
    },
    channel(ref, setup = {}) {
      const bot = botFor(setup.token ?? SANDBOX_BOT_TOKEN);
      const username = ref.startsWith("@") ? ref.slice(1) : undefined;
      let ch = username ? byUsername(username) : state.channels.get(Number(ref));
      if (!ch) ch = createChannel(username ? newChannelId() : Number(ref), username, bot);
      if (setup.title !== undefined) ch.title = setup.title;
      if (setup.username !== undefined) ch.username = setup.username ?? undefined;
      const current = memberOf(ch, bot);
      ch.members.set(bot.id, {
        status: setup.botStatus ?? current.status,
        canPost:
          setup.canPost ?? (setup.botStatus === undefined ? current.canPost : setup.botStatus === "administrator"),
        canDelete: setup.canDelete ?? current.canDelete,
      });
      return ch.id;
    },
    channelPost(chatId, text) {
      const ch = state.channels.get(chatId);
      if (!ch) throw new Error(`no channel ${chatId} in the Telegram emulator`);
      return postAsAdmin(ch, text);
    },
    revokeToken: (token) => void state.revoked.add(token),
    messages: (chatId) => [...(state.channels.get(chatId)?.messages.values() ?? [])],
    botStatus(chatId, token = SANDBOX_BOT_TOKEN) {
      const ch = state.channels.get(chatId);
      return ch ? memberOf(ch, botFor(token)).status : "left";
    },
  };
}

export default defineEmulator(() => createTelegramEmulator());
