import { and, eq, lt } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { media } from "../../db/schema.ts";
import { ApiError } from "../../http/errors.ts";
import { decodeMediaId } from "../../domain/media-ids.ts";
import { settleStoredUpload } from "./service.ts";

export interface CleanupResult {
  /** Expired tickets that never received bytes, now deleted. */
  removedTickets: number;
  /**
   * Leftover upload bytes: partial files of uploads that died (fs), or objects in the upload area that no
   * open ticket waits for, such as a second PUT to a spent presigned URL (s3).
   */
  removedPartials: number;
  /** Expired S3 tickets whose object had arrived unnoticed: settled instead of deleted. */
  settled: number;
}

/**
 * Removes upload tickets that expired without bytes, and the partial files of uploads that died. Safe to
 * run from every copy at once: each delete is conditional on the ticket still being pending.
 */
export async function cleanupExpiredUploads(ctx: AppContext, batch = 500): Promise<CleanupResult> {
  const now = ctx.clock.now();
  const result: CleanupResult = { removedTickets: 0, removedPartials: 0, settled: 0 };
  const expired = and(eq(media.status, "pending"), lt(media.expiresAt, now));

  const intake = ctx.storage.intake;
  if (intake.kind === "server") {
    // With fs a pending ticket never has a final file: bytes are renamed into place as it turns uploaded.
    const gone = await ctx.db.db.delete(media).where(expired).returning({ id: media.id });
    result.removedTickets = gone.length;
    // A partial still being written has a fresh mtime; one older than a ticket's lifetime is dead.
    result.removedPartials = await intake.removeStalePartials(
      new Date(now.getTime() - ctx.config.uploadTicketTtlSeconds * 1000),
    );
    return result;
  }

  // With S3 the client PUTs straight to the store, so an expired pending ticket may hold an object.
  const rows = await ctx.db.db.select().from(media).where(expired).limit(batch);
  for (const row of rows) {
    try {
      const settled = await settleStoredUpload(ctx, intake, row);
      if (settled.status !== "pending") {
        result.settled++;
        continue;
      }
    } catch (e) {
      // Over the limit: the object was deleted, so the ticket is as empty as one never used.
      if (!(e instanceof ApiError)) throw e;
    }
    const gone = await ctx.db.db
      .delete(media)
      .where(and(eq(media.id, row.id), eq(media.status, "pending")))
      .returning({ id: media.id });
    result.removedTickets += gone.length;
  }

  for (const key of await intake.list(batch)) {
    const id = decodeMediaId(key.slice(0, key.indexOf(".")));
    const [row] = id ? await ctx.db.db.select({ status: media.status }).from(media).where(eq(media.id, id)) : [];
    if (row?.status === "pending") continue;
    await intake.remove(key);
    result.removedPartials++;
  }
  return result;
}
