/**
 * Claiming due targets so that no target is ever handed to two publishers, across any number of copies
 * sharing one database, and at most one publish runs per account at a time.
 *
 * One claim is one call of crier_claim (migrations/functions/crier_claim.sql), one transaction:
 *  1. candidate accounts with a due target, each with a transaction-scoped advisory lock taken with try
 *     (a busy account is skipped): two claimers can never both be between "is this account idle?" and
 *     "mark its target processing";
 *  2. a fresh statement (so it sees what earlier lock holders committed) that picks, per locked and idle
 *     account, its first due target in thread order, caps per platform, locks the rows with
 *     FOR UPDATE SKIP LOCKED and marks them processing with a lease, in one UPDATE.
 * The transaction commits before any plugin is called.
 *
 * A claim is never abandoned on the client (no client-side deadline, even when an API request asks for
 * it through claimPost): a claim given up while its statement was still on its way could commit on the
 * server anyway, leaving targets processing under this copy's lease that this copy never publishes. It
 * is bounded by the server's statement_timeout instead, whose cancel rolls the claim back: the copy
 * either gets the rows it claimed or knows it claimed nothing. What remains is a connection lost between
 * the COMMIT and its answer; the targets then stay processing under a lease nobody renews (no second
 * publisher can take them) and end outcome_unknown when it runs out, for reconcile to settle. Never twice.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { preparedSql } from "../db/prepared.ts";
import { uuidArray } from "../db/uuid-array.ts";
import { withQueryDeadline } from "../db/deadline.ts";

export interface ClaimedTarget {
  id: string;
  postId: string;
  accountId: string;
  platform: string;
  attempts: number;
  /** What the publish needs, read by the claim's own statement (src/engine/dispatch.ts jobFromClaim reads it). */
  job?: ClaimedJob;
}

/** The job columns of crier_claim (migrations/functions/crier_claim.sql), as the driver returns them. */
export interface ClaimedJob {
  target: Record<string, unknown>;
  content: string;
  media: unknown;
  account: Record<string, unknown>;
  sandbox: boolean;
  replyTo: string | null;
  root: string | null;
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
  /**
   * Publish results this copy has waiting, written in the claim's transaction before it claims
   * (crier_record_and_claim): the recorder's rows and ids (src/engine/recorder.ts takeForClaim).
   */
  results?: { rows: string; ids: string };
}

export async function claimDue(db: Db, req: ClaimRequest): Promise<ClaimedTarget[]> {
  const platforms = Object.keys(req.caps).filter((p) => req.caps[p] > 0);
  const limit = Math.min(
    req.limit,
    platforms.reduce((n, p) => n + req.caps[p], 0),
  );
  if (limit <= 0 && !req.results) return [];
  // One call, one implicit transaction: crier_claim (migrations/functions/crier_claim.sql) does both steps and
  // reads the jobs.
  const args = {
    now: req.now.toISOString(),
    leaseUntil: req.leaseUntil.toISOString(),
    claimedBy: req.claimedBy,
    caps: JSON.stringify(Object.fromEntries(platforms.map((p) => [p, req.caps[p]]))),
    limit,
    busy: uuidArray(req.busyAccounts),
    postId: req.postId ?? null,
  };
  const rows = await withQueryDeadline(null, () =>
    req.results ? recordAndClaimStatement(db, { ...args, ...req.results }) : claimStatement(db, args),
  );
  return rows.map(({ id, postId, accountId, platform, attempts, ...job }) => ({
    id,
    postId,
    accountId,
    platform,
    attempts,
    job,
  }));
}

const p = (name: string) => sql.placeholder(name);
// Prepared: one round trip per claim instead of a describe and then the call.
const claimStatement = preparedSql<ClaimedTarget & ClaimedJob>(
  "crier_claim_jobs_call",
  sql`
    select id, post_id as "postId", account_id as "accountId", platform, attempts,
      target, content, media, account, sandbox, reply_to as "replyTo", root
    from crier_claim(${p("now")}::text::timestamptz, ${p("leaseUntil")}::text::timestamptz, ${p("claimedBy")}::text,
      ${p("caps")}::text::jsonb, ${p("limit")}::int, ${p("busy")}::text::uuid[], ${p("postId")}::text::uuid)`,
);

const recordAndClaimStatement = preparedSql<ClaimedTarget & ClaimedJob>(
  "crier_record_and_claim_call",
  sql`
    select id, post_id as "postId", account_id as "accountId", platform, attempts,
      target, content, media, account, sandbox, reply_to as "replyTo", root
    from crier_record_and_claim(${p("rows")}::text::jsonb, ${p("ids")}::text::uuid[],
      ${p("now")}::text::timestamptz, ${p("leaseUntil")}::text::timestamptz, ${p("claimedBy")}::text,
      ${p("caps")}::text::jsonb, ${p("limit")}::int, ${p("busy")}::text::uuid[], ${p("postId")}::text::uuid)`,
);

/**
 * The due time of the next waiting target of `platforms` if it falls within `ms` from now (for an early
 * wake-up): one probe per platform in the (platform, due_at) index of waiting targets (migration 0034,
 * whose predicate this condition repeats).
 */
export async function nextDueWithin(db: Db, now: Date, ms: number, platforms: string[]): Promise<Date | null> {
  const [row] = await db.rows<{ next: string | Date | null }>(sql`
    select min(n.due_at) as next from jsonb_array_elements_text(${JSON.stringify(platforms)}::text::jsonb) as pl(platform)
    cross join lateral (
      select t.due_at from post_targets t
      where t.platform = pl.platform and (t.status || '') in ('pending', 'scheduled')
        and t.due_at > ${now.toISOString()}::timestamptz
        and t.due_at <= ${new Date(now.getTime() + ms).toISOString()}::timestamptz
      order by t.due_at limit 1
    ) n`);
  return row?.next ? new Date(row.next) : null;
}
