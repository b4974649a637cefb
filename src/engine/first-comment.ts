/**
 * First comments: a target's `first_comment`, posted by the same account right after the post was
 * published (a reply on X, Threads, Bluesky and Nostr, a comment elsewhere), through the plugin's
 * `firstComment` (src/platform/sdk.ts).
 *
 * States (post_targets.first_comment_status): waiting while the post is not published; pending once the
 * write that records the post published made it due (crier_record_results, in the same statement);
 * processing while a copy holds its lease, taken and committed before the platform is called; then
 * published, failed or unknown. Posting a comment at most once is the rule, as for posts: a retryable
 * outcome (nothing was created) goes back to pending with backoff, a bounded number of times; a refused
 * token is refreshed once; unknown (the call may have created it) is never retried blindly: the
 * reconciler (first-comment-reconcile.ts) asks the platform after the settle delay. A copy that dies
 * mid-call leaves a lease that runs out, and the comment becomes unknown (expireCommentLeases).
 *
 * A comment's failure never touches its target: the post stays published, and only first_comment says
 * what happened to the comment.
 */
import { createHash } from "node:crypto";
import type { AppContext } from "../context.ts";
import { errorFields, type Logger } from "../log.ts";
import { providerFor, sandboxPostUrl } from "../platform/host/provider.ts";
import { optionsForPlugin } from "../platform/host/options.ts";
import type { CommentJob } from "../platform/sdk.ts";
import { backoffMs, loadJobs, RECONNECT, withRefresh, type DispatchSettings, type Job } from "./dispatch.ts";
import { claimComments, recordComment, type CommentResult } from "./first-comment-sql.ts";

/** Comments one copy posts at once; more wait for the next tick. */
const COMMENTS_AT_ONCE = 16;

/** The idempotency token of a target's comment: stable across its attempts, and not the publish's own. */
export function commentToken(targetId: string): string {
  const h = createHash("sha256").update(`first-comment:${targetId}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The comment as the plugin gets it, from the target's job (loadJobs). */
export function commentJob(job: Job, options: Record<string, unknown>): CommentJob {
  const t = job.target;
  return {
    text: t.firstComment ?? "",
    parent: { platformPostId: t.platformPostId ?? "", url: t.platformPostUrl },
    options,
    idempotencyToken: commentToken(t.id),
  };
}

export class FirstComments {
  private readonly posting = new Map<string, Promise<void>>();
  /** postNow claims on their way (settled() waits for them and for what they start). */
  private readonly claiming = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly s: DispatchSettings,
    private readonly leaseMs: number,
    private readonly log: Logger,
  ) {}

  /** Comments this copy is posting right now (their leases are renewed every tick). */
  postingIds(): string[] {
    return [...this.posting.keys()];
  }

  /** Leases the due comments (retries, and those no copy posted right after their publish) and posts them. */
  async startDue(): Promise<void> {
    await this.claimAndPost();
  }

  /** Right after a target's publish was recorded: its comment, at once. */
  postNow(targetId: string): void {
    const claim = this.claimAndPost(targetId)
      .catch((e) => this.log.error("first comment could not be claimed", { target_id: targetId, ...errorFields(e) }))
      .finally(() => this.claiming.delete(claim));
    this.claiming.add(claim);
  }

  /** No new comments from now on. */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves when the comments being posted now have finished. */
  async settled(): Promise<void> {
    while (this.posting.size || this.claiming.size)
      await Promise.allSettled([...this.claiming, ...this.posting.values()]);
  }

  private async claimAndPost(targetId?: string): Promise<void> {
    if (this.stopped) return;
    const now = this.ctx.clock.now();
    const claimed = await claimComments(this.ctx.db, {
      now,
      leaseUntil: new Date(now.getTime() + this.leaseMs),
      claimedBy: this.s.claimedBy,
      limit: targetId ? 1 : COMMENTS_AT_ONCE - this.posting.size,
      targetId,
    });
    if (!claimed.length) return;
    const jobs = await loadJobs(
      this.ctx,
      claimed.map((c) => c.id),
    );
    for (const c of claimed) {
      const job = jobs.get(c.id);
      if (!job) continue; // the post was deleted meanwhile: nothing to comment on
      this.posting.set(
        c.id,
        postComment(this.ctx, this.s, job, c.attempts)
          .catch((e) =>
            // Our own failure: the lease runs out and the comment becomes unknown, never silently posted again.
            this.log.error("first comment crashed", { target_id: c.id, ...errorFields(e) }),
          )
          .finally(() => this.posting.delete(c.id)),
      );
    }
  }
}

/** Posts one leased comment through its plugin and records what came of it. */
export async function postComment(ctx: AppContext, s: DispatchSettings, job: Job, attempts: number): Promise<void> {
  const t = job.target;
  const write = (r: Omit<CommentResult, "at">) =>
    recordComment(ctx.db, t.id, s.claimedBy, { ...r, at: ctx.clock.now() });
  if (job.account.status !== "active" || !job.account.credentials) {
    await write(
      job.account.status === "auth_required"
        ? { status: "failed", errorCode: RECONNECT.code, error: RECONNECT.reason }
        : {
            status: "failed",
            errorCode: "account_disconnected",
            error: "The account was disconnected before the first comment was posted.",
          },
    );
    return;
  }
  let provider: ReturnType<typeof providerFor>;
  try {
    provider = providerFor(ctx, job.account, {
      sandbox: job.sandbox,
      ownStorage: s.ownStorage,
      allowMediaAddress: s.allowMediaAddress,
    });
  } catch (e) {
    // Nothing was sent: the failure is ours (no plugin, unreadable credentials).
    await write({
      status: "failed",
      errorCode: "internal_error",
      error: `Crier could not prepare the first comment: ${(e as Error)?.message}`,
    });
    return;
  }
  const { plugin, context } = provider;
  const support = plugin.firstComment;
  if (!support) {
    await write({
      status: "failed",
      errorCode: "first_comment_unsupported",
      error: `${plugin.displayName} takes no first comment in this version of Crier.`,
    });
    return;
  }
  const comment = commentJob(job, optionsForPlugin(plugin, t.platformOptions));
  const outcome = await withRefresh(ctx, s, plugin, context, job.account.id, () => support.publish(context, comment));
  const now = ctx.clock.now();
  if (outcome === "reconnect") {
    await write({ status: "failed", errorCode: RECONNECT.code, error: RECONNECT.reason });
    return;
  }
  ctx.log.debug("first comment outcome", { target_id: t.id, outcome: outcome.kind, attempt: attempts });
  switch (outcome.kind) {
    case "published":
      await write({
        status: "published",
        id: outcome.platformPostId,
        url: job.sandbox ? sandboxPostUrl(ctx, t.id) : outcome.url,
      });
      return;
    case "retryable":
      if (attempts >= s.maxAttempts) {
        await write({
          status: "failed",
          errorCode: "retries_exhausted",
          error: `Gave up after ${attempts} attempts: ${outcome.reason}`,
        });
      } else {
        const at = new Date(now.getTime() + Math.max(outcome.retryAfterMs ?? 0, backoffMs(attempts, s)));
        await write({
          status: "pending",
          dueAt: at,
          errorCode: "retry_scheduled",
          error: `Will try again at ${at.toISOString()}: ${outcome.reason}`,
        });
      }
      return;
    case "permanent":
      await write({ status: "failed", errorCode: outcome.code ?? "platform_rejected", error: outcome.reason });
      return;
    case "unknown":
    case "auth_expired":
      // Where the platform can be asked, the reconciler settles it once its listing had time to catch up.
      await write({
        status: "unknown",
        errorCode: "outcome_unknown",
        error: `${outcome.reason} The comment may or may not be on the platform; ${
          support.find
            ? "Crier will look for it there."
            : `${plugin.displayName}'s comments cannot be looked up, so it is not posted again: check there.`
        }`,
        dueAt: support.find ? new Date(now.getTime() + s.reconcileSettleMs) : null,
      });
      return;
  }
}
