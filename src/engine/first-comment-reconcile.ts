/**
 * Settles first comments whose outcome is unknown (a timeout or 5xx after the creating call, or a copy
 * that died mid-call), as reconcile.ts settles posts: a settle delay later the plugin's firstComment.find
 * says whether the comment exists under its post. Found → published. Proven absent (the plugin declares
 * its answer read-after-write: findReadAfterWrite) and not retried before → pending again, once.
 * Otherwise it stays unknown and its error says what was checked. Nothing here posts a comment.
 */
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { providerFor, sandboxPostUrl } from "../platform/host/provider.ts";
import { optionsForPlugin } from "../platform/host/options.ts";
import type { FindResult } from "../platform/sdk.ts";
import type { Job } from "./dispatch.ts";
import { settleLeased } from "./settle-leased.ts";
import { commentJob } from "./first-comment.ts";

/** Comments settled per run; the rest wait for the next run. */
const BATCH = 20;
/** A reconciler that dies mid-run leaves its comments to the next run once this lease ends. */
const LEASE_MS = 120_000;

/** Leases the unknown comments due for a check and settles each; returns how many. */
export async function reconcileCommentsDue(ctx: AppContext): Promise<number> {
  const holder = `reconcile:${randomUUID()}`;
  const now = ctx.clock.now().toISOString();
  const leased = await ctx.db.rows<{ id: string }>(sql`
    update post_targets set first_comment_lease_until = ${new Date(ctx.clock.now().getTime() + LEASE_MS).toISOString()}::timestamptz,
      first_comment_claimed_by = ${holder}
    where id in (select id from post_targets
                 where first_comment_status = 'unknown' and first_comment_due_at <= ${now}::timestamptz
                   and (first_comment_lease_until is null or first_comment_lease_until < ${now}::timestamptz)
                 order by first_comment_due_at limit ${BATCH} for update skip locked)
    returning id`);
  return settleLeased(ctx, leased, (job) => settle(ctx, holder, job), "reconciling a first comment failed");
}

async function ask(ctx: AppContext, job: Job): Promise<FindResult> {
  if (job.account.status !== "active" || !job.account.credentials)
    return { kind: "cannot_tell", reason: "the account is no longer connected" };
  const { plugin, context } = providerFor(ctx, job.account, { sandbox: job.sandbox });
  const find = plugin.firstComment?.find;
  if (!find) return { kind: "cannot_tell", reason: `${plugin.displayName} cannot look the comment up` };
  const t = job.target;
  try {
    return await find.call(plugin.firstComment, context, commentJob(job, optionsForPlugin(plugin, t.platformOptions)), {
      since: t.firstCommentSince ?? t.updatedAt,
      until: t.firstCommentUntil ?? t.updatedAt,
    });
  } catch (e) {
    return { kind: "cannot_tell", reason: `asking the platform failed: ${(e as Error)?.message}` };
  }
}

/** Only while we hold the lease and the comment is still the unknown one we leased. */
const ours = (id: string, holder: string) =>
  sql`id = ${id}::uuid and first_comment_claimed_by = ${holder} and first_comment_status = 'unknown'`;

async function settle(ctx: AppContext, holder: string, job: Job): Promise<void> {
  const t = job.target;
  const result = await ask(ctx, job);
  const at = ctx.clock.now().toISOString();
  ctx.log.info("unknown first comment checked", { target_id: t.id, platform: t.platform, result: result.kind });
  if (result.kind === "found") {
    await ctx.db.rows(sql`
      update post_targets set first_comment_status = 'published', first_comment_id = ${result.platformPostId},
        first_comment_url = ${job.sandbox ? sandboxPostUrl(ctx, t.id) : result.url}, first_comment_error = null,
        first_comment_error_code = null, first_comment_due_at = null, first_comment_lease_until = null,
        updated_at = ${at}::timestamptz
      where ${ours(t.id, holder)} returning id`);
    return;
  }
  const plugin = ctx.platforms.get(t.platform);
  if (result.kind === "absent" && plugin?.firstComment?.findReadAfterWrite && !t.firstCommentRetried) {
    // Proven not created: one more attempt, through the claim like any due comment.
    await ctx.db.rows(sql`
      update post_targets set first_comment_status = 'pending', first_comment_due_at = ${at}::timestamptz,
        first_comment_error = null, first_comment_error_code = null, first_comment_retried = true,
        first_comment_lease_until = null, first_comment_claimed_by = null, updated_at = ${at}::timestamptz
      where ${ours(t.id, holder)} returning id`);
    return;
  }
  const checked =
    result.kind === "cannot_tell"
      ? `Crier could not tell whether it exists: ${result.reason}.`
      : t.firstCommentRetried
        ? `It was absent once and tried again; after that attempt Crier checked ${result.checked}, so it is not retried again.`
        : `Crier checked ${result.checked}; that does not prove it was not made.`;
  await ctx.db.rows(sql`
    update post_targets set first_comment_error = ${`${t.firstCommentError ?? "The outcome is unknown."} ${checked}`},
      first_comment_due_at = null, first_comment_lease_until = null, updated_at = ${at}::timestamptz
    where ${ours(t.id, holder)} returning id`);
}
