/**
 * Connecting a Discord channel. One field takes either:
 *
 * - an incoming webhook URL: checked by asking Discord for the webhook (GET /webhooks/{id}/{token}); the
 *   URL is its own proof, since only someone who manages the channel's webhooks can make one; or
 * - a channel (its link or id) the server's bot is in. The bot is every profile's, so being able to see
 *   the channel proves nothing about the person connecting: like Telegram, the page shows a one-time code,
 *   the person posts it in the channel mentioning the bot (a bot without the privileged Message Content
 *   intent reads only messages that mention it: docs topics/gateway#message-content-intent), and the bot
 *   reads it back (GET /channels/{id}/messages). Anyone allowed to talk in a channel can post a code, so
 *   the code's author must also hold Manage Webhooks there (or administer the server): exactly who could
 *   have connected the channel with a webhook instead. Both ways therefore ask the same authority.
 */
import { createHash } from "node:crypto";
import type {
  APIChannel,
  APIGuild,
  APIGuildMember,
  APIMessage,
  APIRole,
  APIUser,
  APIWebhook,
  RESTGetAPICurrentUserGuildsResult,
} from "discord-api-types/v10";
import {
  ConnectError,
  type ConnectAttempt,
  type ConnectContext,
  type ConnectFlow,
  type ConnectedIdentity,
  type PreparedConnect,
  type ProviderHttp,
} from "../../src/platform/sdk.ts";
import { API, parseChannel, parseWebhookUrl } from "./api.ts";
import { BOT_PERMISSIONS, PERMISSION, channelPermissions, missing, type Overwrite } from "./permissions.ts";

export function botToken(settings: Record<string, string | undefined>): string | undefined {
  return settings.CRIER_DISCORD_BOT_TOKEN ?? settings.BOT_TOKEN;
}
const applicationId = (s: Record<string, string | undefined>) => s.CRIER_DISCORD_APPLICATION_ID ?? s.APPLICATION_ID;

/** Text (0) and announcement (5) channels: the ones that take messages from a bot (docs: resources/channel#channel-object-channel-types). */
const POSTABLE_TYPES = new Set([0, 5]);
/** What the bot must have in the channel: see it, post, upload, embed, and read the code back. */
const NEEDED =
  PERMISSION.VIEW_CHANNEL |
  PERMISSION.SEND_MESSAGES |
  PERMISSION.ATTACH_FILES |
  PERMISSION.EMBED_LINKS |
  PERMISSION.READ_MESSAGE_HISTORY;

/** Without I, L, O, 0 and 1, which are read wrongly when typed from a screen. */
const ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/** The attempt's code, like CRIER-7KQ2-M9XD: the same on every showing of its page, never another attempt's. */
export function proofCode(attempt: ConnectAttempt): string {
  const bytes = createHash("sha256").update(`discord-channel-proof\n${attempt.secret}`).digest();
  const chars = [...bytes.subarray(0, 8)].map((b) => ALPHABET[b % ALPHABET.length]).join("");
  return `CRIER-${chars.slice(0, 4)}-${chars.slice(4)}`;
}

/** The bot's invite link with the permissions it needs (docs: topics/oauth2#bot-authorization-flow). */
export function inviteUrl(base: string, clientId: string): string {
  const q = new URLSearchParams({ client_id: clientId, scope: "bot", permissions: BOT_PERMISSIONS.toString() });
  return `${base.replace(/\/+$/, "")}/oauth2/authorize?${q}`;
}

async function get<T>(
  http: ProviderHttp,
  token: string | null,
  path: string,
  query?: Record<string, string | number | boolean>,
) {
  return http.request<T>("GET", `${API}${path}`, {
    ...(token && { headers: { authorization: `Bot ${token}` } }),
    ...(query && { query }),
  });
}

function unanswered(what: string, res: { ok: false; outcome: { kind: string; reason: string } }): never {
  if (res.outcome.kind === "auth_expired" && /bot token/.test(res.outcome.reason))
    throw new ConnectError(
      "Discord refused this server's bot token; the administrator must check CRIER_DISCORD_BOT_TOKEN.",
    );
  throw new ConnectError(`Discord did not answer ${what}: ${res.outcome.reason}. Try again in a moment.`);
}

interface GuildFacts {
  guild: Pick<APIGuild, "id" | "name" | "owner_id">;
  roles: Pick<APIRole, "id" | "permissions">[];
}

async function guildFacts(http: ProviderHttp, token: string, guildId: string): Promise<GuildFacts> {
  const guild = await get<APIGuild>(http, token, `/guilds/${guildId}`);
  if (!guild.ok) unanswered("about the server", guild);
  const roles = await get<APIRole[]>(http, token, `/guilds/${guildId}/roles`);
  if (!roles.ok) unanswered("about the server's roles", roles);
  return { guild: guild.body, roles: roles.body };
}

async function memberPermissions(
  http: ProviderHttp,
  token: string,
  facts: GuildFacts,
  channel: { permission_overwrites?: Overwrite[] },
  userId: string,
) {
  const member = await get<APIGuildMember>(http, token, `/guilds/${facts.guild.id}/members/${userId}`);
  if (!member.ok) return 0n; // not a member (any more)
  return channelPermissions({
    guildId: facts.guild.id,
    ownerId: facts.guild.owner_id,
    userId,
    memberRoles: member.body.roles,
    roles: facts.roles,
    overwrites: channel.permission_overwrites ?? [],
  });
}

/** The channels the bot can post in, in every server it is in: what the page offers to pick from. */
export async function postableChannels(
  http: ProviderHttp,
  token: string,
): Promise<{ id: string; label: string; guildId: string }[]> {
  const me = await get<APIUser>(http, token, "/users/@me");
  if (!me.ok) unanswered("about the bot", me);
  const guilds = await get<RESTGetAPICurrentUserGuildsResult>(http, token, "/users/@me/guilds");
  if (!guilds.ok) unanswered("with the bot's servers", guilds);
  const out: { id: string; label: string; guildId: string }[] = [];
  for (const g of guilds.body.slice(0, 20)) {
    const channels = await get<APIChannel[]>(http, token, `/guilds/${g.id}/channels`);
    if (!channels.ok) continue;
    const facts = await guildFacts(http, token, g.id);
    for (const ch of channels.body) {
      if (!POSTABLE_TYPES.has(ch.type)) continue;
      const perms = await memberPermissions(
        http,
        token,
        facts,
        ch as { permission_overwrites?: Overwrite[] },
        me.body.id,
      );
      if ((perms & NEEDED) === NEEDED)
        out.push({ id: ch.id, guildId: g.id, label: `${g.name} › #${(ch as { name?: string }).name ?? ch.id}` });
    }
  }
  return out;
}

const channelLink = (guildId: string, channelId: string) => `https://discord.com/channels/${guildId}/${channelId}`;

/**
 * The invite link, the code, and the channels the bot can post in as the field's choices (in the sandbox
 * the first is filled in, and the emulator posts the code for the user). A bot Discord refuses leaves the
 * list out: the page still serves the webhook way.
 */
async function prepare(c: ConnectContext, attempt: ConnectAttempt): Promise<PreparedConnect> {
  const token = botToken(c.settings);
  const app = applicationId(c.settings);
  if (!token || !app) return { carry: {} };
  const sandbox = Boolean(c.settings.SANDBOX_USER_POST_PATH);
  let channels: Awaited<ReturnType<typeof postableChannels>> = [];
  try {
    channels = await postableChannels(c.http, token);
  } catch (e) {
    c.log.warn("discord: the bot's channels could not be listed", { reason: (e as Error).message });
  }
  const choices = channels.map((ch) => ({ value: channelLink(ch.guildId, ch.id), label: ch.label }));
  return {
    carry: {},
    ...(sandbox && choices.length && { values: { channel: choices[0].value } }),
    ...(choices.length && { choices: { channel: choices } }),
    link: { url: inviteUrl(c.http.baseUrl, app), label: "Add this server's bot to your Discord server" },
    code: {
      label: sandbox
        ? "Your one-time code (sandbox: the emulator posts it in the channel for you when you connect):"
        : "For a channel through the bot: post this code in the channel as a message mentioning the bot (@ its name, then the code), then connect:",
      value: proofCode(attempt),
    },
  };
}

async function viaWebhook(c: ConnectContext, hook: { id: string; token: string }): Promise<ConnectedIdentity> {
  const res = await get<APIWebhook>(c.http, null, `/webhooks/${hook.id}/${hook.token}`);
  if (!res.ok) {
    if (res.outcome.kind === "auth_expired" || res.status === 404 || res.status === 401)
      throw new ConnectError(
        "Discord does not know this webhook: it was deleted or its URL is wrong. Copy the URL again from the channel's Integrations → Webhooks.",
        "webhook_unknown",
      );
    unanswered("about the webhook", res);
  }
  const w = res.body;
  if (w.type !== 1 || !w.channel_id)
    throw new ConnectError("This is not an incoming webhook of a channel.", "webhook_unsupported");
  return {
    remoteId: w.channel_id,
    username: w.name ? `${w.name} (webhook)` : `webhook ${w.id}`,
    avatarUrl: null,
    credentials: {
      mode: "webhook",
      webhook_id: w.id,
      webhook_token: hook.token,
      channel_id: w.channel_id,
      guild_id: w.guild_id ?? null,
    },
    metadata: { mode: "webhook", channel_id: w.channel_id, guild_id: w.guild_id ?? null, webhook_name: w.name ?? null },
  };
}

const unproven = (code: string, bot: string) =>
  new ConnectError(
    `Discord shows no message with ${code} mentioning @${bot} in this channel from someone who manages it. Post "@${bot} ${code}" ` +
      "in the channel from an account with Manage Webhooks there (or a server administrator), then press Connect again within the five minutes of this link.",
    "channel_ownership_unproven",
  );

async function viaBot(c: ConnectContext, channelId: string, attempt: ConnectAttempt): Promise<ConnectedIdentity> {
  const token = botToken(c.settings);
  if (!token)
    throw new ConnectError(
      "This server has no Discord bot (CRIER_DISCORD_BOT_TOKEN): paste a webhook URL of the channel instead.",
      "platform_not_configured",
    );
  const me = await get<APIUser>(c.http, token, "/users/@me");
  if (!me.ok) unanswered("about the bot", me);
  const bot = me.body;
  const ch = await get<APIChannel>(c.http, token, `/channels/${channelId}`);
  if (!ch.ok) {
    if (ch.status === 403 || ch.status === 404)
      throw new ConnectError(
        `The bot @${bot.username} cannot see this channel: add it to the server with the link above, and let it view the channel.`,
        "channel_not_visible",
      );
    unanswered("about the channel", ch);
  }
  const channel = ch.body as APIChannel & { guild_id?: string; name?: string; permission_overwrites?: Overwrite[] };
  if (!POSTABLE_TYPES.has(channel.type) || !channel.guild_id)
    throw new ConnectError(
      "Crier posts to a server's text or announcement channels; pick one of those.",
      "channel_unsupported",
    );
  const facts = await guildFacts(c.http, token, channel.guild_id);
  const perms = await memberPermissions(c.http, token, facts, channel, bot.id);
  const lacking = missing(perms, NEEDED);
  if (lacking.length)
    throw new ConnectError(
      `The bot @${bot.username} lacks these permissions in #${channel.name}: ${lacking.join(", ")}.`,
      "bot_missing_permissions",
    );

  const code = proofCode(attempt);
  const sandboxPost = c.settings.SANDBOX_USER_POST_PATH;
  if (sandboxPost)
    await c.http.request("POST", sandboxPost, { json: { channel_id: channelId, content: `<@${bot.id}> ${code}` } });
  const recent = await get<APIMessage[]>(c.http, token, `/channels/${channelId}/messages`, { limit: 50 });
  if (!recent.ok) unanswered("with the channel's messages", recent);
  let proven = false;
  for (const m of recent.body) {
    if (m.author.bot || !m.content.toUpperCase().includes(code)) continue;
    const authority = await memberPermissions(c.http, token, facts, channel, m.author.id);
    if (authority & (PERMISSION.MANAGE_WEBHOOKS | PERMISSION.ADMINISTRATOR)) {
      proven = true;
      break;
    }
  }
  if (!proven) throw unproven(code, bot.username);
  return {
    remoteId: channel.id,
    username: `#${channel.name ?? channel.id}`,
    avatarUrl: null,
    // The bot token is the server's, not the account's: only the channel is kept.
    credentials: { mode: "bot", channel_id: channel.id, guild_id: channel.guild_id, bot_id: bot.id },
    metadata: {
      mode: "bot",
      channel_id: channel.id,
      guild_id: channel.guild_id,
      guild_name: facts.guild.name,
      channel_name: channel.name ?? null,
      bot_username: bot.username,
    },
  };
}

async function verify(
  c: ConnectContext,
  values: Record<string, string>,
  attempt?: ConnectAttempt,
): Promise<ConnectedIdentity> {
  const raw = values.channel ?? "";
  const hook = parseWebhookUrl(raw);
  if (hook) return viaWebhook(c, hook);
  if (/webhooks/i.test(raw))
    throw new ConnectError(
      "This is not a Discord webhook URL: it must be https://discord.com/api/webhooks/<id>/<token>, as Discord's Copy Webhook URL gives it.",
      "webhook_url_invalid",
    );
  const channelId = parseChannel(raw);
  if (!channelId)
    throw new ConnectError(
      "Enter the channel's link (right-click the channel → Copy Link), its id, or a webhook URL of the channel.",
      "channel_invalid",
    );
  if (!attempt)
    throw new ConnectError("Connect a Discord channel from its connection page: it shows the code to post.");
  return viaBot(c, channelId, attempt);
}

export const connect: ConnectFlow = {
  mode: "credential_form_url",
  title: "Connect a Discord channel",
  instructions:
    "Two ways. With this server's bot: add it to your Discord server with the link below, then post the code below in the channel mentioning the bot, " +
    "and enter the channel's link (right-click the channel → Copy Link). Without a bot: in the channel's settings → Integrations → Webhooks, " +
    "create a webhook, copy its URL and enter that instead (a webhook can only post: no replies, no reading back).",
  fields: [
    {
      name: "channel",
      label: "Channel link or webhook URL",
      type: "text",
      placeholder: "https://discord.com/channels/…/…",
      help: "A channel link or id (through the bot), or https://discord.com/api/webhooks/… (webhook)",
    },
  ],
  prepare,
  verify,
};
