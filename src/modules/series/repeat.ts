/**
 * The part of a recurring post that POST /v1/posts runs: checking `repeat` (also for POST
 * /v1/posts/validate) and storing the series beside its first occurrence, in the create's transaction.
 * Kept apart from service.ts, which uses the posts service: the posts module imports only this file.
 */
import { randomUUID } from "node:crypto";
import { asc, eq } from "drizzle-orm";
import type { Queryable } from "../../db/client.ts";
import { posts, postSeries, postTargets, type SeriesPlanTarget, type SeriesTemplate } from "../../db/schema.ts";
import { checkRecurrence, RepeatProblem } from "../../domain/recurrence.ts";
import type { Problem } from "../../platform/host/content-check.ts";
import type { PostCreate } from "../posts/model.ts";

const asProblem = (e: RepeatProblem, field: string): Problem => ({
  code: e.code,
  message: e.message,
  hint: e.hint,
  field,
});

/** The rule and zone checked with a start: the first occurrence, or the problem (a 400 on create). */
export function repeatStart(
  repeat: { rule: string; time_zone: string },
  start: Date,
): { first: Date } | { problem: Problem } {
  try {
    return { first: checkRecurrence({ rule: repeat.rule, timeZone: repeat.time_zone, start }) };
  } catch (e) {
    if (e instanceof RepeatProblem)
      return { problem: asProblem(e, e.code === "invalid_time_zone" ? "repeat.time_zone" : "repeat.rule") };
    throw e;
  }
}

/**
 * What is wrong with a create body's `repeat`, or its first occurrence when nothing is. The first
 * occurrence is at or after publish_at, which the create itself keeps from lying in the past.
 */
export function repeatProblem(body: PostCreate & { queue?: unknown }): { first: Date } | { problem: Problem } | null {
  const repeat = body.repeat;
  if (!repeat) return null;
  if (body.queue === true)
    return {
      problem: {
        code: "invalid_repeat",
        message: "repeat and queue: true together: a series has its own times.",
        hint: "Send repeat with publish_at, or queue without repeat.",
        field: "repeat",
      },
    };
  if (body.publish_at == null)
    return {
      problem: {
        code: "publish_at_required",
        message:
          "repeat needs publish_at: the first occurrence's earliest time, whose time of day every occurrence keeps.",
        hint: 'Send publish_at, e.g. "2026-12-07T09:00:00+01:00", with repeat.',
        field: "publish_at",
      },
    };
  return repeatStart(repeat, new Date(body.publish_at));
}

/** The targets of a stored post, as the engine copies them into the next occurrence. */
export async function planOf(q: Queryable, postId: string): Promise<SeriesPlanTarget[]> {
  const rows = await q
    .select()
    .from(postTargets)
    .where(eq(postTargets.postId, postId))
    .orderBy(asc(postTargets.position), asc(postTargets.createdAt), asc(postTargets.id));
  return rows
    .filter((t) => t.status !== "cancelled" && t.accountId)
    .map((t) => ({
      account_id: t.accountId!,
      platform: t.platform,
      target_variant: t.targetVariant,
      position: t.position,
      content_override: t.contentOverride,
      platform_options: t.platformOptions ?? null,
      fitted_content: t.fittedContent,
      fitted_media: t.fittedMedia ?? null,
      adjustments: t.adjustments ?? null,
    }));
}

/**
 * Stores the series of a post just created as its first occurrence (index 0), in the create's
 * transaction: the series and the post commit together. Answers the series id.
 */
export async function startSeries(
  q: Queryable,
  s: {
    profileId: string;
    postId: string;
    repeat: { rule: string; time_zone: string };
    startsAt: Date;
    first: Date;
    template: SeriesTemplate;
    lenient: boolean;
    now: Date;
  },
): Promise<string> {
  const id = randomUUID();
  await q.insert(postSeries).values({
    id,
    profileId: s.profileId,
    rule: s.repeat.rule.trim(),
    timeZone: s.repeat.time_zone,
    startsAt: s.startsAt,
    template: s.template,
    plan: await planOf(q, s.postId),
    lenient: s.lenient,
    status: "active",
    occurrencesCreated: 1,
    lastOccurrenceAt: s.first,
    createdAt: s.now,
    updatedAt: s.now,
  });
  await q.update(posts).set({ seriesId: id, seriesIndex: 0 }).where(eq(posts.id, s.postId));
  return id;
}
