import { newRowId } from "../../db/ids.ts";
import { and, asc, eq, exists, inArray, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable, Tx } from "../../db/client.ts";
import { insertCheckedPostSoon, insertCheckedPosts, type NewPostRow } from "../../db/post-insert.ts";
import { accounts, drafts, posts, postTargets } from "../../db/schema.ts";
import { Conflict, NotFound } from "../../http/errors.ts";
import { idempotent } from "../../http/idempotency.ts";
import { pageOrder, pageWhere, toPage } from "../../http/paging.ts";
import { postStatus, type TargetStatus } from "../../domain/status.ts";
import type { MediaItem } from "../../platform/sdk.ts";
import type { Post, PostCreate, PostListQuery, PostPatch, PostTarget, PostTargetInput } from "./model.ts";
import { postStatusSql } from "./status-sql.ts";
import { normalizeMedia, problemError, type Problem } from "../../platform/host/content-check.ts";
import { buildTargets, ownMedia, refit, type NewTarget } from "./plan.ts";
import { repeatProblem, startSeries } from "../series/repeat.ts";
import { freeCancelledSlots, freeSlots, isQueued, queueAndPublishAt, stampTargets, takeSlots } from "../queues/take.ts";
import type { Occurrence } from "../queues/wall-clock.ts";

type PostRow = typeof posts.$inferSelect;
type TargetRow = typeof postTargets.$inferSelect;
type TargetWithName = TargetRow & { username: string | null };

/** publish_at this far in the past is still "now" (clocks of callers drift); further back is refused. */
export const PUBLISH_AT_TOLERANCE_MS = 60_000;

export function toTarget(row: TargetWithName): PostTarget {
  return {
    target_post_id: row.id,
    account_id: row.accountId,
    platform: row.platform,
    target_variant: (row.targetVariant as PostTarget["target_variant"]) ?? null,
    username: row.username,
    status: row.status,
    error: row.error,
    error_code: row.errorCode,
    platform_post_id: row.platformPostId,
    platform_post_url: row.platformPostUrl,
    scheduled_time: row.scheduledTime ? row.scheduledTime.toISOString() : null,
    queue_slot: row.queueSlot ? row.queueSlot.toISOString() : null,
    published_at: row.publishedAt ? row.publishedAt.toISOString() : null,
    attempts: row.attempts,
    content_override: row.contentOverride,
    platform_options: row.platformOptions ?? null,
    adjustments: row.adjustments ?? [],
    first_comment: firstCommentOf(row),
  };
}

/** The target's first comment as the API shows it (crier_target_json builds the same for webhooks). */
function firstCommentOf(row: TargetRow): PostTarget["first_comment"] {
  if (row.firstComment == null || row.firstCommentStatus == null) return null;
  return {
    text: row.firstComment,
    status: row.firstCommentStatus,
    platform_comment_id: row.firstCommentId,
    platform_comment_url: row.firstCommentUrl,
    error: row.firstCommentError,
    error_code: row.firstCommentErrorCode,
  };
}

export function toPost(row: PostRow, targets: TargetWithName[]): Post {
  return {
    id: row.id,
    content: row.content,
    external_id: row.externalId,
    media: row.media as Post["media"],
    origin: row.origin,
    publish_at: row.publishAt ? row.publishAt.toISOString() : null,
    status: postStatus(targets.map((t) => t.status as TargetStatus)),
    draft_id: row.draftId,
    series_id: row.seriesId ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    targets: targets.map(toTarget),
  };
}

async function targetsOf(db: Queryable, postIds: string[]): Promise<Map<string, TargetWithName[]>> {
  const out = new Map<string, TargetWithName[]>(postIds.map((id) => [id, []]));
  if (!postIds.length) return out;
  const rows = await db
    .select({ t: postTargets, username: accounts.username })
    .from(postTargets)
    .leftJoin(accounts, eq(accounts.id, postTargets.accountId))
    .where(inArray(postTargets.postId, postIds))
    .orderBy(asc(postTargets.position), asc(postTargets.createdAt), asc(postTargets.id));
  for (const r of rows) out.get(r.t.postId)!.push({ ...r.t, username: r.username });
  return out;
}

async function postRow(db: Queryable, profileId: string, id: string, lock = false): Promise<PostRow> {
  const q = db
    .select()
    .from(posts)
    .where(and(eq(posts.id, id), eq(posts.profileId, profileId)));
  const [row] = lock ? await q.for("update") : await q;
  if (!row) throw new NotFound("Post");
  return row;
}

export async function getPost(
  ctx: AppContext,
  profileId: string,
  id: string,
  db: Queryable = ctx.db.db,
): Promise<Post> {
  const row = await postRow(db, profileId, id);
  return toPost(row, (await targetsOf(db, [id])).get(id)!);
}

/** publish_at more than the tolerance in the past; null when it is fine. */
export function publishAtProblem(now: Date, publishAt: string | null | undefined): Problem | null {
  if (publishAt == null || new Date(publishAt).getTime() >= now.getTime() - PUBLISH_AT_TOLERANCE_MS) return null;
  return {
    code: "publish_at_in_past",
    message: `publish_at ${publishAt} is in the past (server time ${now.toISOString()}).`,
    hint: "Leave publish_at out (or null) to publish now, or give a future time.",
    field: "publish_at",
  };
}

export const draftNotFound = (id: string): Problem => ({
  code: "draft_not_found",
  message: `draft_id ${id}: no draft with this id in this profile.`,
  hint: "Leave draft_id out, or use an id from GET /v1/drafts.",
  field: "draft_id",
});

/** When the targets become due: now (pending) or later (scheduled). */
function timing(ctx: AppContext, publishAt: string | null | undefined) {
  const now = ctx.clock.now();
  if (publishAt == null) return { now, publishAt: null, due: now, status: "pending" as const };
  const at = new Date(publishAt);
  const late = publishAtProblem(now, publishAt);
  if (late) throw problemError(late);
  return at.getTime() > now.getTime()
    ? { now, publishAt: at, due: at, status: "scheduled" as const }
    : { now, publishAt: at, due: now, status: "pending" as const };
}

function targetValues(postId: string, profileId: string, list: NewTarget[], when: ReturnType<typeof timing>) {
  return list.map((t) => ({
    postId,
    profileId,
    ...t,
    firstCommentStatus: t.firstComment != null ? ("waiting" as const) : null,
    targetVariant: t.targetVariant,
    status: when.status,
    scheduledTime: when.due,
    dueAt: when.due,
    createdAt: when.now,
    updatedAt: when.now,
  }));
}

/**
 * The post and its targets in one statement: they commit together, and a create without an
 * Idempotency-Key or draft needs no transaction of its own (one round trip in all, with a cached key and
 * cached accounts), and shares its statement with posts other requests create at the same moment. The
 * statement checks the targets' accounts again: undefined when one changed since it was read or
 * remembered, and nothing was stored. The answer is built from what was written, not read back.
 */
async function insertPost(
  ctx: AppContext,
  q: Queryable,
  post: PostRow,
  targets: TargetWithName[],
): Promise<Post | undefined> {
  const ts = (d: Date | null) => d?.toISOString() ?? null;
  const first = targets[0];
  const row: NewPostRow = {
    id: post.id,
    profile_id: post.profileId,
    content: post.content,
    external_id: post.externalId,
    media: post.media,
    origin: post.origin,
    publish_at: ts(post.publishAt),
    draft_id: post.draftId,
    workflow_id: post.workflowId,
    created_at: ts(post.createdAt)!,
    updated_at: ts(post.updatedAt)!,
    status: first.status,
    scheduled_time: ts(first.scheduledTime),
    due_at: ts(first.dueAt),
    targets_created_at: ts(first.createdAt)!,
    targets_updated_at: ts(first.updatedAt)!,
    targets: targets.map((t) => ({
      id: t.id,
      account_id: t.accountId!,
      platform: t.platform,
      target_variant: t.targetVariant,
      position: t.position,
      content_override: t.contentOverride,
      platform_options: t.platformOptions,
      fitted_content: t.fittedContent,
      fitted_media: t.fittedMedia,
      adjustments: t.adjustments,
      first_comment: t.firstComment,
    })),
  };
  // Outside a transaction (q is the database itself) the insert may share a statement; inside one, it
  // runs in that transaction.
  const created = q === ctx.db.db ? await insertCheckedPostSoon(ctx.db, row) : (await insertCheckedPosts(q, [row]))[0];
  return created ? toPost(post, targets) : undefined;
}

function newRows(
  id: string,
  profileId: string,
  body: PostCreate,
  content: string,
  media: MediaItem[],
  list: NewTarget[],
  when: ReturnType<typeof timing>,
) {
  const post: PostRow = {
    id,
    profileId,
    content,
    externalId: body.external_id ?? null,
    media,
    origin: "api",
    publishAt: when.publishAt,
    draftId: body.draft_id ?? null,
    workflowId: null,
    seriesId: null,
    seriesIndex: null,
    createdAt: when.now,
    updatedAt: when.now,
  };
  const targets: TargetWithName[] = targetValues(id, profileId, list, when).map((t) => ({
    ...t,
    id: newRowId(),
    error: null,
    errorCode: null,
    platformPostId: null,
    platformPostUrl: null,
    attempts: 0,
    leaseUntil: null,
    claimedBy: null,
    submittedHandle: null,
    submitDeadline: null,
    publishedAt: null,
    reconcileAt: null,
    reconcileSince: null,
    reconcileUntil: null,
    reconcileRetried: false,
    queueSlot: null,
    firstCommentId: null,
    firstCommentUrl: null,
    firstCommentError: null,
    firstCommentErrorCode: null,
    firstCommentAttempts: 0,
    firstCommentDueAt: null,
    firstCommentLeaseUntil: null,
    firstCommentClaimedBy: null,
    firstCommentSince: null,
    firstCommentUntil: null,
    firstCommentRetried: false,
  }));
  return { post, targets };
}

/** The Idempotency-Key namespace of creates (a bulk import's rows share it: `<key>:<row>`). */
export const CREATE_OPERATION = "posts.create";

/** A queued post: each target at its account's slot, the post at the earliest (src/modules/queues/take.ts). */
function queued(when: ReturnType<typeof timing>, slots: Map<string, Occurrence>) {
  const due = new Date(Math.min(...[...slots.values()].map((o) => o.at.getTime())));
  return { now: when.now, publishAt: due, due, status: "scheduled" as const };
}

function stampSlots(targets: TargetWithName[], slots: Map<string, Occurrence>) {
  for (const t of targets) {
    const at = slots.get(t.accountId!)!.at;
    Object.assign(t, { scheduledTime: at, dueAt: at, queueSlot: at });
  }
}

/** Tries of a create whose insert found an account changed since it was read (a race that repeats is a 409). */
const CREATE_TRIES = 3;

export async function createPost(
  ctx: AppContext,
  profileId: string,
  body: PostCreate,
  key?: string,
  opts: { lenient?: boolean } = {},
) {
  const lenient = opts.lenient ?? false;
  // A recurring post (repeat) is the first occurrence of its series, at the rule's first time.
  const series = repeatProblem(body);
  if (series && "problem" in series) throw problemError(series.problem);
  if (body.queue && body.publish_at != null) throw problemError(queueAndPublishAt);
  const { media, mediaFacts } = await ownMedia(ctx, ctx.db.db, profileId, normalizeMedia(body.media));
  const content = body.content ?? "";
  const draft = { targets: body.targets, content, media, mediaFacts };
  const create = async (q: Queryable, id: string) => {
    let when = timing(ctx, body.queue ? null : series ? series.first.toISOString() : body.publish_at);
    let list = await buildTargets(ctx, q, profileId, draft, { cached: true, lenient });
    // Queued: each account's next free slot, taken in this transaction (the targets get it once inserted).
    const slots = body.queue
      ? await takeSlots(
          q,
          id,
          profileId,
          body.targets.map((t) => t.account_id),
          when.now,
        )
      : null;
    if (slots) when = queued(when, slots);
    if (body.draft_id) {
      const [draft] = await q
        .update(drafts)
        .set({ status: "scheduled", updatedAt: when.now })
        .where(and(eq(drafts.id, body.draft_id), eq(drafts.profileId, profileId)))
        .returning({ id: drafts.id });
      if (!draft) throw problemError(draftNotFound(body.draft_id));
    }
    for (let attempt = 1; ; attempt++) {
      const { post, targets } = newRows(id, profileId, body, content, media, list, when);
      if (slots) stampSlots(targets, slots);
      const stored = await insertPost(ctx, q, post, targets);
      if (stored && slots) await stampTargets(q, id, slots);
      if (stored && series && body.repeat) {
        const template = { content, media, targets: body.targets };
        const start = { startsAt: new Date(body.publish_at!), first: series.first, now: when.now };
        const args = { profileId, postId: id, repeat: body.repeat, template, lenient, ...start };
        return { ...stored, series_id: await startSeries(q, args) };
      }
      if (stored) return stored;
      if (attempt === CREATE_TRIES)
        throw new Conflict(
          "target_accounts_changed",
          "The target accounts kept changing while the post was being created.",
          "Send the request again.",
        );
      // An account changed since it was remembered or read: plan again from a fresh read, which answers
      // the same 400 as always for an account now foreign, deleted or disconnected.
      list = await buildTargets(ctx, q, profileId, draft, { lenient });
    }
  };
  const result =
    !key && !body.draft_id && !series && !body.queue
      ? { value: await create(ctx.db.db, newRowId()), replayed: false }
      : await idempotent(ctx.db.db, { profileId, operation: CREATE_OPERATION, key, body }, create, (id) =>
          getPost(ctx, profileId, id),
        );
  if (!result.replayed && result.value.status === "queued") ctx.dispatch?.wake();
  return result;
}

export async function listPosts(ctx: AppContext, profileId: string, q: PostListQuery) {
  const rows = await ctx.db.db
    .select()
    .from(posts)
    .where(
      and(
        eq(posts.profileId, profileId),
        q.origin ? eq(posts.origin, q.origin) : undefined,
        q.series_id ? eq(posts.seriesId, q.series_id) : undefined,
        q.account_id
          ? exists(
              ctx.db.db
                .select({ one: sql`1` })
                .from(postTargets)
                .where(and(eq(postTargets.postId, posts.id), eq(postTargets.accountId, q.account_id))),
            )
          : undefined,
        q.status ? sql`${postStatusSql(posts.id)} = ${q.status}` : undefined,
        pageWhere(posts, q),
      ),
    )
    .orderBy(...pageOrder(posts))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  const targets = await targetsOf(
    ctx.db.db,
    page.items.map((r) => r.id),
  );
  return { data: page.items.map((r) => toPost(r, targets.get(r.id)!)), meta: page.meta };
}

/** The post's targets, locked against the engine and other edits for the rest of the transaction. */
async function lockTargets(tx: Tx, postId: string): Promise<TargetRow[]> {
  return tx
    .select()
    .from(postTargets)
    .where(eq(postTargets.postId, postId))
    .orderBy(asc(postTargets.position))
    .for("update");
}

/** updated_at moves forward on every edit, even two in one millisecond, so list paging stays exact. */
const bump = (ctx: AppContext, row: PostRow) =>
  new Date(Math.max(ctx.clock.now().getTime(), row.updatedAt.getTime() + 1));

/**
 * Changes a scheduled post. A post created with lenient handling stays lenient (its targets are fitted
 * again to the new content), as does one whose edit asks for it; `applied` says whether it was.
 */
export async function updatePost(
  ctx: AppContext,
  profileId: string,
  id: string,
  patch: PostPatch,
  opts: { lenient?: boolean } = {},
): Promise<Post & { lenientApplied?: boolean }> {
  const media = patch.media !== undefined ? normalizeMedia(patch.media) : undefined;
  let lenient = opts.lenient ?? false;
  const post = await ctx.db.db.transaction(async (tx) => {
    const row = await postRow(tx, profileId, id, true);
    const current = await lockTargets(tx, id);
    const status = postStatus(current.map((t) => t.status));
    if (status !== "scheduled") {
      throw new Conflict(
        "post_not_editable",
        `The post is ${status}; only a scheduled post can be changed.`,
        "Cancel it and create a new post, or retry failed targets.",
      );
    }
    // A queued post keeps its slots through an edit of its text or media; a new publish_at or new targets
    // take it off the queue.
    const inQueue = await isQueued(tx, id);
    const keepSlots = inQueue && patch.publish_at === undefined && !patch.targets;
    if (inQueue && !keepSlots) await freeSlots(tx, id);
    const content = patch.content ?? row.content;
    const own = await ownMedia(ctx, tx, profileId, media ?? (row.media as MediaItem[]));
    const nextMedia = own.media;
    const when = timing(
      ctx,
      patch.publish_at !== undefined ? patch.publish_at : (row.publishAt?.toISOString() ?? null),
    );
    // Targets are checked again as on create: new content or media may break a platform's rules.
    const inputs: PostTargetInput[] =
      patch.targets ??
      dedupeVariants(current.filter((t) => t.status !== "cancelled")).map((t) => ({
        account_id: t.accountId ?? "",
        content_override: t.contentOverride,
        platform_options: t.platformOptions,
        first_comment: t.firstComment,
      }));
    lenient ||= current.some((t) => t.status !== "cancelled" && t.adjustments != null);
    const draft = { targets: inputs, content, media: nextMedia, mediaFacts: own.mediaFacts };
    const list = await buildTargets(ctx, tx, profileId, draft, { lenient });
    const now = bump(ctx, row);
    const [updated] = await tx
      .update(posts)
      .set({
        content,
        media: nextMedia,
        ...(patch.external_id !== undefined && { externalId: patch.external_id }),
        publishAt: when.publishAt,
        updatedAt: now,
      })
      .where(eq(posts.id, id))
      .returning();
    if (patch.targets) {
      await tx.delete(postTargets).where(eq(postTargets.postId, id));
      await tx.insert(postTargets).values(targetValues(id, profileId, list, { ...when, now }));
    } else {
      // Same targets: they keep their ids (target_post_id), only their timing moves (queued ones keep their slots).
      await tx
        .update(postTargets)
        .set(
          keepSlots
            ? { updatedAt: now }
            : { status: when.status, scheduledTime: when.due, dueAt: when.due, updatedAt: now },
        )
        .where(and(eq(postTargets.postId, id), eq(postTargets.status, "scheduled")));
      if (lenient) await refit(tx, current, list);
    }
    return toPost(updated, (await targetsOf(tx, [id])).get(id)!);
  });
  if (post.status === "queued") ctx.dispatch?.wake();
  return Object.assign(post, { lenientApplied: lenient });
}

/** Snapchat-style variants are one input target expanded; rebuild the input once per account run. */
function dedupeVariants(rows: TargetRow[]): TargetRow[] {
  return rows.filter(
    (t, i) => !t.targetVariant || rows.findIndex((o) => o.accountId === t.accountId && o.targetVariant) === i,
  );
}

export async function publishNow(ctx: AppContext, profileId: string, id: string): Promise<Post> {
  const makeDue = () =>
    ctx.db.db.transaction(async (tx) => {
      const row = await postRow(tx, profileId, id, true);
      const current = await lockTargets(tx, id);
      const status = postStatus(current.map((t) => t.status));
      if (status !== "scheduled") {
        throw new Conflict(
          "post_not_scheduled",
          `The post is ${status}; only a scheduled post can be published early.`,
          status === "queued"
            ? "It is already due and will be published within seconds."
            : "Read the post to see what happened to each target.",
        );
      }
      const now = ctx.clock.now();
      await tx
        .update(postTargets)
        .set({ status: "pending", dueAt: now, scheduledTime: now, updatedAt: now })
        .where(and(eq(postTargets.postId, id), eq(postTargets.status, "scheduled")));
      await freeSlots(tx, id);
      await tx
        .update(posts)
        .set({ updatedAt: bump(ctx, row) })
        .where(eq(posts.id, id));
    });
  // With the engine running in this copy the targets are made due and claimed with its claim loops held
  // (a tick cannot take them in between), and the aggregate is read between the claim and the first
  // publish, so it comes back processing as the spec shows (a fast platform could otherwise finish first).
  // An API-only copy answers queued and another copy claims them.
  let claimed: Post | undefined;
  const readClaimed = async () => {
    claimed = await getPost(ctx, profileId, id);
  };
  if (ctx.dispatch) await ctx.dispatch.claimPost(id, readClaimed, makeDue);
  else await makeDue();
  return claimed ?? getPost(ctx, profileId, id);
}

export async function cancelPost(ctx: AppContext, profileId: string, id: string): Promise<Post> {
  return ctx.db.db.transaction(async (tx) => {
    const row = await postRow(tx, profileId, id, true);
    const current = await lockTargets(tx, id);
    const waiting = current.filter((t) => t.status === "pending" || t.status === "scheduled");
    if (!waiting.length) {
      throw new Conflict(
        "post_not_cancellable",
        `No target of this post is waiting (the post is ${postStatus(current.map((t) => t.status))}).`,
        "Only pending and scheduled targets can be cancelled; published content stays on the platform.",
      );
    }
    const now = ctx.clock.now();
    await tx
      .update(postTargets)
      .set({ status: "cancelled", dueAt: null, updatedAt: now })
      .where(
        inArray(
          postTargets.id,
          waiting.map((t) => t.id),
        ),
      );
    await freeCancelledSlots(tx, id);
    await tx
      .update(posts)
      .set({ updatedAt: bump(ctx, row) })
      .where(eq(posts.id, id));
    return getPost(ctx, profileId, id, tx);
  });
}

const retryReset = (now: Date) => ({
  status: "pending" as const,
  dueAt: now,
  scheduledTime: now,
  attempts: 0,
  error: null,
  errorCode: null,
  leaseUntil: null,
  claimedBy: null,
  submittedHandle: null,
  submitDeadline: null,
  // A retry asked for by the user ends any reconciliation and allows the reconciler's one retry again.
  reconcileAt: null,
  reconcileRetried: false,
  updatedAt: now,
});

export async function retryPost(ctx: AppContext, profileId: string, id: string): Promise<Post> {
  const post = await ctx.db.db.transaction(async (tx) => {
    const row = await postRow(tx, profileId, id, true);
    const current = await lockTargets(tx, id);
    // Skipped thread items go again with the failed item they depended on.
    const again = current.filter(
      (t) => t.status === "failed" || (t.status === "skipped" && current.some((f) => f.status === "failed")),
    );
    if (!again.some((t) => t.status === "failed")) {
      throw new Conflict(
        "nothing_to_retry",
        "No target of this post has failed.",
        "Retry applies to failed targets only.",
      );
    }
    const now = ctx.clock.now();
    await tx
      .update(postTargets)
      .set(retryReset(now))
      .where(
        inArray(
          postTargets.id,
          again.map((t) => t.id),
        ),
      );
    await tx
      .update(posts)
      .set({ updatedAt: bump(ctx, row) })
      .where(eq(posts.id, id));
    return getPost(ctx, profileId, id, tx);
  });
  ctx.dispatch?.wake();
  return post;
}

export async function deletePost(ctx: AppContext, profileId: string, id: string) {
  await ctx.db.db.transaction(async (tx) => {
    await postRow(tx, profileId, id, true);
    const current = await lockTargets(tx, id);
    const busy = current.filter((t) => t.status === "processing" || t.status === "submitted");
    if (busy.length) {
      throw new Conflict(
        "post_processing",
        `${busy.length} target(s) of this post are being published right now.`,
        "Wait until they finish (GET /v1/posts/{id}), then delete.",
      );
    }
    await tx.delete(posts).where(eq(posts.id, id));
  });
  return {
    deleted: true,
    id,
    provider_revocation_required: null,
    provider_revocation_url: null,
    message: "The post record is deleted; content already published stays on the platforms.",
  };
}

// ---------------------------------------------------------------------------------------------------
// One target

async function targetRow(tx: Queryable, profileId: string, postId: string, targetId: string, lock: boolean) {
  await postRow(tx, profileId, postId, lock);
  const q = tx
    .select()
    .from(postTargets)
    .where(and(eq(postTargets.id, targetId), eq(postTargets.postId, postId)));
  const [row] = lock ? await q.for("update") : await q;
  if (!row) throw new NotFound("Target");
  return row;
}

export async function getTarget(
  ctx: AppContext,
  profileId: string,
  postId: string,
  targetId: string,
): Promise<PostTarget> {
  const row = await targetRow(ctx.db.db, profileId, postId, targetId, false);
  const [account] = row.accountId
    ? await ctx.db.db.select({ username: accounts.username }).from(accounts).where(eq(accounts.id, row.accountId))
    : [];
  return toTarget({ ...row, username: account?.username ?? null });
}

export async function cancelTarget(
  ctx: AppContext,
  profileId: string,
  postId: string,
  targetId: string,
): Promise<PostTarget> {
  await ctx.db.db.transaction(async (tx) => {
    const row = await targetRow(tx, profileId, postId, targetId, true);
    if (row.status !== "pending" && row.status !== "scheduled") {
      throw new Conflict(
        "target_not_cancellable",
        `The target is ${row.status}; only pending and scheduled targets can be cancelled.`,
        "Published content stays on the platform; delete it there if needed.",
      );
    }
    await tx
      .update(postTargets)
      .set({ status: "cancelled", dueAt: null, updatedAt: ctx.clock.now() })
      .where(eq(postTargets.id, targetId));
    await freeCancelledSlots(tx, postId);
  });
  return getTarget(ctx, profileId, postId, targetId);
}

export async function retryTarget(
  ctx: AppContext,
  profileId: string,
  postId: string,
  targetId: string,
): Promise<PostTarget> {
  await ctx.db.db.transaction(async (tx) => {
    const row = await targetRow(tx, profileId, postId, targetId, true);
    if (row.status !== "failed") {
      throw new Conflict(
        "target_not_retryable",
        `The target is ${row.status}; only failed targets can be retried.`,
        row.status === "published" ? "It is already published." : "Wait for the target to finish.",
      );
    }
    await tx.update(postTargets).set(retryReset(ctx.clock.now())).where(eq(postTargets.id, targetId));
  });
  ctx.dispatch?.wake();
  return getTarget(ctx, profileId, postId, targetId);
}
