import type { AppContext } from "../context.ts";
import { errorFields } from "../log.ts";
import { loadJobs, type Job } from "./dispatch.ts";

/**
 * Loads the jobs of the targets a reconciler leased and settles each, one failure logged without stopping
 * the others (posts here, first comments in first-comment-reconcile.ts); returns how many were settled.
 */
export async function settleLeased(
  ctx: AppContext,
  leased: { id: string }[],
  settleOne: (job: Job) => Promise<void>,
  failure: string,
): Promise<number> {
  if (!leased.length) return 0;
  const jobs = await loadJobs(
    ctx,
    leased.map((r) => r.id),
  );
  for (const job of jobs.values()) {
    try {
      await settleOne(job);
    } catch (e) {
      ctx.log.error(failure, { target_id: job.target.id, ...errorFields(e) });
    }
  }
  return jobs.size;
}
