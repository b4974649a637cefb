/**
 * GET /v1/media: the profile's uploads, newest first, for a media library (the dashboard's /media page
 * and compose's picker). Only uploads whose bytes arrived and were read are listed: pending tickets,
 * refused and unreadable files are not media anyone can use.
 */
import { and, eq, like } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { media } from "../../db/schema.ts";
import { pageOrder, pageSize, pageWhere, toPage } from "../../http/paging.ts";
import type { MediaListQuery } from "./model.ts";
import { toMedia } from "./service.ts";

/** Keyset paging over (uploaded_at, id): the shared paging reads these as its (updatedAt, id). */
const cursorCols = { updatedAt: media.uploadedAt, id: media.id };

export async function listMedia(ctx: AppContext, profileId: string, q: MediaListQuery) {
  const rows = await ctx.db.db
    .select()
    .from(media)
    .where(
      and(
        eq(media.profileId, profileId),
        eq(media.status, "uploaded"),
        // A GIF is an image here, as the media type image/gif says.
        q.type ? like(media.contentType, `${q.type}/%`) : undefined,
        pageWhere(cursorCols, q),
      ),
    )
    .orderBy(...pageOrder(cursorCols))
    .limit(pageSize(q) + 1);
  // Every uploaded row has uploaded_at (it is set in the same update as the status).
  const page = toPage(
    rows.map((r) => ({ ...r, updatedAt: r.uploadedAt ?? r.createdAt })),
    q,
  );
  return { data: await Promise.all(page.items.map((r) => toMedia(ctx, r))), meta: page.meta };
}
