/**
 * The workflow side of the engine: every tick turns due workflow items into posts, and polls each
 * active workflow whose poll is due (WORKFLOW_POLL_INTERVAL, jittered) under a lease, so one copy
 * polls a workflow at a time. Polls run beside the ticks: a slow source never holds up publishing.
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { rowsOf } from "../db/client.ts";
import { workflows } from "../db/schema.ts";
import { Conflict, NotFound } from "../http/errors.ts";
import { postDueItems } from "./workflow-posts.ts";
import { pollWorkflow, type PollResult } from "./workflow-poll.ts";
import { errorFields } from "../log.ts";

type WorkflowRow = typeof workflows.$inferSelect;

/** A poll may call the source and an AI endpoint per item: its lease is longer than a publish's. */
const MIN_POLL_LEASE_MS = 10 * 60_000;
const POLLS_PER_TICK = 5;

export interface WorkflowRunnerOptions {
  claimedBy: string;
  leaseMs: number;
  random?: () => number;
}

const columns = sql.raw(`id, profile_id as "profileId", name, description, source_account_id as "sourceAccountId",
  target_account_ids as "targetAccountIds", settings, is_active as "isActive", future_content_enabled as "futureContentEnabled",
  last_checked as "lastChecked", last_enabled_at as "lastEnabledAt", poll_due_at as "pollDueAt", lease_until as "leaseUntil",
  claimed_by as "claimedBy", last_error as "lastError", created_at as "createdAt", updated_at as "updatedAt"`);

const DATES = ["lastChecked", "lastEnabledAt", "pollDueAt", "leaseUntil", "createdAt", "updatedAt"] as const;
function toRow(r: Record<string, unknown>): WorkflowRow {
  const out = { ...r } as Record<string, unknown>;
  for (const k of DATES) out[k] = r[k] == null ? null : new Date(r[k] as string);
  return out as WorkflowRow;
}

/** Claims due workflows (or one by id, due or not) whose lease is free. */
async function claim(
  ctx: AppContext,
  o: WorkflowRunnerOptions,
  only?: { id: string; profileId: string },
): Promise<WorkflowRow[]> {
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + Math.max(o.leaseMs, MIN_POLL_LEASE_MS));
  const which = only
    ? sql`id = ${only.id}::uuid and profile_id = ${only.profileId}::uuid`
    : sql`poll_due_at <= ${now.toISOString()}::timestamptz`;
  const rows = rowsOf<Record<string, unknown>>(
    await ctx.db.db.execute(sql`
    update workflows set lease_until = ${until.toISOString()}::timestamptz, claimed_by = ${o.claimedBy}
    where id in (
      select id from workflows
      where is_active and future_content_enabled and last_enabled_at is not null and ${which}
        and (lease_until is null or lease_until < ${now.toISOString()}::timestamptz)
      order by poll_due_at limit ${only ? 1 : POLLS_PER_TICK}
      for update skip locked)
    returning ${columns}`),
  );
  return rows.map(toRow);
}

/** Records the poll and frees the lease (only ours: a copy whose lease ran out must not free another's). */
async function release(ctx: AppContext, o: WorkflowRunnerOptions, wf: WorkflowRow, r: PollResult) {
  const now = ctx.clock.now();
  const interval = ctx.config.workflowPollIntervalSeconds * 1000;
  // Up to a fifth earlier, so copies started together drift apart instead of polling in step.
  const next = new Date(now.getTime() + Math.round(interval * (1 - 0.2 * (o.random ?? Math.random)())));
  await ctx.db.db.execute(sql`
    update workflows set lease_until = null, claimed_by = null, poll_due_at = ${next.toISOString()}::timestamptz,
      last_error = ${r.ok ? null : (r.error ?? "poll failed")},
      last_checked = ${r.ok ? sql`${now.toISOString()}::timestamptz` : sql`last_checked`}
    where id = ${wf.id}::uuid and claimed_by = ${o.claimedBy}`);
}

async function pollClaimed(ctx: AppContext, o: WorkflowRunnerOptions, wf: WorkflowRow): Promise<PollResult> {
  let result: PollResult;
  try {
    result = await pollWorkflow(ctx, wf);
  } catch (e) {
    result = { ok: false, found: 0, taken: [], error: `The poll failed: ${(e as Error)?.message ?? String(e)}` };
  }
  await release(ctx, o, wf, result);
  if (!result.ok) ctx.log.warn("workflow poll failed", { workflow_id: wf.id, error: result.error });
  // Items due now become posts at once rather than at the next tick.
  if (result.taken.length && (await postDueItems(ctx)) > 0) ctx.dispatch?.wake();
  return result;
}

/**
 * POST /v1/workflows/{id}/check: the scheduled poll's code path under the same lease, now. 409 while
 * another poll of it runs; 409 for a workflow that is not active.
 */
export async function checkWorkflow(
  ctx: AppContext,
  profileId: string,
  id: string,
  o: WorkflowRunnerOptions,
): Promise<PollResult> {
  const [wf] = await claim(ctx, o, { id, profileId });
  if (wf) return pollClaimed(ctx, o, wf);
  const [row] = rowsOf<{ active: boolean }>(
    await ctx.db.db.execute(sql`
    select is_active and future_content_enabled as active from workflows where id = ${id}::uuid and profile_id = ${profileId}::uuid`),
  );
  if (!row) throw new NotFound("Workflow");
  if (!row.active)
    throw new Conflict(
      "workflow_inactive",
      "This workflow is not active (or future_content_enabled is false): it does not poll its source.",
      "PATCH is_active: true first.",
    );
  throw new Conflict(
    "workflow_check_in_progress",
    "A poll of this workflow is already running.",
    "Wait a moment, then read GET /v1/workflows/{id}/items.",
  );
}

export interface WorkflowRunner {
  /** Due items become posts; due polls start in the background. */
  chores(): Promise<void>;
  /** Resolves when the polls started so far are done. */
  settled(): Promise<void>;
}

export function workflowRunner(ctx: AppContext, o: WorkflowRunnerOptions): WorkflowRunner {
  const running = new Map<string, Promise<unknown>>();
  return {
    async chores() {
      await postDueItems(ctx);
      for (const wf of await claim(ctx, o)) {
        if (running.has(wf.id)) continue;
        running.set(
          wf.id,
          pollClaimed(ctx, o, wf)
            .catch((e) => ctx.log.error("workflow poll crashed", { workflow_id: wf.id, ...errorFields(e) }))
            .finally(() => running.delete(wf.id)),
        );
      }
    },
    async settled() {
      await Promise.allSettled([...running.values()]);
    },
  };
}
