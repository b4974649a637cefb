/**
 * Converted copies made ahead of publishing (a periodic job): the media of targets falling due within
 * AHEAD_MS are prepared for their platform now, off the request path and before the publish slot, so
 * the publish finds its rendition ready. Publishing still prepares whatever is missing (src/media/prepare.ts):
 * this job only moves the work earlier. Renditions are made once however many copies or targets ask.
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { errorFields } from "../log.ts";
import { prepareJobMedia, prepareOptionsFor } from "../media/prepare.ts";
import type { MediaItem } from "../platform/sdk.ts";
import type { PeriodicJob } from "./jobs.ts";

/** How far ahead of their due time targets' media are prepared. */
export const AHEAD_MS = 15 * 60_000;
/** Targets looked at per run; the next run takes the rest. */
const BATCH = 100;

export async function prepareUpcomingMedia(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const rows = await ctx.db.rows<{ platform: string; profile_id: string; media: string; options: string | null }>(
    sql`SELECT DISTINCT t.platform, p.profile_id, coalesce(t.fitted_media, p.media)::text AS media,
          t.platform_options::text AS options
        FROM post_targets t JOIN posts p ON p.id = t.post_id
        WHERE t.status = 'scheduled' AND t.due_at >= ${now.toISOString()}::timestamptz
          AND t.due_at < ${new Date(now.getTime() + AHEAD_MS).toISOString()}::timestamptz
          AND jsonb_array_length(coalesce(t.fitted_media, p.media)) > 0
        LIMIT ${BATCH}`,
  );
  let prepared = 0;
  for (const row of rows) {
    const plugin = ctx.platforms.get(row.platform);
    if (!plugin) continue;
    try {
      // The same options as the publish will use, so what is made ahead is what it looks for (a TikTok
      // target with its own cover timestamp gets no cover frame put in front of its video).
      const options = prepareOptionsFor(plugin, row.options ? JSON.parse(row.options) : null);
      const r = await prepareJobMedia(ctx, row.profile_id, plugin, JSON.parse(row.media) as MediaItem[], options);
      if (r.kind === "ready") prepared++;
    } catch (e) {
      // The publish prepares it again and reports what goes wrong on the target.
      ctx.log.warn("media not prepared ahead", { platform: row.platform, ...errorFields(e) });
    }
  }
  return prepared;
}

export const mediaPrepareJob: PeriodicJob = {
  name: "media-prepare",
  everyMs: 60_000,
  async run(ctx) {
    await prepareUpcomingMedia(ctx);
  },
};
