/**
 * An emulator of the part of Discord's REST API (v10) the plugin calls, written from
 * discord.com/developers/docs (checked 2026-11-26): the bot's user and servers, a server's channels,
 * roles and members, a channel's messages (JSON or multipart with payload_json and files[n]), one
 * message, and incoming webhooks (get, execute with ?wait=true, get its message). It answers Discord's
 * error shape `{message, code, errors?}`: 401 for an unknown or revoked token, 403 Missing Access (50001)
 * or Missing Permissions (50013) from the bot's permissions in the channel (computed as
 * topics/permissions describes), 404 Unknown Channel (10003) / Unknown Webhook (10015), 400 Invalid Form
 * Body (50035) for content over 2000 characters, more than 10 embeds or 6000 embed characters, more than
 * 10 files or a nonce over 25 characters, 400 50006 for an empty message, 413 (40005) for files over
 * 10 MiB, and 429 with retry_after. enforce_nonce returns the message already made with that nonce.
 * Under the tests its codes, bits and flags are checked against discord-api-types at runtime.
 *
 * Sandbox rule: any well-formed bot token is a bot in a server "Crier sandbox" (#general, #announcements,
 * a voice channel, and #staff it cannot see). A sandbox user has no Discord app: POST
 * /crier-sandbox/user-post {channel_id, content} posts as the server's owner (SANDBOX_USER_POST_PATH).
 */
import { defineEmulator, type EmulatedPost, type Emulator, type FailureSpec } from "../../src/platform/sdk.ts";
import { emulatorState, failingHandler, FailurePlan, resettable } from "../../src/platform/emulator-kit.ts";
import { contractPackage } from "../../src/platform/contract.ts";
import type { APIMessage, RESTPostAPIChannelMessageJSONBody } from "discord-api-types/v10";

const MIB = 1024 * 1024;
// docs: reference#uploading-files ("default file upload limit of 10 MiB"), resources/message#create-message.
const UPLOAD_MAX = 10 * MIB;
const CONTENT_MAX = 2000;
const EMBEDS_MAX = 10;
const EMBED_CHARS_MAX = 6000;
const FILES_MAX = 10;
const NONCE_MAX = 25;
/** "checked for uniqueness in the past few minutes": the emulator keeps nonces five. */
const NONCE_WINDOW_MS = 5 * 60_000;
const TOKEN = /^[A-Za-z0-9._-]{20,}$/;
export const SANDBOX_BOT_TOKEN = "sandbox.crier-discord-bot.token";
export const SANDBOX_APPLICATION_ID = "1300000000000000001";
export const SANDBOX_USER_POST_PATH = "/crier-sandbox/user-post";

/** Bits of docs: topics/permissions. */
const P = {
  ADMINISTRATOR: 1n << 3n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MANAGE_WEBHOOKS: 1n << 29n,
};
/** JSON error codes of docs: topics/opcodes-and-status-codes. */
const CODES = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownWebhook: 10015,
  RequestEntityTooLarge: 40005,
  MissingAccess: 50001,
  CannotSendAnEmptyMessage: 50006,
  MissingPermissions: 50013,
  InvalidWebhookToken: 50027,
  InvalidFormBodyOrContentType: 50035,
};

type DiscordTypes = typeof import("discord-api-types/v10");
const contract = contractPackage<DiscordTypes>("discord-api-types/v10");
let checked = false;
/** The emulator's documented numbers are the contract's: a drift fails every test that uses it. */
async function checkFacts(): Promise<void> {
  if (checked) return;
  const c = await contract();
  if (!c) return;
  for (const [name, code] of Object.entries(CODES))
    if ((c.RESTJSONErrorCodes as unknown as Record<string, number>)[name] !== code)
      throw new Error(`discord emulator: error ${name} is not ${code}`);
  for (const [name, bit] of Object.entries(P)) {
    const key = name
      .split("_")
      .map((w) => w[0] + w.slice(1).toLowerCase())
      .join("") as keyof typeof c.PermissionFlagsBits;
    if (c.PermissionFlagsBits[key] !== bit) throw new Error(`discord emulator: permission ${name} is not ${bit}`);
  }
  if (c.ChannelType.GuildText !== 0 || c.ChannelType.GuildAnnouncement !== 5)
    throw new Error("discord emulator: channel types drifted");
  checked = true;
}

class DiscordError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: number,
    readonly errors?: unknown,
  ) {
    super(message);
  }
}
const formError = (field: string, message: string, code = "BASE_TYPE_MAX_LENGTH") =>
  new DiscordError(400, "Invalid Form Body", CODES.InvalidFormBodyOrContentType, {
    [field]: { _errors: [{ code, message }] },
  });

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

interface User {
  id: string;
  username: string;
  bot?: boolean;
}
interface Overwrite {
  id: string;
  type: number;
  allow: string;
  deny: string;
}
interface Channel {
  id: string;
  guild_id: string;
  name: string;
  type: number;
  permission_overwrites: Overwrite[];
  messages: APIMessage[];
}
interface Guild {
  id: string;
  name: string;
  owner_id: string;
  roles: { id: string; name: string; permissions: string }[];
  members: Map<string, string[]>;
}

export interface DiscordEmulator extends Emulator {
  /** The sandbox server a bot token sees (made on first use). */
  sandbox(token?: string): {
    guildId: string;
    general: string;
    announcements: string;
    voice: string;
    staff: string;
    ownerId: string;
    memberId: string;
    botId: string;
  };
  /** A person posts in a channel (default: the server's owner). Returns the message id. */
  userPost(channelId: string, content: string, userId?: string): string;
  /** An incoming webhook of the channel; returns its URL as Discord shows it. */
  createWebhook(channelId: string, name?: string): string;
  deleteWebhook(url: string): void;
  revokeToken(token: string): void;
  /** Denies the bot bits in a channel through a member overwrite. */
  denyBot(channelId: string, bits: bigint, token?: string): void;
  /** Adds `count` reactions of one emoji to a message. */
  react(channelId: string, messageId: string, count: number): void;
  messages(channelId: string): APIMessage[];
}

export function createDiscordEmulator(opts: { now?: () => number } = {}): DiscordEmulator {
  const now = opts.now ?? Date.now;
  const failures = new FailurePlan();
  const state = resettable(() => ({
    // A counter (JSON-safe for the sandbox's saved state) added to a snowflake-sized base.
    seq: 0,
    bots: new Map<string, User>(),
    revoked: new Set<string>(),
    users: new Map<string, User>(),
    guilds: new Map<string, Guild>(),
    channels: new Map<string, Channel>(),
    webhooks: new Map<
      string,
      { id: string; token: string; channel_id: string; guild_id: string; name: string; user: User }
    >(),
    nonces: new Map<string, { message: APIMessage; at: number }>(),
    posts: [] as EmulatedPost[],
    followers: 42,
  }));
  const snowflake = () => String(1_310_000_000_000_000_000n + BigInt(state.seq++));

  function newGuild(bot: User): Guild {
    const owner: User = { id: snowflake(), username: "sandbox_owner" };
    const member: User = { id: snowflake(), username: "sandbox_member" };
    state.users.set(owner.id, owner).set(member.id, member);
    const id = snowflake();
    const botRole = snowflake();
    const everyone = P.VIEW_CHANNEL | P.SEND_MESSAGES | P.READ_MESSAGE_HISTORY | P.EMBED_LINKS | P.ATTACH_FILES;
    const guild: Guild = {
      id,
      name: "Crier sandbox",
      owner_id: owner.id,
      roles: [
        { id, name: "@everyone", permissions: String(everyone) },
        // The invite link's permissions become the bot's own role when it joins.
        { id: botRole, name: bot.username, permissions: String(everyone | (1n << 35n) | (1n << 38n)) },
      ],
      members: new Map([
        [owner.id, []],
        [member.id, []],
        [bot.id, [botRole]],
      ]),
    };
    state.guilds.set(id, guild);
    const add = (name: string, type: number, overwrites: Overwrite[] = []) => {
      const ch: Channel = {
        id: snowflake(),
        guild_id: id,
        name,
        type,
        permission_overwrites: overwrites,
        messages: [],
      };
      state.channels.set(ch.id, ch);
    };
    add("general", 0);
    add("announcements", 5);
    add("voice", 2);
    add("staff", 0, [{ id, type: 0, allow: "0", deny: String(P.VIEW_CHANNEL) }]);
    return guild;
  }

  function botFor(req: Request): User {
    const auth = req.headers.get("authorization") ?? "";
    const token = auth.startsWith("Bot ") ? auth.slice(4) : "";
    if (!TOKEN.test(token) || state.revoked.has(token)) throw new DiscordError(401, "401: Unauthorized", 0);
    let bot = state.bots.get(token);
    if (!bot) {
      bot = { id: snowflake(), username: "Crier Sandbox", bot: true };
      state.bots.set(token, bot);
      state.users.set(bot.id, bot);
      newGuild(bot);
    }
    return bot;
  }

  const guildsOf = (user: User) => [...state.guilds.values()].filter((g) => g.members.has(user.id));

  function permissions(ch: Channel, userId: string): bigint {
    const g = state.guilds.get(ch.guild_id)!;
    if (g.owner_id === userId) return (1n << 64n) - 1n;
    const roles = g.members.get(userId);
    if (!roles) return 0n;
    const bits = (id: string) => BigInt(g.roles.find((r) => r.id === id)?.permissions ?? "0");
    let p = bits(g.id);
    for (const r of roles) p |= bits(r);
    if (p & P.ADMINISTRATOR) return (1n << 64n) - 1n;
    const ow = (o?: Overwrite) => (o ? (p = (p & ~BigInt(o.deny)) | BigInt(o.allow)) : p);
    ow(ch.permission_overwrites.find((o) => o.id === g.id));
    let allow = 0n;
    let deny = 0n;
    for (const o of ch.permission_overwrites)
      if (o.type === 0 && roles.includes(o.id)) {
        allow |= BigInt(o.allow);
        deny |= BigInt(o.deny);
      }
    p = (p & ~deny) | allow;
    ow(ch.permission_overwrites.find((o) => o.type === 1 && o.id === userId));
    return p;
  }

  function channelFor(id: string, bot: User): Channel {
    const ch = state.channels.get(id);
    if (!ch || !state.guilds.get(ch.guild_id)?.members.has(bot.id))
      throw new DiscordError(404, "Unknown Channel", CODES.UnknownChannel);
    if (!(permissions(ch, bot.id) & P.VIEW_CHANNEL)) throw new DiscordError(403, "Missing Access", CODES.MissingAccess);
    return ch;
  }
  const need = (ch: Channel, bot: User, bit: bigint) => {
    if (!(permissions(ch, bot.id) & bit)) throw new DiscordError(403, "Missing Permissions", CODES.MissingPermissions);
  };
  const channelJson = (ch: Channel) => ({
    id: ch.id,
    guild_id: ch.guild_id,
    name: ch.name,
    type: ch.type,
    position: 0,
    permission_overwrites: ch.permission_overwrites,
    nsfw: false,
  });

  async function readMessageRequest(req: Request): Promise<{ body: RESTPostAPIChannelMessageJSONBody; files: File[] }> {
    const type = req.headers.get("content-type") ?? "";
    if (type.includes("multipart/form-data")) {
      const form = await req.formData();
      const files: File[] = [];
      for (const [k, v] of form.entries()) {
        const m = /^files\[(\d+)\]$/.exec(k);
        if (m && typeof v !== "string") files[Number(m[1])] = v;
      }
      const payload = form.get("payload_json");
      const body = typeof payload === "string" ? JSON.parse(payload) : {};
      return { body, files: files.filter(Boolean) };
    }
    if (type.includes("application/json"))
      return { body: (await req.json()) as RESTPostAPIChannelMessageJSONBody, files: [] };
    throw new DiscordError(400, "Invalid Form Body", CODES.InvalidFormBodyOrContentType);
  }

  /** The documented limits of a message, as Discord refuses them. */
  function validate(body: RESTPostAPIChannelMessageJSONBody, files: File[]): void {
    if (body.content !== undefined && [...body.content].length > CONTENT_MAX)
      throw formError("content", `Must be ${CONTENT_MAX} or fewer in length.`);
    const embeds = body.embeds ?? [];
    if (embeds.length > EMBEDS_MAX) throw formError("embeds", `Must be ${EMBEDS_MAX} or fewer in length.`);
    const chars = embeds.reduce(
      (n, e) =>
        n +
        (e.title?.length ?? 0) +
        (e.description?.length ?? 0) +
        (e.footer?.text.length ?? 0) +
        (e.author?.name.length ?? 0) +
        (e.fields ?? []).reduce((k, f) => k + f.name.length + f.value.length, 0),
      0,
    );
    if (chars > EMBED_CHARS_MAX) throw formError("embeds", `Embed size exceeds maximum size of ${EMBED_CHARS_MAX}`);
    if (files.length > FILES_MAX) throw formError("files", `Must be ${FILES_MAX} or fewer in length.`);
    if (files.reduce((n, f) => n + f.size, 0) > UPLOAD_MAX)
      throw new DiscordError(413, "Request entity too large", CODES.RequestEntityTooLarge);
    for (const a of body.attachments ?? []) {
      if (Number(a.id) >= files.length) throw formError("attachments", "Unknown attachment id", "ATTACHMENT_NOT_FOUND");
      if (a.description && a.description.length > 1024)
        throw formError("attachments", "Must be 1024 or fewer in length.");
    }
    if (body.nonce !== undefined && String(body.nonce).length > NONCE_MAX)
      throw formError("nonce", `Must be ${NONCE_MAX} or fewer in length.`);
    if (!body.content && embeds.length === 0 && files.length === 0)
      throw new DiscordError(400, "Cannot send an empty message", CODES.CannotSendAnEmptyMessage);
  }

  function create(
    ch: Channel,
    author: User,
    body: RESTPostAPIChannelMessageJSONBody,
    files: File[],
    webhookId?: string,
  ): APIMessage {
    const id = snowflake();
    const byId = new Map((body.attachments ?? []).map((a) => [Number(a.id), a]));
    const attachments = files.map((f, i) => ({
      id: snowflake(),
      filename: byId.get(i)?.filename ?? f.name,
      ...(byId.get(i)?.description && { description: byId.get(i)!.description }),
      content_type: f.type,
      size: f.size,
      url: `https://cdn.discordapp.com/attachments/${ch.id}/${id}/${f.name}`,
      proxy_url: `https://media.discordapp.net/attachments/${ch.id}/${id}/${f.name}`,
    }));
    const ref = body.message_reference?.message_id;
    const parent = ref ? ch.messages.find((m) => m.id === ref) : undefined;
    if (ref && !parent && body.message_reference?.fail_if_not_exists !== false)
      throw formError("message_reference", "Unknown message", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE");
    const message = {
      id,
      channel_id: ch.id,
      author: {
        id: author.id,
        username: author.username,
        discriminator: "0",
        global_name: null,
        avatar: null,
        ...(author.bot && { bot: true }),
      },
      content: body.content ?? "",
      timestamp: new Date(now()).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments,
      embeds: body.embeds ?? [],
      pinned: false,
      type: parent ? 19 : 0,
      flags: body.flags ?? 0,
      ...(parent && {
        message_reference: { type: 0, message_id: parent.id, channel_id: ch.id, guild_id: ch.guild_id },
      }),
      ...(body.nonce !== undefined && { nonce: body.nonce }),
      ...(webhookId && { webhook_id: webhookId }),
    } as APIMessage;
    ch.messages.push(message);
    state.posts.push({
      id,
      text: message.content,
      media: attachments.map((a) => ({
        type: a.content_type.startsWith("video/") ? "video" : "image",
        contentType: a.content_type,
        size: a.size,
        ...(a.description && { alt: a.description }),
      })),
      replyTo: parent?.id ?? null,
      options: { embeds: message.embeds, flags: message.flags },
      createdAt: new Date(now()),
    });
    return message;
  }

  const webhookFor = (id: string, token: string) => {
    const w = state.webhooks.get(id);
    if (!w) throw new DiscordError(404, "Unknown Webhook", CODES.UnknownWebhook);
    if (w.token !== token) throw new DiscordError(401, "Invalid Webhook Token", CODES.InvalidWebhookToken);
    return w;
  };

  async function route(req: Request, path: string): Promise<Response> {
    await checkFacts();
    const url = new URL(req.url);
    const seg = path.split("/").filter(Boolean);
    if (path.startsWith("/oauth2/authorize"))
      return new Response("<p>The bot was added to the sandbox server.</p>", {
        headers: { "content-type": "text/html" },
      });
    if (path === SANDBOX_USER_POST_PATH && req.method === "POST") {
      const b = (await req.json()) as { channel_id: string; content: string };
      const ch = state.channels.get(b.channel_id);
      if (!ch) throw new DiscordError(404, "Unknown Channel", CODES.UnknownChannel);
      return json({ id: api.userPost(ch.id, b.content) });
    }
    if (seg[0] !== "api" || seg[1] !== "v10") return json({ message: "404: Not Found", code: 0 }, 404);
    const [a, b, c, d, e] = seg.slice(2);
    // Webhooks authenticate with their own token, not the bot's.
    if (a === "webhooks" && b && c) {
      const w = webhookFor(b, c);
      const ch = state.channels.get(w.channel_id)!;
      if (req.method === "GET" && !d)
        return json({
          type: 1,
          id: w.id,
          name: w.name,
          avatar: null,
          channel_id: w.channel_id,
          guild_id: w.guild_id,
          application_id: null,
          token: w.token,
        });
      if (req.method === "GET" && d === "messages" && e) {
        const m = ch.messages.find((x) => x.id === e && x.webhook_id === w.id);
        if (!m) throw new DiscordError(404, "Unknown Message", CODES.UnknownMessage);
        return json(m);
      }
      if (req.method === "POST" && !d) {
        const { body, files } = await readMessageRequest(req);
        validate(body, files);
        const m = create(ch, w.user, body, files, w.id);
        return url.searchParams.get("wait") === "true" ? json(m) : new Response(null, { status: 204 });
      }
    }
    const bot = botFor(req);
    if (a === "users" && b === "@me" && !c)
      return json({
        id: bot.id,
        username: bot.username,
        discriminator: "0",
        global_name: null,
        avatar: null,
        bot: true,
      });
    if (a === "users" && b === "@me" && c === "guilds")
      return json(
        guildsOf(bot).map((g) => ({
          id: g.id,
          name: g.name,
          icon: null,
          owner: false,
          permissions: "0",
          features: [],
          approximate_member_count: state.followers,
        })),
      );
    if (a === "guilds" && b) {
      const g = state.guilds.get(b);
      if (!g || !g.members.has(bot.id)) throw new DiscordError(404, "Unknown Guild", 10004);
      if (!c)
        return json({
          id: g.id,
          name: g.name,
          owner_id: g.owner_id,
          roles: g.roles,
          ...(url.searchParams.get("with_counts") === "true" && {
            approximate_member_count: state.followers,
            approximate_presence_count: 1,
          }),
        });
      if (c === "roles")
        return json(
          g.roles.map((r) => ({
            ...r,
            color: 0,
            hoist: false,
            managed: false,
            mentionable: false,
            position: 0,
            flags: 0,
          })),
        );
      if (c === "channels")
        return json([...state.channels.values()].filter((ch) => ch.guild_id === g.id).map(channelJson));
      if (c === "members" && d) {
        const roles = g.members.get(d);
        const user = state.users.get(d);
        if (!roles || !user) throw new DiscordError(404, "Unknown Member", 10007);
        return json({
          user: { id: user.id, username: user.username },
          roles,
          joined_at: new Date(0).toISOString(),
          deaf: false,
          mute: false,
          flags: 0,
        });
      }
    }
    if (a === "channels" && b) {
      const ch = channelFor(b, bot);
      if (!c && req.method === "GET") return json(channelJson(ch));
      if (c === "messages" && !d && req.method === "GET") {
        need(ch, bot, P.READ_MESSAGE_HISTORY);
        const limit = Math.min(100, Math.max(1, Number(url.searchParams.get("limit") ?? 50)));
        return json([...ch.messages].reverse().slice(0, limit));
      }
      if (c === "messages" && d && req.method === "GET") {
        need(ch, bot, P.READ_MESSAGE_HISTORY);
        const m = ch.messages.find((x) => x.id === d);
        if (!m) throw new DiscordError(404, "Unknown Message", CODES.UnknownMessage);
        return json(m);
      }
      if (c === "messages" && !d && req.method === "POST") {
        need(ch, bot, P.SEND_MESSAGES);
        const { body, files } = await readMessageRequest(req);
        if (files.length) need(ch, bot, P.ATTACH_FILES);
        validate(body, files);
        if (body.nonce !== undefined && body.enforce_nonce) {
          const key = `${bot.id}:${body.nonce}`;
          const seen = state.nonces.get(key);
          if (seen && now() - seen.at < NONCE_WINDOW_MS) return json(seen.message);
          const m = create(ch, bot, body, files);
          state.nonces.set(key, { message: m, at: now() });
          return json(m);
        }
        return json(create(ch, bot, body, files));
      }
    }
    return json({ message: "404: Not Found", code: 0 }, 404);
  }

  const handler = failingHandler({
    failures,
    canFail: (path) => path.startsWith("/api/"),
    failureResponse(f: FailureSpec) {
      if (f.kind === "rate_limit") {
        const s = f.retryAfterSeconds ?? 1;
        // docs: topics/rate-limits#exceeding-a-rate-limit.
        return json({ message: "You are being rate limited.", retry_after: s, global: false }, 429, {
          "retry-after": String(Math.ceil(s)),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(s),
          "x-ratelimit-scope": "user",
        });
      }
      if (f.kind === "server_error") return json({ message: "500: Internal Server Error", code: 0 }, 500);
      if (f.kind === "auth_expired") return json({ message: "401: Unauthorized", code: 0 }, 401);
      if (f.kind === "forbidden") return json({ message: "Missing Permissions", code: CODES.MissingPermissions }, 403);
      return null;
    },
    route,
    error: DiscordError,
    errorResponse: (e) =>
      json({ message: e.message, code: e.code, ...(e.errors !== undefined && { errors: e.errors }) }, e.status),
  });

  const sandboxOf = (token: string) => {
    const bot = botFor(new Request("http://x", { headers: { authorization: `Bot ${token}` } }));
    const g = guildsOf(bot)[0];
    const byName = (n: string) => [...state.channels.values()].find((ch) => ch.guild_id === g.id && ch.name === n)!.id;
    const [memberId] = [...g.members.keys()].filter((id) => id !== g.owner_id && id !== bot.id);
    return {
      guildId: g.id,
      general: byName("general"),
      announcements: byName("announcements"),
      voice: byName("voice"),
      staff: byName("staff"),
      ownerId: g.owner_id,
      memberId,
      botId: bot.id,
    };
  };

  const api: DiscordEmulator = {
    platform: "discord",
    sandboxSettings: { BOT_TOKEN: SANDBOX_BOT_TOKEN, APPLICATION_ID: SANDBOX_APPLICATION_ID, SANDBOX_USER_POST_PATH },
    browserPaths: ["/oauth2/authorize"],
    state: emulatorState({ state }),
    handle: handler.handle,
    failNext: handler.failNext,
    posts: () => state.posts,
    setFollowers(n) {
      state.followers = n;
    },
    reset() {
      failures.clear();
      state.reset();
    },
    sandbox: (token = SANDBOX_BOT_TOKEN) => sandboxOf(token),
    userPost(channelId, content, userId) {
      const ch = state.channels.get(channelId)!;
      const author = state.users.get(userId ?? state.guilds.get(ch.guild_id)!.owner_id)!;
      const id = snowflake();
      ch.messages.push({
        id,
        channel_id: ch.id,
        author: { id: author.id, username: author.username, discriminator: "0", global_name: null, avatar: null },
        content,
        timestamp: new Date(now()).toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: [],
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        type: 0,
      });
      return id;
    },
    createWebhook(channelId, name = "Crier") {
      const ch = state.channels.get(channelId)!;
      const id = snowflake();
      const token = Array.from(
        { length: 68 },
        (_, i) =>
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"[(i * 7 + Number(BigInt(id) % 61n)) % 64],
      ).join("");
      const user: User = { id, username: name, bot: true };
      state.webhooks.set(id, { id, token, channel_id: ch.id, guild_id: ch.guild_id, name, user });
      return `https://discord.com/api/webhooks/${id}/${token}`;
    },
    deleteWebhook(url) {
      const m = /webhooks\/(\d+)\//.exec(url);
      if (m) state.webhooks.delete(m[1]);
    },
    revokeToken(token) {
      state.revoked.add(token);
    },
    denyBot(channelId, bits, token = SANDBOX_BOT_TOKEN) {
      const ch = state.channels.get(channelId)!;
      const bot = state.bots.get(token)!;
      ch.permission_overwrites = ch.permission_overwrites.filter((o) => !(o.type === 1 && o.id === bot.id));
      ch.permission_overwrites.push({ id: bot.id, type: 1, allow: "0", deny: String(bits) });
    },
    react(channelId, messageId, count) {
      const m = state.channels.get(channelId)!.messages.find((x) => x.id === messageId)!;
      m.reactions = [
        ...(m.reactions ?? []),
        {
          count,
          count_details: { burst: 0, normal: count },
          me: false,
          me_burst: false,
          emoji: { id: null, name: "👍" },
          burst_colors: [],
        },
      ];
    },
    messages: (channelId) => state.channels.get(channelId)?.messages ?? [],
  };
  return api;
}

export default defineEmulator(() => createDiscordEmulator());
