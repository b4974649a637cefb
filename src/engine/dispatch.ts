/**
 * One claimed target: build the job, call the plugin outside any transaction, record what came of it.
 * Publishing at most once is the rule; every path that cannot prove nothing was created ends
 * failed/outcome_unknown rather than trying again.
 */
import { eq, sql } from "drizzle-orm";
import { prepared } from "../db/prepared.ts";
import type { AppContext } from "../context.ts";
import { accounts, posts, postTargets, profiles } from "../db/schema.ts";
import { providerFor, sandboxPostUrl } from "../platform/host/provider.ts";
import type { OwnStorageOpener } from "../platform/host/media-guard.ts";
import {
  RefreshError,
  type MediaItem,
  type Outcome,
  type Plugin,
  type PluginContext,
  type PublishJob,
} from "../platform/sdk.ts";
import { optionsForPlugin } from "../platform/host/options.ts";
import type { ClaimedJob, ClaimedTarget } from "./claim.ts";
import { rowFromJson } from "../db/row-json.ts";
import type { Recorder } from "./recorder.ts";
import { finderFor } from "../platform/find-published.ts";
import { uuidArray } from "../db/uuid-array.ts";
import { prepareJobMedia, prepareOptionsFor } from "../media/prepare.ts";

export interface DispatchSettings {
  claimedBy: string;
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  submitPollMs: number;
  submitDeadlineMs: number;
  /** How long after an unknown outcome the reconciler asks the platform (its listing catches up meanwhile). */
  reconcileSettleMs: number;
  random: () => number;
  ownStorage?: OwnStorageOpener;
  /** See EngineOptions.allowMediaAddress (tests only). */
  allowMediaAddress?: (ip: string) => boolean;
  recorder: Recorder;
  /**
   * Called once a target's published result is committed and it has a first comment (now pending): the
   * engine posts the comment at once (src/engine/first-comment.ts) rather than at the next tick.
   */
  afterPublished?: (targetId: string) => void;
}

/** Exponential backoff with full jitter over the upper half: attempt 1 → 0.5..1 × base, doubling. */
export function backoffMs(
  attempt: number,
  s: Pick<DispatchSettings, "backoffBaseMs" | "backoffMaxMs" | "random">,
): number {
  const ceiling = Math.min(s.backoffMaxMs, s.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * s.random());
}

const threadPredecessors = sql`crier_thread_predecessors(${postTargets.postId}, ${postTargets.accountId}, ${postTargets.position}, ${postTargets.targetVariant})`;

/** Everything the plugin needs about claimed targets, read in one query after the claim committed. */
const selectJobs = prepared((d) =>
  d
    .select({
      target: postTargets,
      content: posts.content,
      media: posts.media,
      account: accounts,
      sandbox: profiles.sandbox,
      // A thread item replies to the item before it and names the first (crier_thread_predecessors,
      // migrations/functions/crier_thread_predecessors.sql, is the thread rule the claim and housekeeping use too).
      replyTo: sql<
        string | null
      >`(select e.platform_post_id from ${threadPredecessors} e order by e.position desc limit 1)`,
      root: sql<
        string | null
      >`(select e.platform_post_id from ${threadPredecessors} e order by e.position asc limit 1)`,
    })
    .from(postTargets)
    .innerJoin(posts, eq(posts.id, postTargets.postId))
    .innerJoin(accounts, eq(accounts.id, postTargets.accountId))
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(sql`${postTargets.id} = any(${sql.placeholder("ids")}::text::uuid[])`)
    .prepare("crier_claimed_jobs"),
);

export type Job = Awaited<ReturnType<ReturnType<typeof selectJobs>["execute"]>>[number];

export async function loadJobs(ctx: AppContext, ids: string[]): Promise<Map<string, Job>> {
  if (!ids.length) return new Map();
  // The ids come from the database (the claim), so the array literal is well formed.
  return new Map((await selectJobs(ctx.db).execute({ ids: uuidArray(ids) })).map((r) => [r.target.id, r]));
}

/** The job the claim read with the target (src/engine/claim.ts), in the shape loadJobs gives. */
export function jobFromClaim(c: ClaimedJob): Job {
  return {
    target: rowFromJson(postTargets, c.target),
    content: c.content,
    media: c.media as Job["media"],
    account: rowFromJson(accounts, c.account),
    sandbox: c.sandbox,
    replyTo: c.replyTo,
    root: c.root,
  };
}

async function loadJobOne(ctx: AppContext, id: string): Promise<Job | undefined> {
  return (await loadJobs(ctx, [id])).get(id);
}

type Result =
  | { kind: "published"; id: string; url: string | null; notice?: { code: string; message: string } }
  | { kind: "submitted"; handle: string }
  | { kind: "retry"; at: Date; reason: string }
  | { kind: "failed"; code: string; reason: string; reconcile?: { at: Date; since: Date; until: Date } };

/** Hands the result to the batching recorder; resolves once it is committed. */
function record(ctx: AppContext, s: DispatchSettings, targetId: string, r: Result): Promise<void> {
  const now = ctx.clock.now();
  switch (r.kind) {
    case "published":
      return s.recorder.record(targetId, {
        status: "published",
        platformPostId: r.id,
        platformPostUrl: r.url,
        publishedAt: now,
        error: r.notice?.message ?? null,
        errorCode: r.notice?.code ?? null,
        at: now,
      });
    case "submitted":
      return s.recorder.record(targetId, {
        status: "submitted",
        submittedHandle: r.handle,
        submitDeadline: new Date(now.getTime() + s.submitDeadlineMs),
        dueAt: new Date(now.getTime() + s.submitPollMs),
        at: now,
      });
    case "retry":
      return s.recorder.record(targetId, {
        status: "scheduled",
        dueAt: r.at,
        error: `Will try again at ${r.at.toISOString()}: ${r.reason}`,
        errorCode: "retry_scheduled",
        at: now,
      });
    case "failed":
      return s.recorder.record(targetId, {
        status: "failed",
        error: r.reason,
        errorCode: r.code,
        reconcileAt: r.reconcile?.at,
        reconcileSince: r.reconcile?.since,
        reconcileUntil: r.reconcile?.until,
        at: now,
      });
  }
}

/** Calls a plugin function; an exception means we cannot know what reached the platform. */
async function call<O extends Outcome>(fn: () => Promise<O>): Promise<O> {
  try {
    return await fn();
  } catch (e) {
    return { kind: "unknown", reason: `The plugin failed unexpectedly: ${(e as Error)?.message ?? String(e)}` } as O;
  }
}

/**
 * auth_expired: one refresh through the plugin, then one more try. The token was refused, so nothing
 * was created and trying again is safe. Still refused → the account needs the user.
 */
export async function withRefresh<O extends Outcome = Outcome>(
  ctx: AppContext,
  s: DispatchSettings,
  plugin: Plugin,
  pctx: PluginContext,
  accountId: string,
  run: () => Promise<O>,
): Promise<O | "reconnect"> {
  const first = await call(run);
  if (first.kind !== "auth_expired") return first;
  if (first.scope === "server") {
    // Refreshing the account's own token cannot help when the server's credential was refused.
    await s.recorder.platformNeedsReconnect(accountId, ctx.clock.now());
    return "reconnect";
  }
  if (plugin.refresh) {
    const refreshed = await plugin.refresh(pctx).then(
      () => true,
      (e: unknown) => e,
    );
    if (refreshed === true) {
      const second = await call(run);
      if (second.kind !== "auth_expired") return second;
    } else if (refreshed instanceof RefreshError && refreshed.retryable) {
      // The platform could not be reached to refresh: the token was not refused, so the user has
      // nothing to fix yet. Nothing was created (the first call was refused), so try again later.
      pctx.log.warn("token refresh could not reach the platform", { error: refreshed.message });
      return { kind: "retryable", reason: refreshed.message } as O;
    } else {
      pctx.log.warn("token refresh refused", { error: (refreshed as Error)?.message });
    }
  }
  await s.recorder.accountNeedsReconnect(accountId, ctx.clock.now());
  return "reconnect";
}

export const RECONNECT = {
  kind: "failed" as const,
  code: "auth_required",
  reason:
    "The platform no longer accepts this account's authorization. Reconnect the account (POST /v1/accounts/connect/{platform}), then retry the target.",
};

export async function publishTarget(
  ctx: AppContext,
  s: DispatchSettings,
  target: ClaimedTarget,
  /** Called once the platform has answered (or the call failed), before the result is written. */
  onCallEnded?: () => void,
): Promise<Outcome["kind"] | "failed"> {
  const log = ctx.log.child({ component: "engine", target_id: target.id, platform: target.platform });
  const job = target.job ? jobFromClaim(target.job) : await loadJobOne(ctx, target.id);
  if (!job) return "failed"; // deleted meanwhile (cannot happen while processing: delete refuses)
  if (job.account.status !== "active" || !job.account.credentials) {
    await record(
      ctx,
      s,
      target.id,
      job.account.status === "auth_required"
        ? RECONNECT
        : {
            kind: "failed",
            code: "account_disconnected",
            reason:
              "The account was disconnected before this target was published. Connect it again, then retry the target.",
          },
    );
    return "failed";
  }
  let provider: ReturnType<typeof providerFor>;
  try {
    provider = providerFor(ctx, job.account, {
      sandbox: job.sandbox,
      ownStorage: s.ownStorage,
      allowMediaAddress: s.allowMediaAddress,
    });
  } catch (e) {
    // Nothing was sent: the failure is ours (no plugin, unreadable credentials), and it is reported as such.
    await record(ctx, s, target.id, {
      kind: "failed",
      code: "internal_error",
      reason: `Crier could not prepare the publish: ${(e as Error)?.message}`,
    });
    return "failed";
  }
  const { plugin, context } = provider;
  if (!plugin.publish) {
    await record(ctx, s, target.id, {
      kind: "failed",
      code: "platform_not_supported",
      reason: `Publishing to ${plugin.displayName} is not available in this version of Crier.`,
    });
    return "failed";
  }
  const t = job.target;
  // Crier's own files get their probed numbers, and a converted copy where the platform needs one.
  const options = optionsForPlugin(plugin, t.platformOptions);
  const media = await prepareJobMedia(
    ctx,
    job.account.profileId,
    plugin,
    (t.fittedMedia ?? job.media) as MediaItem[],
    prepareOptionsFor(plugin, t.platformOptions),
  );
  if (media.kind === "failed") {
    await record(ctx, s, target.id, { kind: "failed", code: media.code, reason: media.reason });
    return "failed";
  }
  if (media.kind === "retry") {
    await record(
      ctx,
      s,
      target.id,
      target.attempts >= s.maxAttempts
        ? {
            kind: "failed",
            code: "retries_exhausted",
            reason: `Gave up after ${target.attempts} attempts: ${media.reason}`,
          }
        : {
            kind: "retry",
            at: new Date(ctx.clock.now().getTime() + backoffMs(target.attempts, s)),
            reason: media.reason,
          },
    );
    return "retryable";
  }
  const publishJob: PublishJob = {
    // Lenient handling stored what this platform takes when it differs from the post (src/platform/host/fit.ts).
    content: t.fittedContent ?? t.contentOverride ?? job.content,
    media: media.media,
    options,
    variant: t.targetVariant,
    idempotencyToken: t.id,
    ...(job.replyTo && { replyTo: { platformPostId: job.replyTo, rootPlatformPostId: job.root ?? job.replyTo } }),
  };
  const startedAt = ctx.clock.now();
  const outcome = await withRefresh(ctx, s, plugin, context, job.account.id, () =>
    plugin.publish!(context, publishJob),
  );
  onCallEnded?.();
  const now = ctx.clock.now();
  if (outcome === "reconnect") {
    await record(ctx, s, target.id, RECONNECT);
    return "auth_expired";
  }
  log.debug("publish outcome", { outcome: outcome.kind, attempt: target.attempts });
  switch (outcome.kind) {
    case "published":
      await record(ctx, s, target.id, {
        kind: "published",
        id: outcome.platformPostId,
        url: job.sandbox ? sandboxPostUrl(ctx, target.id) : outcome.url,
        notice: outcome.notice,
      });
      if (t.firstCommentStatus === "waiting") s.afterPublished?.(target.id);
      break;
    case "submitted":
      await record(ctx, s, target.id, { kind: "submitted", handle: outcome.handle });
      break;
    case "retryable":
      if (target.attempts >= s.maxAttempts) {
        await record(ctx, s, target.id, {
          kind: "failed",
          code: "retries_exhausted",
          reason: `Gave up after ${target.attempts} attempts: ${outcome.reason}`,
        });
      } else {
        const wait = Math.max(outcome.retryAfterMs ?? 0, backoffMs(target.attempts, s));
        await record(ctx, s, target.id, { kind: "retry", at: new Date(now.getTime() + wait), reason: outcome.reason });
      }
      break;
    case "permanent":
      await record(ctx, s, target.id, {
        kind: "failed",
        code: outcome.code ?? "platform_rejected",
        reason: outcome.reason,
      });
      break;
    case "unknown":
    case "auth_expired":
      await record(ctx, s, target.id, {
        kind: "failed",
        code: "outcome_unknown",
        reason: `${outcome.reason} The post may or may not be on the platform; check there before retrying.`,
        // Where the platform can be asked, the reconciler settles it after the listing had time to catch up.
        ...(finderFor(plugin) && {
          reconcile: { at: new Date(now.getTime() + s.reconcileSettleMs), since: startedAt, until: now },
        }),
      });
      break;
  }
  return outcome.kind;
}

/**
 * Submitted targets whose next poll is due, leased like a publish: a plugin's checkStatus may itself
 * create the post once the platform finished processing (X attaches the video then), so two copies must
 * never poll one target at once, and a poll cut short by a crash ends outcome_unknown like a publish.
 */
export async function claimPolls(
  ctx: AppContext,
  s: DispatchSettings & { leaseMs: number },
  limit: number,
): Promise<string[]> {
  const now = ctx.clock.now();
  const rows = await ctx.db.rows<{ id: string }>(sql`
    update post_targets set due_at = ${new Date(now.getTime() + s.submitPollMs).toISOString()}::timestamptz,
      lease_until = ${new Date(now.getTime() + s.leaseMs).toISOString()}::timestamptz, claimed_by = ${s.claimedBy}
    where id in (select id from post_targets
                 where status = 'submitted' and due_at <= ${now.toISOString()}::timestamptz and lease_until is null
                 order by due_at limit ${limit} for update skip locked)
    returning id`);
  return rows.map((r) => r.id);
}

/** Checks on a submitted target we leased (claimPolls) and records what the platform says now. */
export async function pollTarget(ctx: AppContext, s: DispatchSettings, targetId: string): Promise<void> {
  const job = await loadJobOne(ctx, targetId);
  if (!job || job.target.status !== "submitted") return;
  const t = job.target;
  const now = ctx.clock.now();
  const fail = (code: string, reason: string) =>
    s.recorder.recordCheck(targetId, { status: "failed", errorCode: code, error: reason, at: now });
  if (job.account.status !== "active" || !job.account.credentials) {
    return fail(
      "auth_required",
      "The account lost its authorization while the platform was still processing the post; check the platform, then reconnect.",
    );
  }
  const { plugin, context } = providerFor(ctx, job.account, {
    sandbox: job.sandbox,
    ownStorage: s.ownStorage,
    allowMediaAddress: s.allowMediaAddress,
  });
  const outcome = plugin.checkStatus
    ? await withRefresh(ctx, s, plugin, context, job.account.id, () =>
        plugin.checkStatus!(context, t.submittedHandle ?? ""),
      )
    : { kind: "unknown" as const, reason: "The plugin cannot check on submitted work." };
  if (outcome === "reconnect") return fail("auth_required", RECONNECT.reason);
  let handle = t.submittedHandle;
  switch (outcome.kind) {
    case "published":
      await s.recorder.recordCheck(targetId, {
        status: "published",
        platformPostId: outcome.platformPostId,
        platformPostUrl: job.sandbox ? sandboxPostUrl(ctx, targetId) : outcome.url,
        publishedAt: now,
        error: outcome.notice?.message ?? null,
        errorCode: outcome.notice?.code ?? null,
        at: now,
      });
      if (t.firstCommentStatus === "waiting") s.afterPublished?.(targetId);
      return;
    case "permanent":
      return fail(outcome.code ?? "platform_rejected", outcome.reason);
    case "unknown":
    case "auth_expired":
      // The check may have created the post (a timeout after its creating call): never polled again.
      return fail(
        "outcome_unknown",
        `${outcome.reason} The post may or may not be on the platform; check there before retrying.`,
      );
    case "submitted":
      handle = outcome.handle;
      break;
    case "retryable":
      break;
  }
  if (t.submitDeadline && t.submitDeadline.getTime() <= now.getTime()) {
    return fail(
      "outcome_unknown",
      `The platform was still processing the post at the deadline (${t.submitDeadline.toISOString()}); it may appear later.`,
    );
  }
  // Still processing, or a passing error where nothing was created: the next poll stays where claimPolls
  // put it (due_at), and the lease is released.
  return s.recorder.recordCheck(targetId, {
    status: "submitted",
    submittedHandle: handle,
    submitDeadline: t.submitDeadline,
    dueAt: t.dueAt,
    at: now,
  });
}
