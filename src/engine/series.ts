/**
 * Recurring posts: the periodic job that keeps every active series one occurrence ahead. A series whose
 * occurrences have all left `scheduled` (published, failed, cancelled, or due now) gets its next one: an
 * ordinary scheduled post at the rule's next time, made from the series' template and checked targets
 * (post_series.plan), carrying series_id and series_index. A series whose rule has no further time (COUNT,
 * UNTIL) becomes `ended`.
 *
 * Never two posts for one occurrence: each series is locked (FOR UPDATE SKIP LOCKED) in the transaction
 * that creates its occurrence and counts it, and (series_id, series_index) is unique, so a second copy of
 * the engine running the job at the same moment creates nothing. The job holds its lease in engine_jobs
 * as every periodic job does.
 *
 * The next time is the rule's first after both the previous occurrence and now: occurrences that passed
 * while no engine ran are skipped, never published late in a burst. A failed occurrence (X refusing a
 * duplicate text, say) is not retried here: the series simply goes on with the next one.
 */
import { newRowId } from "../db/ids.ts";
import { and, asc, eq, sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { insertCheckedPosts, type NewPostRow } from "../db/post-insert.ts";
import { posts, postSeries } from "../db/schema.ts";
import { nextOccurrence } from "../domain/recurrence.ts";
import type { PeriodicJob } from "./jobs.ts";

/** How often series are looked at: an occurrence's successor exists within this of it leaving `scheduled`. */
export const SERIES_EVERY_MS = 60_000;
const BATCH = 500;

type SeriesRow = typeof postSeries.$inferSelect;

/** No occurrence of the series is waiting for its time. */
const nothingWaiting = sql`not exists (
  select 1 from posts p join post_targets t on t.post_id = p.id
  where p.series_id = ${postSeries.id} and t.status = 'scheduled')`;

export const seriesJob: PeriodicJob = {
  name: "series",
  everyMs: SERIES_EVERY_MS,
  async run(ctx) {
    await advanceSeries(ctx);
  },
};

/** Makes the next occurrence of every active series that needs one; answers how many were made. */
export async function advanceSeries(ctx: AppContext): Promise<number> {
  const due = await ctx.db.db
    .select({ id: postSeries.id })
    .from(postSeries)
    .where(and(eq(postSeries.status, "active"), nothingWaiting))
    // Series whose last try was refused (last_error) come after the others, so a pile of them never keeps
    // a healthy series waiting.
    .orderBy(sql`${postSeries.lastError} is not null`, asc(postSeries.updatedAt))
    .limit(BATCH);
  let made = 0;
  for (const { id } of due) if (await advanceOne(ctx, id)) made++;
  return made;
}

async function advanceOne(ctx: AppContext, id: string): Promise<boolean> {
  return ctx.db.db.transaction(async (tx) => {
    // Checked again under the lock: an edit, a delete or another copy may have come first.
    const [s] = await tx
      .select()
      .from(postSeries)
      .where(and(eq(postSeries.id, id), eq(postSeries.status, "active")))
      .for("update", { skipLocked: true });
    if (!s) return false;
    // Whether an occurrence is waiting is asked in a statement of its own, begun once the lock is held. The
    // locking statement may have begun before another copy committed its occurrence and let the row go:
    // PostgreSQL then re-checks the row's own columns on its new version, but a subquery still reads the
    // statement's older snapshot, which does not show that occurrence, and a second one was made (three
    // copies at once on PostgreSQL, tests/modules/series).
    const stillNeeded = await tx
      .select({ id: postSeries.id })
      .from(postSeries)
      .where(and(eq(postSeries.id, id), nothingWaiting));
    if (!stillNeeded.length) return false;
    const now = ctx.clock.now();
    const previous = s.lastOccurrenceAt ?? new Date(s.startsAt.getTime() - 1);
    const at = nextOccurrence(
      { rule: s.rule, timeZone: s.timeZone, start: s.startsAt },
      new Date(Math.max(previous.getTime(), now.getTime())),
    );
    if (!at) {
      await tx.update(postSeries).set({ status: "ended", updatedAt: now }).where(eq(postSeries.id, id));
      return false;
    }
    const postId = newRowId();
    const [stored] = s.plan.length ? await insertCheckedPosts(tx, [occurrence(s, postId, at, now)]) : [false];
    if (!stored) {
      // A target account was deleted, moved or disconnected: nothing is made, and the series says why
      // until its targets are fixed (PATCH /v1/series/{id}) or it is deleted.
      const error =
        "The next occurrence could not be made: a target account of this series is deleted, disconnected or no longer in this profile. Change the series' targets with PATCH /v1/series/{id}.";
      if (s.lastError !== error) await tx.update(postSeries).set({ lastError: error }).where(eq(postSeries.id, id));
      return false;
    }
    await tx.update(posts).set({ seriesId: id, seriesIndex: s.occurrencesCreated }).where(eq(posts.id, postId));
    await tx
      .update(postSeries)
      .set({ occurrencesCreated: s.occurrencesCreated + 1, lastOccurrenceAt: at, lastError: null, updatedAt: now })
      .where(eq(postSeries.id, id));
    return true;
  });
}

/** The next occurrence as a new scheduled post: the template's text and media, the checked targets. */
function occurrence(s: SeriesRow, postId: string, at: Date, now: Date): NewPostRow {
  const iso = (d: Date) => d.toISOString();
  return {
    id: postId,
    profile_id: s.profileId,
    content: s.template.content,
    external_id: null,
    media: s.template.media,
    origin: "api",
    publish_at: iso(at),
    draft_id: null,
    workflow_id: null,
    created_at: iso(now),
    updated_at: iso(now),
    status: "scheduled",
    scheduled_time: iso(at),
    due_at: iso(at),
    targets_created_at: iso(now),
    targets_updated_at: iso(now),
    targets: s.plan.map((t) => ({ id: newRowId(), ...t })),
  };
}
