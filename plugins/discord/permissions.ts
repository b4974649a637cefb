/**
 * Discord permissions as the bot and the person connecting have them in one channel. Bits and the
 * algorithm from discord.com/developers/docs/topics/permissions (checked 2026-11-26): the @everyone
 * role's permissions, OR the member's roles'; ADMINISTRATOR or ownership of the server grants all;
 * then the channel's overwrites in order: @everyone's deny and allow, the member's roles' denies and
 * allows together, the member's own deny and allow.
 */
export const PERMISSION = {
  MANAGE_CHANNELS: 1n << 4n,
  ADMINISTRATOR: 1n << 3n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MANAGE_WEBHOOKS: 1n << 29n,
  CREATE_PUBLIC_THREADS: 1n << 35n,
  SEND_MESSAGES_IN_THREADS: 1n << 38n,
} as const;

/** What the bot needs in the channel it posts to, and asks for in its invite link. */
export const BOT_PERMISSIONS =
  PERMISSION.VIEW_CHANNEL |
  PERMISSION.SEND_MESSAGES |
  PERMISSION.ATTACH_FILES |
  PERMISSION.EMBED_LINKS |
  PERMISSION.SEND_MESSAGES_IN_THREADS |
  PERMISSION.CREATE_PUBLIC_THREADS |
  PERMISSION.READ_MESSAGE_HISTORY;

/** What publishing itself cannot do without (threads and embeds only narrow what a post may hold). */
export const REQUIRED_TO_POST = PERMISSION.VIEW_CHANNEL | PERMISSION.SEND_MESSAGES | PERMISSION.READ_MESSAGE_HISTORY;

const ALL = (1n << 64n) - 1n;

export interface Overwrite {
  id: string;
  /** 0: a role, 1: a member. */
  type: number;
  allow: string;
  deny: string;
}

export interface PermissionInput {
  guildId: string;
  ownerId: string;
  userId: string;
  /** The member's role ids (without @everyone, whose id is the server's). */
  memberRoles: string[];
  roles: { id: string; permissions: string }[];
  overwrites: Overwrite[];
}

/** The member's permissions in the channel, as a bitfield. */
export function channelPermissions(p: PermissionInput): bigint {
  if (p.userId === p.ownerId) return ALL;
  const roleBits = new Map(p.roles.map((r) => [r.id, BigInt(r.permissions)]));
  let base = roleBits.get(p.guildId) ?? 0n;
  for (const id of p.memberRoles) base |= roleBits.get(id) ?? 0n;
  if (base & PERMISSION.ADMINISTRATOR) return ALL;
  let perms = base;
  const everyone = p.overwrites.find((o) => o.id === p.guildId);
  if (everyone) perms = (perms & ~BigInt(everyone.deny)) | BigInt(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const o of p.overwrites)
    if (o.type === 0 && p.memberRoles.includes(o.id)) {
      allow |= BigInt(o.allow);
      deny |= BigInt(o.deny);
    }
  perms = (perms & ~deny) | allow;
  const own = p.overwrites.find((o) => o.type === 1 && o.id === p.userId);
  if (own) perms = (perms & ~BigInt(own.deny)) | BigInt(own.allow);
  return perms;
}

/** The names of the bits of `wanted` that `have` lacks, for messages to the user. */
export function missing(have: bigint, wanted: bigint): string[] {
  return Object.entries(PERMISSION)
    .filter(([, bit]) => (wanted & bit) !== 0n && (have & bit) === 0n)
    .map(([name]) => name.toLowerCase().replace(/_/g, " "));
}
