/**
 * Claiming due targets so that no target is ever handed to two publishers, across any number of copies
 * sharing one database, and at most one publish runs per account at a time.
 *
 * One claim is one transaction:
 *  1. candidate accounts with a due target, each with a transaction-scoped advisory lock taken with try
 *     (a busy account is skipped): two claimers can never both be between "is this account idle?" and
 *     "mark its target processing";
 *  2. a fresh statement (so it sees what earlier lock holders committed) that picks, per locked and idle
 *     account, its first due target in thread order, caps per platform, locks the rows with
 *     FOR UPDATE SKIP LOCKED and marks them processing with a lease, in one UPDATE.
 * The transaction commits before any plugin is called.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";

// Namespace of the advisory locks (the other key is a hash of the account id).
const ACCOUNT_LOCK_SPACE = 7_242_032;

export interface ClaimedTarget {
  id: string;
  postId: string;
  accountId: string;
  platform: string;
  attempts: number;
}

export interface ClaimRequest {
  now: Date;
  leaseUntil: Date;
  claimedBy: string;
  /** Free slots per platform in this copy; platforms absent here are not claimed. */
  caps: Record<string, number>;
  limit: number;
  /** Accounts this copy is publishing to right now (they cannot take another target). */
  busyAccounts: string[];
  postId?: string;
}

export async function claimDue(db: Db, req: ClaimRequest): Promise<ClaimedTarget[]> {
  const platforms = Object.keys(req.caps).filter((p) => req.caps[p] > 0);
  const limit = Math.min(req.limit, platforms.reduce((n, p) => n + req.caps[p], 0));
  if (limit <= 0) return [];
  const now = req.now.toISOString();
  return db.db.transaction(async (tx) => {
    // Accounts with a due target, oldest due first, each locked with try (busy elsewhere: skipped). The
    // lock is volatile, so PostgreSQL evaluates it only on the distinct accounts, never pushed below them.
    const locked = await db.rows<{ account_id: string }>(sql`
      select account_id from (
        select distinct account_id from (
          select account_id from post_targets
          where status in ('pending', 'scheduled') and due_at <= ${now}::timestamptz and account_id is not null
            and platform = any(${pgArray(platforms)}::text[])
            ${req.busyAccounts.length ? sql`and account_id <> all(${pgArray(req.busyAccounts)}::uuid[])` : sql``}
            ${req.postId ? sql`and post_id = ${req.postId}::uuid` : sql``}
          order by due_at
          limit ${limit * 4}
        ) due
      ) candidates
      where pg_try_advisory_xact_lock(${ACCOUNT_LOCK_SPACE}, hashtext(account_id::text))`, tx);
    if (!locked.length) return [];
    return db.rows<ClaimedTarget>(sql`
      with cand as (
        -- Per locked account that is active and not publishing anywhere: its first eligible due target.
        select f.id, f.platform, f.due_at
        from unnest(${pgArray(locked.map((l) => l.account_id))}::uuid[]) as l(account_id)
        join accounts a on a.id = l.account_id and a.status = 'active'
        cross join lateral (
          select t.id, t.platform, t.due_at from post_targets t
          where t.account_id = l.account_id and t.status in ('pending', 'scheduled') and t.due_at <= ${now}::timestamptz
            ${req.postId ? sql`and t.post_id = ${req.postId}::uuid` : sql``}
            -- A thread item waits until every earlier item of its thread is published.
            and not exists (
              select 1 from post_targets e
              where e.post_id = t.post_id and e.account_id = t.account_id and e.position < t.position
                and e.target_variant is null and t.target_variant is null and e.status <> 'published')
          order by t.due_at, t.position
          limit 1
        ) f
        where not exists (select 1 from post_targets p where p.account_id = l.account_id and p.status = 'processing')
      ), ranked as (
        select c.id, c.due_at, row_number() over (partition by c.platform order by c.due_at) as rn,
               (${JSON.stringify(req.caps)}::jsonb ->> c.platform)::int as cap
        from cand c
      ), picked as (
        select id from ranked where rn <= cap order by due_at limit ${limit}
      ), rows as (
        select t.id from post_targets t
        where t.id in (select id from picked) and t.status in ('pending', 'scheduled')
        for update skip locked
      )
      update post_targets t
      set status = 'processing', attempts = t.attempts + 1, lease_until = ${req.leaseUntil.toISOString()}::timestamptz,
          claimed_by = ${req.claimedBy}, updated_at = ${now}::timestamptz
      from rows where t.id = rows.id
      returning t.id, t.post_id as "postId", t.account_id as "accountId", t.platform, t.attempts`, tx);
  });
}

/** An array literal; the items are uuids or platform ids (no commas, quotes or braces). */
function pgArray(ids: string[]): string {
  return `{${ids.join(",")}}`;
}

/** The due time of the next waiting target if it falls within `ms` from now (for an early wake-up). */
export async function nextDueWithin(db: Db, now: Date, ms: number): Promise<Date | null> {
  const [row] = await db.rows<{ next: string | Date | null }>(sql`
    select min(due_at) as next from post_targets
    where status in ('pending', 'scheduled') and due_at > ${now.toISOString()}::timestamptz
      and due_at <= ${new Date(now.getTime() + ms).toISOString()}::timestamptz`);
  return row?.next ? new Date(row.next) : null;
}
