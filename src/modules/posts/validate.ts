import { and, eq } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { drafts } from "../../db/schema.ts";
import { mediaProblems, textMeasure, type Problem } from "../../platform/host/content-check.ts";
import type { PostCreate, PostValidation } from "./model.ts";
import { draftNotFound, publishAtProblem } from "./service.ts";
import { ownMedia, planTargets } from "./plan.ts";
import type { TargetAccount } from "../accounts/target-accounts.ts";
import { withOwnNumbers, type OwnMedia } from "../../media/own.ts";
import type { MediaItem } from "../../platform/sdk.ts";
import { repeatProblem } from "../series/repeat.ts";
import { nextSlots, queueAndPublishAt, queueEmpty } from "../queues/take.ts";

/**
 * POST /v1/posts/validate: the create body checked by the same functions as POST /v1/posts, every problem
 * collected instead of the first thrown. Nothing is written. Text that is too long or media a platform cannot
 * take is a problem, never silently cut or dropped; with lenient handling asked for, each target shows what
 * it would get after fitting and the adjustments that made it fit.
 */
export async function validatePost(
  ctx: AppContext,
  profileId: string,
  body: PostCreate,
  opts: { lenient?: boolean; shared?: SharedReads } = {},
): Promise<PostValidation> {
  const { items, problems } = mediaProblems(body.media);
  problems.push(...(await postProblems(ctx, profileId, body)));
  const { media, mediaFacts } = opts.shared
    ? sharedMedia(items, opts.shared.media)
    : await ownMedia(ctx, ctx.db.db, profileId, items);
  const draft = { targets: body.targets, content: body.content ?? "", media, mediaFacts };
  const plans = await planTargets(ctx, ctx.db.db, profileId, draft, {
    lenient: opts.lenient,
    accounts: opts.shared?.accounts,
  });
  // Queued: the slot each planned account would take now (nothing is taken), or queue_empty on its targets.
  const planned = plans.filter((p) => p.rows.length).map((p) => p.accountId);
  const queue = body.queue ? await nextSlots(ctx.db.db, planned, ctx.clock.now()) : null;
  plans.forEach((p, i) => {
    if (queue?.empty.includes(p.accountId)) p.problems.push(queueEmpty(p.accountId, i));
  });
  const targets = plans.map((p) => ({
    account_id: p.accountId,
    platform: p.platform,
    ok: p.problems.length === 0,
    problems: p.problems,
    text: p.plugin ? textMeasure({ plugin: p.plugin, content: p.content, media: p.media }) : null,
    media: p.media,
    adjustments: p.adjustments ?? [],
    queue_slot: queue?.slots.get(p.accountId)?.at.toISOString() ?? null,
  }));
  return { ok: problems.length === 0 && targets.every((t) => t.ok), problems, targets };
}

/**
 * What checking many posts at once reads once for all of them (a bulk import's dry run) instead of once
 * per post: the target accounts of the profile they name, and which of their media URLs are Crier's own.
 */
export interface SharedReads {
  accounts: TargetAccount[];
  /** Every media URL (trimmed) of the posts → the own media it serves, or null. */
  media: Map<string, OwnMedia | null>;
}

function sharedMedia(items: MediaItem[], known: Map<string, OwnMedia | null>) {
  const { items: media, facts } = withOwnNumbers(
    items,
    items.map((m) => known.get(m.url) ?? null),
  );
  return { media, mediaFacts: facts };
}

async function postProblems(ctx: AppContext, profileId: string, body: PostCreate): Promise<Problem[]> {
  const late = body.queue ? null : publishAtProblem(ctx.clock.now(), body.publish_at);
  const out = late ? [late] : [];
  const series = repeatProblem(body);
  if (series && "problem" in series) out.push(series.problem);
  if (body.queue && body.publish_at != null) out.push(queueAndPublishAt);
  if (body.draft_id) {
    const [draft] = await ctx.db.db
      .select({ id: drafts.id })
      .from(drafts)
      .where(and(eq(drafts.id, body.draft_id), eq(drafts.profileId, profileId)));
    if (!draft) out.push(draftNotFound(body.draft_id));
  }
  return out;
}
