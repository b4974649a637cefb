/**
 * Recurring posts: reading, changing and ending a series. The engine's series job (src/engine/series.ts)
 * makes the occurrences; an edit reaches the one occurrence waiting for its time through the posts
 * service's own update, so it is checked as any edit of a scheduled post is, and published occurrences
 * are never touched.
 */
import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/client.ts";
import { posts, postSeries, type SeriesPlanTarget } from "../../db/schema.ts";
import { nextOccurrence, occurrencesAfter } from "../../domain/recurrence.ts";
import { ApiError, Conflict, NotFound } from "../../http/errors.ts";
import { pageOrder, pageWhere, toPage } from "../../http/paging.ts";
import { normalizeMedia, problemError } from "../../platform/host/content-check.ts";
import type { MediaItem } from "../../platform/sdk.ts";
import { cancelPost, updatePost } from "../posts/service.ts";
import { buildTargets, ownMedia, type NewTarget } from "../posts/plan.ts";
import type { Post, PostPatch } from "../posts/model.ts";
import type { Series, SeriesListQuery, SeriesPatch } from "./model.ts";
import { planOf, repeatStart } from "./repeat.ts";

type SeriesRow = typeof postSeries.$inferSelect;

/** How many coming times GET shows. */
const NEXT_SHOWN = 5;

function toSeries(ctx: AppContext, row: SeriesRow, postIds: string[]): Series {
  const rec = { rule: row.rule, timeZone: row.timeZone, start: row.startsAt };
  return {
    id: row.id,
    rule: row.rule,
    time_zone: row.timeZone,
    starts_at: row.startsAt.toISOString(),
    status: row.status,
    template: {
      content: row.template.content,
      media: row.template.media as Series["template"]["media"],
      targets: row.template.targets.map((t) => ({
        account_id: t.account_id,
        content_override: t.content_override ?? null,
        platform_options: t.platform_options ?? null,
      })),
    },
    occurrences_created: row.occurrencesCreated,
    next_occurrences:
      row.status === "active" ? occurrencesAfter(rec, ctx.clock.now(), NEXT_SHOWN).map((d) => d.toISOString()) : [],
    post_ids: postIds,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

async function postIdsOf(db: Queryable, seriesIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(seriesIds.map((id) => [id, []]));
  if (!seriesIds.length) return out;
  const rows = await db
    .select({ id: posts.id, seriesId: posts.seriesId })
    .from(posts)
    .where(inArray(posts.seriesId, seriesIds))
    .orderBy(asc(posts.seriesIndex));
  for (const r of rows) out.get(r.seriesId!)!.push(r.id);
  return out;
}

async function seriesRow(db: Queryable, profileId: string, id: string): Promise<SeriesRow> {
  const [row] = await db
    .select()
    .from(postSeries)
    .where(and(eq(postSeries.id, id), eq(postSeries.profileId, profileId)));
  if (!row) throw new NotFound("Series");
  return row;
}

export async function getSeries(ctx: AppContext, profileId: string, id: string): Promise<Series> {
  const row = await seriesRow(ctx.db.db, profileId, id);
  return toSeries(ctx, row, (await postIdsOf(ctx.db.db, [id])).get(id)!);
}

export async function listSeries(ctx: AppContext, profileId: string, q: SeriesListQuery) {
  const rows = await ctx.db.db
    .select()
    .from(postSeries)
    .where(
      and(
        eq(postSeries.profileId, profileId),
        q.status ? eq(postSeries.status, q.status) : undefined,
        pageWhere(postSeries, q),
      ),
    )
    .orderBy(...pageOrder(postSeries))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  const ids = await postIdsOf(
    ctx.db.db,
    page.items.map((r) => r.id),
  );
  return { data: page.items.map((r) => toSeries(ctx, r, ids.get(r.id)!)), meta: page.meta };
}

/** The series' occurrences with a target waiting (pending or scheduled), last first. */
async function waitingOccurrences(db: Queryable, seriesId: string, statuses: string[]): Promise<string[]> {
  const rows = await db
    .select({ id: posts.id })
    .from(posts)
    .where(
      and(
        eq(posts.seriesId, seriesId),
        sql`exists (select 1 from post_targets t where t.post_id = ${posts.id} and t.status in (${sql.join(
          statuses.map((s) => sql`${s}`),
          sql`, `,
        )}))`,
      ),
    )
    .orderBy(sql`${posts.seriesIndex} desc`);
  return rows.map((r) => r.id);
}

const notActive = (row: SeriesRow) =>
  new Conflict(
    "series_not_active",
    `The series is ${row.status}; only an active series can be changed.`,
    "Create a new recurring post with POST /v1/posts and repeat.",
  );

const toPlan = (list: NewTarget[]): SeriesPlanTarget[] =>
  list.map((t) => ({
    account_id: t.accountId,
    platform: t.platform,
    target_variant: t.targetVariant,
    position: t.position,
    content_override: t.contentOverride,
    platform_options: t.platformOptions,
    fitted_content: t.fittedContent,
    fitted_media: t.fittedMedia,
    adjustments: t.adjustments,
  }));

/** Tries of an edit that found a new occurrence made under it (the job ran in between). */
const EDIT_TRIES = 3;

/**
 * Changes the template and the timing. The occurrence waiting for its time gets the same change through
 * PATCH /v1/posts/{id}'s own update (every target checked again; moved to the new rule's next time when
 * the timing changed); without one, the template is checked the same way. A rule with no time left
 * cancels the waiting occurrence and ends the series. Published occurrences stay as they are.
 */
export async function updateSeries(ctx: AppContext, profileId: string, id: string, patch: SeriesPatch) {
  for (let attempt = 1; ; attempt++) {
    const row = await seriesRow(ctx.db.db, profileId, id);
    if (!Object.keys(patch).length) return getSeries(ctx, profileId, id);
    if (row.status !== "active") throw notActive(row);
    const rule = patch.rule?.trim() ?? row.rule;
    const timeZone = patch.time_zone ?? row.timeZone;
    const start = patch.starts_at !== undefined ? new Date(patch.starts_at) : row.startsAt;
    const retimed = patch.rule !== undefined || patch.time_zone !== undefined || patch.starts_at !== undefined;
    const checked = repeatStart({ rule, time_zone: timeZone }, start);
    if ("problem" in checked) throw problemError(checked.problem);
    // After a timing change the waiting occurrence moves to the new rule's first time still ahead.
    const nextAt = retimed ? nextOccurrence({ rule, timeZone, start }, ctx.clock.now()) : undefined;
    const template = {
      content: patch.content ?? row.template.content,
      media: row.template.media as MediaItem[],
      targets: patch.targets ?? row.template.targets,
    };
    const [waiting] = await waitingOccurrences(ctx.db.db, id, ["scheduled"]);
    let plan = row.plan;
    if (waiting && nextAt !== null) {
      const postPatch: PostPatch = {
        ...(patch.content !== undefined && { content: patch.content }),
        ...(patch.media !== undefined && { media: patch.media }),
        ...(patch.targets !== undefined && { targets: patch.targets }),
        ...(nextAt && { publish_at: nextAt.toISOString() }),
      };
      let updated: Post;
      try {
        updated = await updatePost(ctx, profileId, waiting, postPatch, { lenient: row.lenient });
      } catch (e) {
        // It became due (or was published early) between the read and the edit: the next occurrence is
        // made from the template, which this edit changes on the next try.
        if (e instanceof ApiError && e.errorCode === "post_not_editable" && attempt < EDIT_TRIES) continue;
        throw e;
      }
      template.media = updated.media as MediaItem[];
      plan = await planOf(ctx.db.db, waiting);
    } else if (patch.content !== undefined || patch.media !== undefined || patch.targets !== undefined) {
      const own = await ownMedia(
        ctx,
        ctx.db.db,
        profileId,
        patch.media !== undefined ? normalizeMedia(patch.media) : template.media,
      );
      const draft = {
        targets: template.targets,
        content: template.content,
        media: own.media,
        mediaFacts: own.mediaFacts,
      };
      plan = toPlan(await buildTargets(ctx, ctx.db.db, profileId, draft, { lenient: row.lenient }));
      template.media = own.media;
    }
    const stored = await ctx.db.db.transaction(async (tx) => {
      const [now] = await tx.select().from(postSeries).where(eq(postSeries.id, id)).for("update");
      // The job made an occurrence from the old template meanwhile: apply the edit to it as well.
      if (now.occurrencesCreated !== row.occurrencesCreated || now.status !== "active") return false;
      await tx
        .update(postSeries)
        .set({
          rule,
          timeZone,
          startsAt: start,
          template,
          plan,
          ...(nextAt === null && { status: "ended" as const }),
          // The waiting occurrence moved: the job's next one comes after its new time.
          ...(nextAt && waiting && { lastOccurrenceAt: nextAt }),
          updatedAt: new Date(Math.max(ctx.clock.now().getTime(), row.updatedAt.getTime() + 1)),
        })
        .where(eq(postSeries.id, id));
      return true;
    });
    if (!stored) {
      if (attempt < EDIT_TRIES) continue;
      throw new Conflict(
        "series_changed",
        "The series kept changing while it was being edited.",
        "Send the edit again.",
      );
    }
    if (nextAt === null && waiting) await cancelWaiting(ctx, profileId, [waiting]);
    return getSeries(ctx, profileId, id);
  }
}

async function cancelWaiting(ctx: AppContext, profileId: string, ids: string[]) {
  for (const postId of ids) {
    try {
      await cancelPost(ctx, profileId, postId);
    } catch (e) {
      // Claimed by the engine in the meantime: it goes out as any claimed post does.
      if (!(e instanceof ApiError && e.errorCode === "post_not_cancellable")) throw e;
    }
  }
}

/**
 * Cancels the series: no occurrence is made any more, and those waiting (scheduled, or due and not yet
 * claimed) are cancelled; their records stay, as do published occurrences. Deleting a cancelled series
 * again answers it as it is.
 */
export async function deleteSeries(ctx: AppContext, profileId: string, id: string): Promise<Series> {
  await ctx.db.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(postSeries)
      .where(and(eq(postSeries.id, id), eq(postSeries.profileId, profileId)))
      .for("update");
    if (!row) throw new NotFound("Series");
    if (row.status === "cancelled") return;
    const now = new Date(Math.max(ctx.clock.now().getTime(), row.updatedAt.getTime() + 1));
    await tx.update(postSeries).set({ status: "cancelled", updatedAt: now }).where(eq(postSeries.id, id));
  });
  // After the series is cancelled under its lock the job makes no further occurrence, so this list is final.
  await cancelWaiting(ctx, profileId, await waitingOccurrences(ctx.db.db, id, ["scheduled", "pending"]));
  return getSeries(ctx, profileId, id);
}
