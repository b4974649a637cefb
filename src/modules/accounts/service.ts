import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { AppContext } from "../../context.ts";
import type { Db, Queryable } from "../../db/client.ts";
import { accounts, profiles } from "../../db/schema.ts";
import { encryptJson } from "../../db/crypto.ts";
import { prepared } from "../../db/prepared.ts";
import { NotFound } from "../../http/errors.ts";
import { credentialsExpireAt } from "../../platform/host/credential-expiry.ts";
import { runDisconnectHook, type DisconnectFacts } from "../../platform/host/disconnect.ts";
import type { CredentialStore } from "../../platform/host/provider.ts";
import type { Account, DeleteResult } from "./model.ts";
import { forgetTargetAccount } from "./target-accounts.ts";

type Row = typeof accounts.$inferSelect;

/** The columns an Account answer shows: a list never reads the credentials' ciphertext or the metadata. */
const shown = {
  id: accounts.id,
  platform: accounts.platform,
  username: accounts.username,
  avatarUrl: accounts.avatarUrl,
  status: accounts.status,
  metadata: accounts.metadata,
  credentialsExpireAt: accounts.credentialsExpireAt,
  createdAt: accounts.createdAt,
  updatedAt: accounts.updatedAt,
};
type Shown = Pick<Row, keyof typeof shown>;

export function toAccount(ctx: AppContext, row: Shown): Account {
  const description =
    ctx.platforms.describeAccount?.(row.platform, (row.metadata as Record<string, unknown> | null) ?? null) ??
    ctx.platforms.describe(row.platform);
  return {
    id: row.id,
    platform: row.platform as Account["platform"],
    username: row.username,
    avatar_url: row.avatarUrl,
    status: row.status,
    capabilities: description?.capabilities ?? null,
    media_requirements: description?.media_requirements ?? null,
    credentials_expire_at: row.credentialsExpireAt ? row.credentialsExpireAt.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const accountsOfProfile = prepared((d) =>
  d
    .select(shown)
    .from(accounts)
    .where(eq(accounts.profileId, sql.placeholder("profileId")))
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .prepare("crier_accounts_of_profile"),
);

export async function listAccounts(ctx: AppContext, profileId: string) {
  const rows = await accountsOfProfile(ctx.db).execute({ profileId });
  // A platform the operator turned off (PLATFORMS_DISABLED) is absent, its accounts with it.
  const off = ctx.config.platformsDisabled;
  return (off.length ? rows.filter((r) => !off.includes(r.platform)) : rows).map((r) => toAccount(ctx, r));
}

export async function getAccountRow(ctx: AppContext, profileId: string, id: string): Promise<Row> {
  const [row] = await ctx.db.db
    .select()
    .from(accounts)
    .where(and(eq(accounts.id, id), eq(accounts.profileId, profileId)));
  if (!row || ctx.config.platformsDisabled.includes(row.platform)) throw new NotFound("Account");
  return row;
}

export interface ConnectedAccount {
  profileId: string;
  platform: string;
  remoteId: string;
  username: string;
  avatarUrl?: string | null;
  credentials: unknown;
  metadata?: Record<string, unknown>;
}

/**
 * Stores a freshly connected account. Connecting the same remote account again (same profile,
 * platform and remote id) reactivates and updates the existing record instead of duplicating it.
 */
export async function upsertConnectedAccount(ctx: AppContext, input: ConnectedAccount, db: Queryable = ctx.db.db) {
  const now = ctx.clock.now();
  const credentials = encryptJson(ctx.config.secretKey, input.credentials);
  // New credentials: the token-refresh job starts over with them.
  const expiry = {
    credentialsExpireAt: credentialsExpireAt(input.credentials as Record<string, unknown>),
    credentialsRefreshAfter: null,
  };
  const [row] = await db
    .insert(accounts)
    .values({
      profileId: input.profileId,
      platform: input.platform,
      remoteId: input.remoteId,
      username: input.username,
      avatarUrl: input.avatarUrl ?? null,
      status: "active",
      credentials,
      ...expiry,
      metadata: input.metadata ?? {},
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({
      target: [accounts.profileId, accounts.platform, accounts.remoteId],
      set: {
        username: input.username,
        avatarUrl: input.avatarUrl ?? null,
        status: "active",
        credentials,
        ...expiry,
        metadata: input.metadata ?? {},
        updatedAt: now,
      },
    })
    .returning();
  forgetTargetAccount(ctx.db, row.id);
  return row;
}

/**
 * Where plugins' refreshed credentials are saved (encrypted with SECRET_KEY): the CredentialStore of the
 * context, built with it (src/server.ts) because the engine and the platform host may not import modules.
 */
export function accountCredentials(d: { db: Db; config: Pick<Config, "secretKey">; clock: Clock }): CredentialStore {
  return {
    async save(accountId, credentials) {
      await d.db.db
        .update(accounts)
        .set({
          credentials: encryptJson(d.config.secretKey, credentials),
          credentialsExpireAt: credentialsExpireAt(credentials),
          updatedAt: d.clock.now(),
        })
        .where(eq(accounts.id, accountId));
    },
  };
}

/** Whether the account's profile is a sandbox, and whether another connected account of that kind shares its remote id. */
async function disconnectFacts(ctx: AppContext, row: Row): Promise<DisconnectFacts> {
  const [profile] = await ctx.db.db
    .select({ sandbox: profiles.sandbox })
    .from(profiles)
    .where(eq(profiles.id, row.profileId));
  const sandbox = profile?.sandbox ?? false;
  // "Still used" counts connected accounts of any real profile on that remote; a sandbox profile's
  // emulators are its own, so there only the profile's own accounts share them.
  const [{ n }] = await ctx.db.db
    .select({ n: sql<number>`count(*)::int` })
    .from(accounts)
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(
      and(
        eq(accounts.platform, row.platform),
        eq(accounts.remoteId, row.remoteId),
        ne(accounts.id, row.id),
        ne(accounts.status, "disconnected"),
        eq(profiles.sandbox, sandbox),
        ...(sandbox ? [eq(accounts.profileId, row.profileId)] : []),
      ),
    );
  return { sandbox, remoteStillUsed: n > 0 };
}

export async function disconnectAccount(ctx: AppContext, profileId: string, id: string): Promise<DeleteResult> {
  const row = await getAccountRow(ctx, profileId, id);
  const rules = ctx.platforms.describe(row.platform)?.disconnect;
  // While the credentials still exist: the plugin's remote cleanup (best effort, bounded wait).
  if (row.status !== "disconnected") await runDisconnectHook(ctx, row, () => disconnectFacts(ctx, row));
  await ctx.db.db
    .update(accounts)
    .set({
      status: "disconnected",
      credentials: null,
      credentialsExpireAt: null,
      updatedAt: ctx.clock.now(),
      ...(rules?.disableRecord && { metadata: sql`${accounts.metadata} || '{"disabled": true}'::jsonb` }),
    })
    .where(eq(accounts.id, row.id));
  // This copy's next create plans from the database (other copies hear of it from the table's trigger).
  forgetTargetAccount(ctx.db, row.id);
  return {
    deleted: false,
    disconnected: true,
    id: row.id,
    provider_revocation_required: rules?.providerRevocationRequired ?? false,
    provider_revocation_url: rules?.providerRevocationUrl ?? null,
    message:
      rules?.message ??
      "Account disconnected: Crier's access and stored credentials are removed; published content and post history are kept. Connect the same account again to restore posting.",
  };
}
