/**
 * Writes publish results in batches: one UPDATE (one commit) for every result that came in within a
 * couple of milliseconds, instead of one commit each. A publish counts as done (its slot and account
 * free again) only once its result is committed, so a crash can never lose a recorded outcome.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { TargetStatus } from "./status.ts";

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
  at: Date;
}

interface Pending { id: string; r: TargetResult; done: () => void; fail: (e: unknown) => void }

const MAX_BATCH = 64;
const WAIT_MS = 2;

export class Recorder {
  private pending: Pending[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private db: Db, private claimedBy: string) {}

  record(id: string, r: TargetResult): Promise<void> {
    return new Promise((done, fail) => {
      this.pending.push({ id, r, done, fail });
      if (this.pending.length >= MAX_BATCH) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), WAIT_MS);
    });
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
    if (!batch.length) return;
    const ts = (d: Date | null | undefined) => (d ? d.toISOString() : null);
    const rows: SQL[] = batch.map(({ id, r }) => sql`(${id}::uuid, ${r.status}, ${r.platformPostId ?? null}, ${r.platformPostUrl ?? null},
      ${ts(r.publishedAt)}::timestamptz, ${r.error ?? null}, ${r.errorCode ?? null}, ${ts(r.dueAt)}::timestamptz,
      ${r.submittedHandle ?? null}, ${ts(r.submitDeadline)}::timestamptz, ${ts(r.at)}::timestamptz)`);
    try {
      // Fenced on our claim: a target another copy declared expired (outcome_unknown) may still get the
      // real outcome from us, but nothing someone else claimed since is overwritten.
      // Not waiting for the disk is safe here: a result lost in a database crash leaves the target
      // processing, and its lease then ends it outcome_unknown. Nothing is ever published twice by it;
      // the claim, which decides that, is committed durably.
      await this.db.db.transaction(async (tx) => {
        await this.db.rows(sql`set local synchronous_commit = off`, tx);
        await this.db.rows(sql`
        update post_targets t set status = v.status, platform_post_id = v.ppid, platform_post_url = v.url,
          published_at = v.published_at, error = v.error, error_code = v.code, due_at = v.due_at,
          submitted_handle = v.handle, submit_deadline = v.deadline, lease_until = null, updated_at = v.at
        from (values ${sql.join(rows, sql`, `)}) as v(id, status, ppid, url, published_at, error, code, due_at, handle, deadline, at)
        where t.id = v.id and t.claimed_by = ${this.claimedBy}
          and (t.status = 'processing' or (t.status = 'failed' and t.error_code = 'outcome_unknown'))
        returning t.id`, tx);
      });
      for (const p of batch) p.done();
    } catch (e) {
      for (const p of batch) p.fail(e);
    }
  }
}
