/**
 * The per-tick chores that keep targets moving without calling any platform: expired leases, targets of
 * accounts that cannot publish, thread items whose parent will never be published, and our own leases.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { uuidArray } from "../db/uuid-array.ts";

/**
 * A target still processing (or being polled) after its lease ran out belongs to a copy that died or hung mid-call:
 * the platform may or may not have the post, so it becomes failed/outcome_unknown and is never published
 * again by itself. The claimer stays recorded so that copy can still report a real outcome if it lives.
 */
export async function expireLeases(db: Db, now: Date, reconcileSettleMs: number): Promise<number> {
  // A row locked right now is having its result written by the copy that holds it: it is not expired,
  // and waiting for it (rows locked in no set order) could deadlock with that write.
  // A publish cut short is reconciled later (reconcile.ts): it began after the target fell due. A status
  // check cut short is not: when its post was made is not known closely enough to look for it.
  const publishing = sql`status = 'processing'`;
  const rows = await db.rows(sql`
    update post_targets set status = 'failed', error_code = 'outcome_unknown',
      error = 'The copy of Crier publishing this target stopped before reporting the result; the post may or may not be on the platform.',
      reconcile_at = case when ${publishing} then ${new Date(now.getTime() + reconcileSettleMs).toISOString()}::timestamptz end,
      reconcile_since = case when ${publishing} then due_at end,
      reconcile_until = case when ${publishing} then ${now.toISOString()}::timestamptz end,
      lease_until = null, due_at = null, updated_at = ${now.toISOString()}::timestamptz
    where id in (select id from post_targets
                 where status in ('processing', 'submitted') and lease_until < ${now.toISOString()}::timestamptz
                 for update skip locked)
    returning id`);
  return rows.length;
}

/** Due targets of disconnected, auth_required or deleted accounts fail with a clear error instead of calling out. */
export async function failUnpublishable(db: Db, now: Date): Promise<number> {
  const at = now.toISOString();
  const a = await db.rows(sql`
    update post_targets t set status = 'failed', due_at = null, updated_at = ${at}::timestamptz,
      error_code = case a.status when 'disconnected' then 'account_disconnected' else 'auth_required' end,
      error = case a.status
        when 'disconnected' then 'The account was disconnected before this target was published. Connect it again, then retry the target.'
        else 'The platform no longer accepts this account''s authorization. Reconnect the account, then retry the target.' end
    from (
      -- From the accounts that are not active to their due targets, never the other way: with a backlog
      -- of due targets (a burst of 100,000, bench/scale) the planner, its statistics behind, read every due
      -- target to find none of such accounts, 100 ms a tick in each copy. OFFSET 0 keeps the subquery
      -- from being flattened into a join whose order the planner would choose again.
      select g.status, w.id from accounts g cross join lateral (
        select w.id from post_targets w
        where w.account_id = g.id and w.status in ('pending', 'scheduled') and w.due_at <= ${at}::timestamptz
        offset 0) w
      where g.status <> 'active') a
    where t.id = a.id
    returning t.id`);
  const b = await db.rows(sql`
    update post_targets set status = 'failed', due_at = null, updated_at = ${at}::timestamptz,
      error_code = 'account_deleted', error = 'The account of this target no longer exists.'
    where account_id is null and status in ('pending', 'scheduled') and due_at <= ${at}::timestamptz
    returning id`);
  return a.length + b.length;
}

/**
 * A thread item cannot reply to an earlier item that failed, was skipped or cancelled: it is skipped.
 * Which items are earlier is crier_thread_predecessors (migrations/functions/crier_thread_predecessors.sql).
 */
export async function skipOrphanedThreadItems(db: Db, now: Date): Promise<number> {
  const rows = await db.rows(sql`
    update post_targets t set status = 'skipped', due_at = null, updated_at = ${now.toISOString()}::timestamptz,
      error_code = 'thread_parent_not_published',
      error = 'An earlier item of this thread was not published, so this reply was not sent.'
    where t.status in ('pending', 'scheduled') and t.due_at <= ${now.toISOString()}::timestamptz
      and t.position > 0 and exists (
        select 1 from crier_thread_predecessors(t.post_id, t.account_id, t.position, t.target_variant) e
        where e.status in ('failed', 'skipped', 'cancelled'))
    returning t.id`);
  return rows.length;
}

/**
 * Keeps the leases of what this copy is still publishing from running out. A row locked right now is
 * having its result written by the recorder (src/engine/recorder.ts), which ends the lease anyway: it is
 * skipped, since waiting on it while holding others, locked in no set order, deadlocked with that write
 * (two copies draining 10,000 targets lost results to it; bench/dispatch). A row whose lease that write
 * already ended is left alone too: the ids were read before it, and a lease given back to a target now
 * submitted kept its status checks away until the lease ran out and failed it outcome_unknown.
 */
export async function renewLeases(db: Db, claimedBy: string, ids: string[], until: Date): Promise<void> {
  if (!ids.length) return;
  await db.rows(sql`
    update post_targets set lease_until = ${until.toISOString()}::timestamptz
    where id in (select id from post_targets
                 where claimed_by = ${claimedBy} and status in ('processing', 'submitted') and lease_until is not null
                   and id = any(${uuidArray(ids)}::uuid[])
                 for update skip locked)
    returning id`);
}
