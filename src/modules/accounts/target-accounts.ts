/**
 * The accounts a post's targets name, as the posts module plans them: read from the database, or from this
 * copy's cache of them so that a create is one statement. The cache is only ever a hint: the statement that
 * stores a post from cached accounts checks each account's profile, platform and status itself
 * (src/db/post-insert.ts) and stores nothing when one changed, and the create then plans again from here.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db, Queryable } from "../../db/client.ts";
import { notifiedCache } from "../../db/notified-cache.ts";
import { prepared } from "../../db/prepared.ts";
import { accounts } from "../../db/schema.ts";
import { uuidArray } from "../../db/uuid-array.ts";

/** What planning a target needs of its account. */
export interface TargetAccount {
  id: string;
  profileId: string;
  platform: string;
  status: (typeof accounts.$inferSelect)["status"];
  username: string;
  /** What connect stored; the account's own limits come from it (src/platform/host/account-limits.ts). */
  metadata: unknown;
}

/**
 * How long a read account is trusted. Changes to an account's profile, platform, username or status reach
 * every copy by NOTIFY (migration 0016_account_cache's trigger on accounts); the TTL bounds what a lost one can cost,
 * which is a stale username in a create's answer (the insert itself refuses a changed account).
 */
export const ACCOUNT_CACHE_TTL_MS = 5_000;
export const ACCOUNT_CHANGED_CHANNEL = "crier_account_changed";

const cacheOf = (db: Db) => notifiedCache<TargetAccount>(db, ACCOUNT_CHANGED_CHANNEL, ACCOUNT_CACHE_TTL_MS);

/** Forgets an account in this copy at once (the trigger's NOTIFY tells the other copies). */
export const forgetTargetAccount = (db: Db, id: string) => cacheOf(db).forget(id);

const accountsByIds = prepared((d) =>
  d
    .select({
      id: accounts.id,
      profileId: accounts.profileId,
      platform: accounts.platform,
      status: accounts.status,
      username: accounts.username,
      metadata: accounts.metadata,
    })
    .from(accounts)
    .where(
      and(
        sql`${accounts.id} = any(${sql.placeholder("ids")}::text::uuid[])`,
        eq(accounts.profileId, sql.placeholder("profileId")),
      ),
    )
    .prepare("crier_target_accounts"),
);

/**
 * The accounts of `profileId` among `ids` (well-formed UUIDs), read on `q` (the database or the create's
 * transaction). The rows read are remembered for the next create.
 */
export async function readTargetAccounts(db: Db, q: Queryable, profileId: string, ids: string[]) {
  if (!ids.length) return [];
  const cache = cacheOf(db);
  const readAt = cache.version();
  const wall = Date.now();
  const rows: TargetAccount[] = await accountsByIds(q).execute({ ids: uuidArray(ids), profileId });
  for (const row of rows) cache.set(row.id, row, wall, readAt);
  // An id not found is forgotten, so a deleted or foreign account is not offered from memory again.
  if (rows.length < ids.length) for (const id of ids) if (!rows.some((r) => r.id === id)) cache.forget(id);
  return rows;
}

/**
 * The same from this copy's cache when every id is there, in this profile and connected; undefined
 * otherwise (an unknown, foreign or disconnected account is read again, so its error is as exact as ever).
 */
export function cachedTargetAccounts(db: Db, profileId: string, ids: string[]): TargetAccount[] | undefined {
  const cache = cacheOf(db);
  const wall = Date.now();
  const out: TargetAccount[] = [];
  for (const id of ids) {
    const hit = cache.get(id, wall);
    if (!hit || hit.profileId !== profileId || hit.status === "disconnected") return undefined;
    out.push(hit);
  }
  return out;
}
