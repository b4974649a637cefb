import { and, eq, ne } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import type { Queryable } from "../../db/client.ts";
import { drafts } from "../../db/schema.ts";
import { Conflict, NotFound } from "../../http/errors.ts";
import { idempotent } from "../../http/idempotency.ts";
import { pageOrder, pageWhere, toPage, type PageRequest } from "../../http/paging.ts";
import { normalizeMedia } from "../../platform/host/content-check.ts";
import type { Draft, DraftCreate, DraftPatch } from "./model.ts";

type Row = typeof drafts.$inferSelect;

export function toDraft(row: Row): Draft {
  return {
    id: row.id,
    content: row.content,
    candidate_angle: row.candidateAngle,
    media: row.media as Draft["media"],
    selected_account_ids: row.selectedAccountIds,
    suggested_platforms: row.suggestedPlatforms,
    source_type: row.sourceType,
    status: row.status,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function getDraftRow(db: Queryable, profileId: string, id: string): Promise<Row> {
  const [row] = await db
    .select()
    .from(drafts)
    .where(and(eq(drafts.id, id), eq(drafts.profileId, profileId)));
  if (!row) throw new NotFound("Draft");
  return row;
}

/**
 * A draft becomes a post: its media URLs are refused now by the same rule posts use (absolute http or
 * https), not when the draft is scheduled.
 */
function checkDraftMedia(media: DraftCreate["media"]): void {
  if (!media) return;
  normalizeMedia(media.map((m) => ({ url: m.url, type: m.type, thumbnail_url: m.thumbnail_url ?? undefined })));
}

export async function createDraft(ctx: AppContext, profileId: string, body: DraftCreate, key?: string) {
  checkDraftMedia(body.media);
  return idempotent(
    ctx.db.db,
    { profileId, operation: "drafts.create", key, body },
    async (tx, id) => {
      const now = ctx.clock.now();
      const [row] = await tx
        .insert(drafts)
        .values({
          id,
          profileId,
          content: body.content ?? "",
          candidateAngle: body.candidate_angle ?? "",
          media: body.media ?? [],
          selectedAccountIds: body.selected_account_ids ?? [],
          suggestedPlatforms: body.suggested_platforms ?? [],
          sourceType: "api",
          createdAt: now,
          updatedAt: now,
        })
        .returning();
      return toDraft(row);
    },
    async (id) => toDraft(await getDraftRow(ctx.db.db, profileId, id)),
  );
}

export async function listDrafts(
  ctx: AppContext,
  profileId: string,
  q: PageRequest & { status?: "inbox" | "ready" | "archived" },
) {
  const rows = await ctx.db.db
    .select()
    .from(drafts)
    .where(
      and(
        eq(drafts.profileId, profileId),
        q.status ? eq(drafts.status, q.status) : ne(drafts.status, "scheduled"),
        pageWhere(drafts, q),
      ),
    )
    .orderBy(...pageOrder(drafts))
    .limit((q.limit ?? 20) + 1);
  const page = toPage(rows, q);
  return { data: page.items.map(toDraft), meta: page.meta };
}

export async function updateDraft(ctx: AppContext, profileId: string, id: string, patch: DraftPatch) {
  checkDraftMedia(patch.media);
  const expected = new Date(patch.expected_updated_at);
  return ctx.db.db.transaction(async (tx) => {
    const [current] = await tx
      .select()
      .from(drafts)
      .where(and(eq(drafts.id, id), eq(drafts.profileId, profileId)))
      .for("update");
    if (!current) throw new NotFound("Draft");
    if (current.updatedAt.getTime() !== expected.getTime()) {
      throw new Conflict(
        "draft_conflict",
        `The draft changed since ${patch.expected_updated_at}; it was updated at ${current.updatedAt.toISOString()}.`,
        "Read the draft again, reapply your change and send its current updated_at as expected_updated_at.",
      );
    }
    if (current.status === "scheduled") {
      throw new Conflict(
        "draft_not_editable",
        "This draft is scheduled as a post and can no longer be edited.",
        "Edit the post instead (PATCH /v1/posts/{id}).",
      );
    }
    // updated_at must move forward even when two edits land in the same millisecond, or CAS would miss one.
    const now = new Date(Math.max(ctx.clock.now().getTime(), current.updatedAt.getTime() + 1));
    const [row] = await tx
      .update(drafts)
      .set({
        ...(patch.content !== undefined && { content: patch.content }),
        ...(patch.candidate_angle !== undefined && { candidateAngle: patch.candidate_angle }),
        ...(patch.media !== undefined && { media: patch.media }),
        ...(patch.selected_account_ids !== undefined && { selectedAccountIds: patch.selected_account_ids }),
        ...(patch.suggested_platforms !== undefined && { suggestedPlatforms: patch.suggested_platforms }),
        ...(patch.status !== undefined && { status: patch.status }),
        updatedAt: now,
      })
      .where(eq(drafts.id, id))
      .returning();
    return toDraft(row);
  });
}

export async function deleteDraft(ctx: AppContext, profileId: string, id: string) {
  const [row] = await ctx.db.db
    .delete(drafts)
    .where(and(eq(drafts.id, id), eq(drafts.profileId, profileId)))
    .returning({ id: drafts.id });
  if (!row) throw new NotFound("Draft");
  return {
    deleted: true,
    id: row.id,
    provider_revocation_required: null,
    provider_revocation_url: null,
    message: null,
  };
}
