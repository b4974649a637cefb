/**
 * Queued workflow items whose slot has come become ordinary posts (origin workflow, one target per
 * destination placement), which the engine then publishes with its retries and at-most-once rule. Each
 * item is locked and marked posted in the transaction that creates its post, so it becomes one post once.
 */
import { newRowId } from "../db/ids.ts";
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { rowsOf } from "../db/client.ts";
import { insertPostStatement } from "../db/post-insert.ts";
import { optionsForPlugin } from "../platform/host/options.ts";

interface DueItem {
  id: string;
  workflow_id: string;
  profile_id: string;
  account_id: string;
  platform: string;
  caption: string | null;
  media: unknown[];
  platform_options: Record<string, unknown> | null;
}

const BATCH = 50;

/** Turns due items into posts; returns how many posts were created. */
export async function postDueItems(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now().toISOString();
  return ctx.db.db.transaction(async (tx) => {
    const due = rowsOf<DueItem>(
      await tx.execute(sql`
      select i.id, i.workflow_id, i.profile_id, i.account_id, a.platform, i.caption, i.media, i.platform_options
      from workflow_items i join accounts a on a.id = i.account_id
      where i.status = 'queued' and i.slot_at <= ${now}::timestamptz
      order by i.slot_at limit ${BATCH}
      for update of i skip locked`),
    );
    for (const item of due) {
      const postId = newRowId();
      const plugin = ctx.platforms.get(item.platform);
      const variants = plugin?.variants?.(optionsForPlugin(plugin, item.platform_options) as never) ?? [null];
      await insertPostStatement(tx, {
        id: postId,
        profileId: item.profile_id,
        content: item.caption ?? "",
        externalId: null,
        media: JSON.stringify(item.media),
        origin: "workflow",
        publishAt: null,
        draftId: null,
        workflowId: item.workflow_id,
        createdAt: now,
        updatedAt: now,
        status: "pending",
        scheduledTime: now,
        dueAt: now,
        targetsCreatedAt: now,
        targetsUpdatedAt: now,
        targets: JSON.stringify(
          variants.map((variant, position) => ({
            id: newRowId(),
            account_id: item.account_id,
            platform: item.platform,
            target_variant: variant,
            position,
            content_override: null,
            platform_options: item.platform_options,
          })),
        ),
      });
      await tx.execute(
        sql`update workflow_items set status = 'posted', post_id = ${postId}::uuid, updated_at = ${now}::timestamptz where id = ${item.id}::uuid`,
      );
    }
    return due.length;
  });
}
