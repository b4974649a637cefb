/**
 * The statements that move a target's first comment through its states (src/engine/first-comment.ts says
 * what each state means). Every write is fenced on the lease it was taken under, as a publish's result is.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { uuidArray } from "../db/uuid-array.ts";

const iso = (d: Date) => d.toISOString();

/**
 * SET clauses that make a waiting first comment due at `at`, for a statement that records its target
 * published (crier_record_results does the same in SQL).
 */
export const firstCommentFallsDue = (at: SQL) => sql`
  first_comment_status = case when first_comment_status = 'waiting' then 'pending' else first_comment_status end,
  first_comment_due_at = case when first_comment_status = 'waiting' then ${at} else first_comment_due_at end`;

/**
 * Leases due first comments (of published targets) for this copy: processing from now on, so a copy that
 * dies mid-call leaves a lease that runs out (expireCommentLeases), never a comment posted twice. With
 * `targetId`, only that target's (posted right after its publish).
 */
/** What a lease of due first comments asks for (claimComments). */
export interface CommentClaim {
  now: Date;
  leaseUntil: Date;
  claimedBy: string;
  limit: number;
  targetId?: string;
}

export async function claimComments(db: Db, p: CommentClaim): Promise<{ id: string; attempts: number }[]> {
  if (p.limit <= 0) return [];
  return db.rows<{ id: string; attempts: number }>(claimCommentsStatement(p));
}

/**
 * The lease statement of claimComments. Its due comments are found through their own index
 * (post_targets_first_comment_due_idx): the condition on the target's status is written as an expression
 * that no index serves (neither (status, due_at) nor the published index's `status || ''`), because
 * PostgreSQL, with statistics taken before a burst was published, answered it through (status, due_at)
 * and read every published target on every tick of every copy (3,550 buffer pages a call among 100,000,
 * to find none; bench/scale's burst).
 */
export function claimCommentsStatement(p: CommentClaim): SQL {
  return sql`
    update post_targets set first_comment_status = 'processing',
      first_comment_attempts = first_comment_attempts + 1, first_comment_lease_until = ${iso(p.leaseUntil)}::timestamptz,
      first_comment_claimed_by = ${p.claimedBy}, first_comment_since = ${iso(p.now)}::timestamptz,
      first_comment_until = null, first_comment_error = null, first_comment_error_code = null
    where id in (select id from post_targets
                 where first_comment_status = 'pending' and first_comment_due_at <= ${iso(p.now)}::timestamptz
                   and coalesce(status, '') = 'published' ${p.targetId ? sql`and id = ${p.targetId}::uuid` : sql``}
                 order by first_comment_due_at limit ${p.limit} for update skip locked)
    returning id, first_comment_attempts as attempts`;
}

/** What came of one attempt, as stored. */
export interface CommentResult {
  status: "pending" | "published" | "failed" | "unknown";
  id?: string | null;
  url?: string | null;
  error?: string | null;
  errorCode?: string | null;
  /** pending: when to try again; unknown: when to ask the platform (null: it cannot be asked). */
  dueAt?: Date | null;
  at: Date;
}

/**
 * Writes an attempt's result while this copy still holds the comment: processing under its lease, or
 * made unknown by another copy after the lease ran out (the real outcome is better than that guess, as
 * for publishes). Whether it was written.
 */
export async function recordComment(db: Db, targetId: string, claimedBy: string, r: CommentResult): Promise<boolean> {
  const rows = await db.rows(sql`
    update post_targets set first_comment_status = ${r.status}, first_comment_id = ${r.id ?? null},
      first_comment_url = ${r.url ?? null}, first_comment_error = ${r.error ?? null},
      first_comment_error_code = ${r.errorCode ?? null},
      first_comment_due_at = ${r.dueAt ? iso(r.dueAt) : null}::timestamptz,
      first_comment_until = ${iso(r.at)}::timestamptz, first_comment_lease_until = null,
      updated_at = ${iso(r.at)}::timestamptz
    where id = ${targetId}::uuid and first_comment_claimed_by = ${claimedBy}
      and (first_comment_status = 'processing'
        or (first_comment_status = 'unknown' and first_comment_error_code = 'outcome_unknown'))
    returning id`);
  return rows.length > 0;
}

/** Keeps the leases of the comments this copy is posting from running out (as renewLeases does for targets). */
export async function renewCommentLeases(db: Db, claimedBy: string, ids: string[], until: Date): Promise<void> {
  if (!ids.length) return;
  await db.rows(sql`
    update post_targets set first_comment_lease_until = ${iso(until)}::timestamptz
    where id in (select id from post_targets
                 where first_comment_claimed_by = ${claimedBy} and first_comment_status = 'processing'
                   and id = any(${uuidArray(ids)}::uuid[])
                 for update skip locked)
    returning id`);
}

/**
 * A comment still processing after its lease ran out belongs to a copy that died or hung mid-call: the
 * platform may or may not have it, so it becomes unknown (to be reconciled after the settle delay) and is
 * never posted again by itself.
 */
export async function expireCommentLeases(db: Db, now: Date, settleMs: number): Promise<number> {
  const rows = await db.rows(sql`
    update post_targets set first_comment_status = 'unknown', first_comment_error_code = 'outcome_unknown',
      first_comment_error = 'The copy of Crier posting this first comment stopped before reporting the result; the comment may or may not be on the platform.',
      first_comment_due_at = ${iso(new Date(now.getTime() + settleMs))}::timestamptz,
      first_comment_until = ${iso(now)}::timestamptz, first_comment_lease_until = null,
      updated_at = ${iso(now)}::timestamptz
    where id in (select id from post_targets
                 where first_comment_status = 'processing' and first_comment_lease_until < ${iso(now)}::timestamptz
                 for update skip locked)
    returning id`);
  return rows.length;
}
