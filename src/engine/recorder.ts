/**
 * The engine's one writer of what came of a target or an account: publish results, status checks of
 * submitted targets and an account's lost authorization all go through here.
 *
 * Target results are written in batches, group-commit style: one statement at a time, and every result
 * that comes in while it runs goes into the next one, so a busy copy writes one UPDATE (one commit) per
 * batch instead of one each. While a claim is expected, a result waits briefly for company (LINGER_MS),
 * and the copy's next claim takes what is waiting along (takeForClaim). A publish counts as done (its
 * slot and account free again) only once its result is committed, so a crash can never lose a recorded
 * outcome.
 * A write the database refused for a passing reason (a deadlock victim, a lost connection) is sent again
 * with backoff for as long as a lease lasts: the outcome is known, and a result that is given up on ends
 * outcome_unknown when the lease runs out, a worse answer than the one we had.
 *
 * A write that gets no answer (a database that accepts connections and never answers) is given up after
 * a client-side deadline and counts as passing too (isTransientError), so it is sent again on another
 * connection rather than waiting minutes on a dead one. Sending it again is harmless even if the first
 * reached the database after all: crier_record_results is fenced on the claim (the target still held
 * processing or submitted by this copy), so whichever copy of the write lands second changes nothing.
 */
import { eq, sql } from "drizzle-orm";
import { preparedSql } from "../db/prepared.ts";
import type { Db } from "../db/client.ts";
import { accounts } from "../db/schema.ts";
import type { TargetStatus } from "../domain/status.ts";
import { isTransientError } from "../db/availability.ts";
import { withQueryDeadline } from "../db/deadline.ts";
import { errorFields, type Logger } from "../log.ts";
import { uuidArray } from "../db/uuid-array.ts";

export interface TargetResult {
  status: Extract<TargetStatus, "published" | "submitted" | "scheduled" | "failed">;
  platformPostId?: string | null;
  platformPostUrl?: string | null;
  publishedAt?: Date | null;
  error?: string | null;
  errorCode?: string | null;
  dueAt?: Date | null;
  submittedHandle?: string | null;
  submitDeadline?: Date | null;
  /** An unknown outcome to settle: when to ask the platform, and the attempt's window (src/engine/reconcile.ts). */
  reconcileAt?: Date | null;
  reconcileSince?: Date | null;
  reconcileUntil?: Date | null;
  at: Date;
}

/** What the target is while we hold it: claimed to publish (processing) or to check on (submitted). */
type HeldAs = "processing" | "submitted";

interface Pending {
  id: string;
  r: TargetResult;
  heldAs: HeldAs;
  done: () => void;
  fail: (e: unknown) => void;
  /** When the result came in (performance.now()): a write failing since then longer than a lease is given up. */
  since: number;
}

const p = (name: string) => sql.placeholder(name);
/**
 * One statement, prepared, whatever the batch size: crier_record_results (migrations/functions/crier_record_results.sql).
 * Not waiting for the disk is safe here: a result lost in a database crash leaves the target processing,
 * and its lease then ends it outcome_unknown. Nothing is ever published twice by it; the claim, which
 * decides that, is committed durably. set_config(..., true) inside the statement applies to its own
 * implicit transaction, whose commit is what it relaxes (no BEGIN / SET LOCAL / COMMIT round trips).
 */
const recordStatement = preparedSql(
  "crier_record_results_call",
  sql`
  select crier_record_results(${p("rows")}::text::jsonb, ${p("ids")}::text::uuid[], ${p("claimedBy")}::text) as written
  from (select set_config('synchronous_commit', 'off', true)) as relaxed`,
);

const MAX_BATCH = 64;
/**
 * Results a write waits for while more are on their way, and for at most how long after the first came
 * in. Where the platform answers slowly, results come in one at a time, and written each alone they cost
 * PostgreSQL four times as much per target as in batches of eight (bench/dispatch (b)): a commit and a
 * round trip each. Only the account waits meanwhile (its slot is already free, published_at is the time
 * the platform answered), and a copy with nothing else in flight writes at once. Most often the copy's
 * next claim takes them first (takeForClaim): claims come as often as a batch of slots frees, sooner
 * than a write waits here, so one statement carries both.
 */
const LINGER_BATCH = MAX_BATCH;
const LINGER_MS = 200;
/** Without statement_timeout, how long a write may go unanswered before it is sent again. */
const WRITE_DEADLINE_MS = 5_000;
/** Backoff between writes of a batch the database refused for a passing reason: doubles from the first. */
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;

export class Recorder {
  private pending: Pending[] = [];
  private writing = false;
  private scheduled = false;
  /** A write waiting for more results (LINGER_MS): started early once LINGER_BATCH are pending. */
  private lingering: ReturnType<typeof setTimeout> | undefined;
  /**
   * Whether a claim that can carry the waiting results is expected soon (the engine's pool sets it:
   * claimExpected). Without it every result is written at once.
   */
  moreComing: () => boolean = () => false;
  /** The wait before the next write after a refused one; 0 while writes succeed. */
  private retryMs = 0;
  /** A claim carrying results failed: they are written by the recorder itself before any rides again. */
  private alone = false;

  constructor(
    private db: Db,
    private claimedBy: string,
    private log: Logger,
    /** How long a result keeps being written again while the database refuses it for a passing reason. */
    private retryForMs: number,
  ) {}

  /** What came of publishing a target we claimed (it is processing under our lease). */
  record(id: string, r: TargetResult): Promise<void> {
    return this.enqueue(id, r, "processing");
  }

  /**
   * What a status check of a submitted target we leased found. The whole row is written, so a target
   * still processing on the platform passes its handle, deadline and next due time along unchanged.
   */
  recordCheck(id: string, r: TargetResult): Promise<void> {
    return this.enqueue(id, r, "submitted");
  }

  /**
   * The platform refused the account's authorization even after a refresh: every later target of it
   * fails auth_required (housekeeping) until the user reconnects. Written at once, not batched, before
   * the target's own result: once the target reads failed, the account already reads auth_required.
   */
  async accountNeedsReconnect(accountId: string, at: Date): Promise<void> {
    await this.db.db.update(accounts).set({ status: "auth_required", updatedAt: at }).where(eq(accounts.id, accountId));
  }

  /**
   * The server's own credential for a platform was refused (Telegram's bot token): every active account
   * that publishes with it (same platform, same sandbox or live settings) needs attention.
   */
  async platformNeedsReconnect(accountId: string, at: Date): Promise<void> {
    await this.db.rows(sql`
      update accounts a set status = 'auth_required', updated_at = ${at.toISOString()}::timestamptz
      from accounts me join profiles mp on mp.id = me.profile_id, profiles p
      where me.id = ${accountId} and p.id = a.profile_id and a.platform = me.platform
        and p.sandbox = mp.sandbox and (a.status = 'active' or a.id = me.id)
      returning a.id`);
  }

  /**
   * Hands the results waiting to be written to a claim about to go out (crier_record_and_claim): one
   * statement and one commit for both. The claim reports back: written() once it committed, failed()
   * when it did not; the results then go first in the recorder's own next write, and ride no claim until
   * a write of its own went through (the claim's failure may have been the claim's). Nothing while a
   * refused write is backing off, and nothing when no result is waiting.
   */
  takeForClaim(): { rows: string; ids: string; targetIds: string[]; written(): void; failed(): void } | null {
    if (this.retryMs || this.alone || !this.pending.length) return null;
    const batch = this.pending.splice(0, MAX_BATCH);
    if (!this.pending.length && this.lingering) {
      // The wait was for these: the next result starts a wait of its own rather than going out alone
      // when this one's time is up.
      clearTimeout(this.lingering);
      this.lingering = undefined;
      this.scheduled = false;
    }
    return {
      rows: JSON.stringify(batch.map(resultRow)),
      ids: uuidArray(batch.map((p) => p.id)),
      targetIds: batch.map((p) => p.id),
      written: () => {
        for (const p of batch) p.done();
      },
      failed: () => {
        this.alone = true;
        this.pending.unshift(...batch);
        this.schedule();
      },
    };
  }

  /** No claim is coming to carry the waiting results after all (the pool's platforms came up dry): write now. */
  claimNotComing(): void {
    if (!this.lingering) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.scheduled = false;
    this.schedule();
  }

  private enqueue(id: string, r: TargetResult, heldAs: HeldAs): Promise<void> {
    return new Promise((done, fail) => {
      this.pending.push({ id, r, heldAs, done, fail, since: performance.now() });
      this.schedule();
    });
  }

  /**
   * After this turn of the event loop, so results finishing together share a statement (after the backoff
   * when the last write was refused).
   */
  private schedule() {
    if (this.writing) return;
    if (this.lingering && this.pending.length >= LINGER_BATCH) {
      // Enough for a batch: the write waiting for more goes now.
      clearTimeout(this.lingering);
      this.lingering = undefined;
      this.scheduled = false;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.lingering = undefined;
      void this.flush();
    };
    if (this.retryMs) setTimeout(run, this.retryMs);
    else if (this.pending.length < LINGER_BATCH && this.moreComing()) {
      const waited = performance.now() - this.pending[0].since;
      this.lingering = setTimeout(run, Math.max(0, LINGER_MS - waited));
    } else setImmediate(run);
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    const batch = this.pending.splice(0, MAX_BATCH);
    if (!batch.length) return;
    this.writing = true;
    try {
      // A little past the server's own statement_timeout: a server that answers cancels first.
      const deadline = (this.db.statementTimeoutMs || WRITE_DEADLINE_MS) + 1_000;
      await withQueryDeadline(deadline, () =>
        recordStatement(this.db, {
          rows: JSON.stringify(batch.map(resultRow)),
          ids: uuidArray(batch.map((p) => p.id)),
          claimedBy: this.claimedBy,
        }),
      );
      this.retryMs = 0;
      this.alone = false;
      for (const p of batch) p.done();
    } catch (e) {
      this.refused(batch, e);
    } finally {
      this.writing = false;
      if (this.pending.length) this.schedule();
    }
  }

  /** A batch whose write failed: sent again first, after a backoff, while the failure may pass. */
  private refused(batch: Pending[], e: unknown) {
    const now = performance.now();
    const again = isTransientError(e) ? batch.filter((p) => now - p.since < this.retryForMs) : [];
    for (const p of batch) if (!again.includes(p)) p.fail(e);
    if (!again.length) {
      // Nothing to send again: what comes in next is written at once, not after the backoff.
      this.retryMs = 0;
      return;
    }
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs ? this.retryMs * 2 : RETRY_FIRST_MS);
    this.log.warn("writing publish results failed; trying again", {
      ...errorFields(e),
      results: again.length,
      retry_in_ms: this.retryMs,
    });
    this.pending.unshift(...again);
  }
}

const ts = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/** One result as a row of crier_record_results' recordset. */
function resultRow({ id, r, heldAs }: Pending) {
  return {
    id,
    status: r.status,
    ppid: r.platformPostId ?? null,
    url: r.platformPostUrl ?? null,
    published_at: ts(r.publishedAt),
    error: r.error ?? null,
    code: r.errorCode ?? null,
    due_at: ts(r.dueAt),
    handle: r.submittedHandle ?? null,
    deadline: ts(r.submitDeadline),
    at: ts(r.at),
    held_as: heldAs,
    reconcile_at: ts(r.reconcileAt),
    reconcile_since: ts(r.reconcileSince),
    reconcile_until: ts(r.reconcileUntil),
  };
}
