/**
 * Settles unknown outcomes (a timeout or 5xx after the creating call): asks the plugin whether the post
 * exists on the account. Found → published with its id and URL. Proven absent (the platform's listing is
 * read-after-write and the settle delay passed) → one more attempt, once. Otherwise the target stays
 * failed/outcome_unknown and its error says what was checked. Publishing at most once stays the rule:
 * nothing here publishes; a retry goes back through the claim like any due target.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { finderFor } from "../platform/find-published.ts";
import { providerFor, sandboxPostUrl } from "../platform/host/provider.ts";
import { optionsForPlugin } from "../platform/host/options.ts";
import type { FindResult, MediaItem } from "../platform/sdk.ts";
import type { Job } from "./dispatch.ts";
import type { PeriodicJob } from "./jobs.ts";
import { firstCommentFallsDue } from "./first-comment-sql.ts";
import { settleLeased } from "./settle-leased.ts";
import { reconcileCommentsDue } from "./first-comment-reconcile.ts";

/** Targets settled per run; the rest wait for the next run. */
const BATCH = 20;
/** A reconciler that dies mid-run leaves its targets to the next run once this lease ends. */
const LEASE_MS = 120_000;

export const reconcileJob: PeriodicJob = {
  name: "reconcile-unknown-outcomes",
  everyMs: 5_000,
  run: async (ctx) => {
    await reconcileDue(ctx);
    // First comments whose outcome is unknown are settled the same way (first-comment-reconcile.ts).
    await reconcileCommentsDue(ctx);
  },
};

/** Leases due unknown outcomes (per target, like a publish claim) and settles each; returns how many. */
export async function reconcileDue(ctx: AppContext): Promise<number> {
  const holder = `reconcile:${randomUUID()}`;
  const now = ctx.clock.now();
  const leased = await ctx.db.rows<{ id: string }>(sql`
    update post_targets set lease_until = ${new Date(now.getTime() + LEASE_MS).toISOString()}::timestamptz,
      claimed_by = ${holder}
    where id in (select id from post_targets
                 where status = 'failed' and error_code = 'outcome_unknown'
                   and reconcile_at <= ${now.toISOString()}::timestamptz
                   and (lease_until is null or lease_until < ${now.toISOString()}::timestamptz)
                 order by reconcile_at limit ${BATCH} for update skip locked)
    returning id`);
  return settleLeased(ctx, leased, (job) => settle(ctx, holder, job), "reconciling an unknown outcome failed");
}

async function ask(ctx: AppContext, job: Job): Promise<FindResult> {
  if (job.account.status !== "active" || !job.account.credentials) {
    return { kind: "cannot_tell", reason: "the account is no longer connected" };
  }
  const { plugin, context } = providerFor(ctx, job.account, { sandbox: job.sandbox });
  const find = finderFor(plugin);
  if (!find) return { kind: "cannot_tell", reason: `${plugin.displayName} cannot list the account's posts` };
  const t = job.target;
  try {
    return await find(context, {
      // What was really sent: lenient handling may have fitted the text and media to this platform.
      content: t.fittedContent ?? t.contentOverride ?? job.content,
      media: (t.fittedMedia ?? job.media) as MediaItem[],
      options: optionsForPlugin(plugin, t.platformOptions),
      since: t.reconcileSince ?? t.updatedAt,
      until: t.reconcileUntil ?? t.updatedAt,
      idempotencyToken: t.id,
      ...(job.replyTo && { replyTo: job.replyTo }),
    });
  } catch (e) {
    return { kind: "cannot_tell", reason: `asking the platform failed: ${(e as Error)?.message}` };
  }
}

/** Only while we hold the lease and the target is still the unknown outcome we leased (a user retry wins). */
const ours = (id: string, holder: string) =>
  sql`id = ${id} and claimed_by = ${holder} and status = 'failed' and error_code = 'outcome_unknown'`;

async function settle(ctx: AppContext, holder: string, job: Job): Promise<void> {
  const t = job.target;
  const result = await ask(ctx, job);
  const at = ctx.clock.now().toISOString();
  const log = ctx.log.child({ component: "reconcile", target_id: t.id, platform: t.platform });
  log.info("unknown outcome checked", { result: result.kind });
  if (result.kind === "found") {
    await ctx.db.rows(sql`
      update post_targets set status = 'published', platform_post_id = ${result.platformPostId},
        platform_post_url = ${job.sandbox ? sandboxPostUrl(ctx, t.id) : result.url}, published_at = coalesce(reconcile_until, ${at}::timestamptz),
        error = null, error_code = null, reconcile_at = null, lease_until = null, updated_at = ${at}::timestamptz,
        ${firstCommentFallsDue(sql`${at}::timestamptz`)}
      where ${ours(t.id, holder)} returning id`);
    return;
  }
  const plugin = ctx.platforms.get(t.platform);
  if (result.kind === "absent" && plugin?.listingReadAfterWrite && !t.reconcileRetried) {
    // Proven not created: one more attempt, through the claim like any due target.
    await ctx.db.rows(sql`
      update post_targets set status = 'pending', due_at = ${at}::timestamptz, error = null, error_code = null,
        reconcile_at = null, reconcile_retried = true, lease_until = null, claimed_by = null,
        updated_at = ${at}::timestamptz
      where ${ours(t.id, holder)} returning id`);
    ctx.dispatch?.wake();
    return;
  }
  const checked =
    result.kind === "cannot_tell"
      ? `Crier could not tell whether it exists: ${result.reason}.`
      : t.reconcileRetried
        ? `It was absent once and tried again; after that attempt Crier checked ${result.checked}, so it is not retried again.`
        : `Crier checked ${result.checked}; ${plugin?.displayName ?? t.platform}'s listing may lag behind, so that does not prove it was not made.`;
  await ctx.db.rows(sql`
    update post_targets set error = ${`${t.error ?? "The outcome is unknown."} ${checked}`},
      reconcile_at = null, lease_until = null, updated_at = ${at}::timestamptz
    where ${ours(t.id, holder)} returning id`);
}
