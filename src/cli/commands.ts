import type { AppContext } from "../context.ts";
import { cleanupExpiredUploads } from "../modules/media/cleanup.ts";
import { checkAccounts } from "../modules/accounts/check.ts";
import { mediaToolsReport } from "../media/tools-report.ts";
import type { Scope } from "../http/scopes.ts";
import {
  createKey,
  createProfile,
  findProfile,
  KeyInputError,
  listKeys,
  listProfiles,
  revokeKey,
} from "../modules/keys/service.ts";
import { setAccountLimit } from "../modules/accounts/limits.ts";
import { asc, eq } from "drizzle-orm";
import { profileLimits, profiles } from "../db/schema.ts";
import { runBulk } from "../modules/posts/bulk.ts";
import type { BulkEntry } from "../modules/posts/bulk-csv.ts";
import { INBOX_LINK_TTL_MS, inboxLink, principalById } from "../modules/sandbox/sign-in.ts";
import { setWorkflowLimit } from "../modules/workflows/service.ts";
import { rotateBatch, secretsReport } from "../db/secret-rotation.ts";
import { writeBackup } from "./backup.ts";
import { createUser, listUsers, resetPassword, setUserRights } from "../modules/users/service.ts";

/** The page of the dashboard where a one-time token sets a password (in the fragment: never sent in logs). */
const signInLink = (ctx: AppContext, token: string) => `${ctx.config.publicUrl}/welcome#${token}`;

/**
 * Everything `crier profiles|keys|media` can do to the database. The same functions run in-process
 * (PostgreSQL, or PGlite with no server running) and inside the server behind the admin socket.
 */
export const adminCommands = {
  "profiles.create": async ({ db }: AppContext, a: { name: string; sandbox: boolean }) => {
    const p = await createProfile(db, a.name, a.sandbox);
    return { id: p.id, name: p.name, sandbox: p.sandbox, created_at: p.createdAt.toISOString() };
  },
  "profiles.list": async ({ db }: AppContext) => {
    const limits = new Map((await db.db.select().from(profileLimits)).map((l) => [l.profileId, l]));
    const shown = (n: number | null | undefined) => (n == null ? "unlimited" : n);
    return (await listProfiles(db)).map((p) => ({
      id: p.id,
      name: p.name,
      sandbox: p.sandbox,
      accounts_limit: shown(limits.get(p.id)?.accounts),
      workflows_limit: shown(limits.get(p.id)?.workflows),
      created_at: p.createdAt.toISOString(),
    }));
  },
  "profiles.set-limits": async (
    { db }: AppContext,
    a: { profileId: string; workflows?: number | null; accounts?: number | null },
  ) => {
    const profile = await findProfile(db, a.profileId);
    if (!profile) throw new Error(`no profile with id ${a.profileId}`);
    const result: Record<string, unknown> = { profile_id: a.profileId };
    if (a.workflows !== undefined) Object.assign(result, await setWorkflowLimit(db.db, a.profileId, a.workflows));
    if (a.accounts !== undefined) {
      await setAccountLimit(db.db, a.profileId, a.accounts);
      result.accounts = a.accounts ?? "unlimited";
    }
    return result as { profile_id: string; workflows?: number | "unlimited"; accounts?: number | "unlimited" };
  },
  "keys.create": async (
    { db }: AppContext,
    a: { name: string; profileId?: string; scopes: Scope[]; expiresAt?: string | null },
  ) =>
    createKey(db, {
      name: a.name,
      profileId: a.profileId,
      scopes: a.scopes,
      expiresAt: a.expiresAt ? new Date(a.expiresAt) : null,
    }),
  "keys.list": ({ db }: AppContext, a: { profileId?: string }) => listKeys(db, a.profileId),
  "keys.revoke": ({ db }: AppContext, a: { id: string }) => revokeKey(db, a.id),
  "keys.inbox-link": async (ctx: AppContext, a: { id: string }) => {
    const now = ctx.clock.now();
    const key = await principalById(ctx.db, a.id, now);
    if (!key) throw new KeyInputError(`no active key with id ${a.id}`);
    if (!key.sandbox) throw new KeyInputError(`key ${a.id} belongs to a live profile; the inbox is for sandbox keys`);
    if (!key.scopes.includes("posts:read")) throw new KeyInputError(`key ${a.id} lacks the posts:read scope`);
    return {
      link: inboxLink(ctx.config, a.id, now),
      expires_at: new Date(now.getTime() + INBOX_LINK_TTL_MS).toISOString(),
    };
  },
  "media.cleanup": (ctx: AppContext) => cleanupExpiredUploads(ctx),
  /** Run by `crier backup` inside the server: the snapshot goes through the server's own database. */
  "backup.write": (ctx: AppContext, a: { to: string }) => writeBackup(ctx, a.to),
  "accounts.check": (ctx: AppContext, a: { profileId?: string; includeSandbox?: boolean }) => checkAccounts(ctx, a),
  /** The serving copy's media tools (its FFMPEG_PATH and PATH), for the warnings of `crier accounts check`. */
  "media.tools": (ctx: AppContext) => mediaToolsReport(ctx.config),
  "users.create": async (ctx: AppContext, a: { email: string; profileId?: string }) => {
    const r = await createUser(ctx.db, a, ctx.clock.now());
    return {
      id: r.user.id,
      email: r.user.email,
      profile_id: r.profile.id,
      link: signInLink(ctx, r.link.token),
      expires_at: r.link.expiresAt.toISOString(),
    };
  },
  "users.reset-password": async (ctx: AppContext, a: { email: string }) => {
    const r = await resetPassword(ctx.db, a.email, ctx.clock.now());
    return {
      id: r.user.id,
      email: r.user.email,
      link: signInLink(ctx, r.link.token),
      expires_at: r.link.expiresAt.toISOString(),
    };
  },
  "users.set": async ({ db }: AppContext, a: { email: string; canCreateProfiles: boolean }) => {
    const u = await setUserRights(db, a.email, { canCreateProfiles: a.canCreateProfiles });
    return { id: u.id, email: u.email, can_create_profiles: u.canCreateProfiles };
  },
  "users.list": async ({ db }: AppContext) =>
    (await listUsers(db)).map((u) => ({
      id: u.id,
      email: u.email,
      can_create_profiles: u.canCreateProfiles,
      created_at: u.createdAt.toISOString(),
    })),
  /** One part of `crier posts import`: its rows keep their numbers in the whole file. */
  "posts.import": async (
    ctx: AppContext,
    a: { profileId?: string; entries: BulkEntry[]; dryRun: boolean; key?: string },
  ) => {
    const profile = a.profileId ? await findProfile(ctx.db, a.profileId) : await namedDefault(ctx);
    if (!profile)
      throw new KeyInputError(
        a.profileId ? `no profile with id ${a.profileId}` : "no profile named default; give --profile ID",
      );
    return runBulk(ctx, profile.id, a.entries, { dryRun: a.dryRun, key: a.key });
  },
  "secrets.status": (ctx: AppContext) => secretsReport(ctx.db, ctx.config),
  "secrets.rotate-batch": (ctx: AppContext, a: { batch: number }) => rotateBatch(ctx.db, ctx.config, a.batch),
} as const;

export type AdminCommand = keyof typeof adminCommands;

/** The profile named default, if there is one (an import never creates a profile). */
async function namedDefault(ctx: AppContext) {
  const [row] = await ctx.db.db
    .select()
    .from(profiles)
    .where(eq(profiles.name, "default"))
    .orderBy(asc(profiles.createdAt))
    .limit(1);
  return row;
}
