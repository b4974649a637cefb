/**
 * Account caps per profile (`crier profiles set-limits --accounts`), the upstream's plan cap answered
 * 403 account_limit_reached. Counted are the profile's accounts that are not disconnected; reconnecting
 * an account the profile already has connected never counts it twice.
 */
import { and, eq, ne, sql } from "drizzle-orm";
import type { Queryable } from "../../db/client.ts";
import { accounts, profileLimits, profiles } from "../../db/schema.ts";
import { Forbidden } from "../../http/errors.ts";

export class AccountLimitReached extends Forbidden {
  constructor(limit: number) {
    super(
      "account_limit_reached",
      `This profile has reached its limit of ${limit} connected account${limit === 1 ? "" : "s"}.`,
      "Disconnect an account you no longer use (DELETE /v1/accounts/{id}), or ask the operator to raise the limit (crier profiles set-limits --accounts).",
    );
  }
}

export async function setAccountLimit(db: Queryable, profileId: string, limit: number | null) {
  await db
    .insert(profileLimits)
    .values({ profileId, accounts: limit })
    .onConflictDoUpdate({ target: profileLimits.profileId, set: { accounts: limit, updatedAt: sql`now()` } });
}

async function accountLimit(db: Queryable, profileId: string): Promise<number | null> {
  const [row] = await db
    .select({ accounts: profileLimits.accounts })
    .from(profileLimits)
    .where(eq(profileLimits.profileId, profileId));
  return row?.accounts ?? null;
}

/**
 * Refuses starting a connect while the profile is at its cap (POST /v1/accounts/connect/{platform}),
 * unless the profile has an account of that platform the flow may be reconnecting (an expired one must
 * stay repairable at the cap): which account comes back is known only when the flow completes, and
 * assertRoomFor decides then.
 */
export async function assertRoomToConnect(db: Queryable, profileId: string, platform: string): Promise<void> {
  const limit = await accountLimit(db, profileId);
  if (limit === null || (await connectedCount(db, profileId)) < limit) return;
  const [held] = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.profileId, profileId), eq(accounts.platform, platform), ne(accounts.status, "disconnected")))
    .limit(1);
  if (!held) throw new AccountLimitReached(limit);
}

/**
 * Refuses storing `incoming` identities when they would take the profile over its cap. Call inside the
 * transaction that stores them: the profile row lock serialises completions of one profile, so two
 * connects finishing at once cannot both pass the count.
 */
export async function assertRoomFor(
  tx: Queryable,
  profileId: string,
  platform: string,
  remoteIds: string[],
): Promise<void> {
  await tx.select({ id: profiles.id }).from(profiles).where(eq(profiles.id, profileId)).for("update");
  const limit = await accountLimit(tx, profileId);
  if (limit === null) return;
  const already = await tx
    .select({ remoteId: accounts.remoteId })
    .from(accounts)
    .where(
      and(eq(accounts.profileId, profileId), eq(accounts.platform, platform), ne(accounts.status, "disconnected")),
    );
  const held = new Set(already.map((a) => a.remoteId));
  const added = new Set(remoteIds.filter((id) => !held.has(id))).size;
  if (added > 0 && (await connectedCount(tx, profileId)) + added > limit) throw new AccountLimitReached(limit);
}

async function connectedCount(db: Queryable, profileId: string): Promise<number> {
  const [{ n }] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(accounts)
    .where(and(eq(accounts.profileId, profileId), ne(accounts.status, "disconnected")));
  return n;
}
