/**
 * What the collection reads numbers for: every published target becomes an analytics item (a copy found
 * earlier by fetchRecent becomes the service's own), and every active account gets its analytics row,
 * due at once so followers are read right after connecting.
 */
import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import type { RecentPost } from "../platform/sdk.ts";

/** Targets a statement looks at: a backlog (a burst just published), or every target on a full pass, is
 * gone through in many short statements. */
export const TRACK_BATCH = 1_000;

/** Wall time a pass may spend on the full pass under way before leaving the rest to the next pass. */
export const TRACK_FULL_BUDGET_MS = 1_000;

/**
 * How far before the previous pass began a pass looks. A target's updated_at is when its publish result
 * came in, on its copy's clock; the write commits within a statement timeout of that (seconds), so a
 * target committed after the previous pass read is still inside the overlap. What falls outside it (a
 * result retried through a database outage, a copy's clock half a minute behind) waits for the next full
 * pass.
 */
export const TRACK_OVERLAP_MS = 30_000;

/**
 * A full pass over every target starts this long after the last one began (and on the very first pass,
 * or when the clock went back): whatever the windowed passes could not see is tracked within the
 * hour, which is when a new post's numbers are read next anyway (src/domain/analytics-schedule.ts).
 */
export const TRACK_FULL_EVERY_MS = 60 * 60_000;

/**
 * Where a pass has got to: the last target looked at, by id on a full pass; on a windowed pass, by the time it
 * last changed (as PostgreSQL prints it, to the microsecond) and then id, the order of the index it reads.
 */
export interface Cursor {
  at: string | null;
  id: string;
}

const ZERO = "00000000-0000-0000-0000-000000000000";

/** What analytics_tracking holds (migration 0033), times in ms. */
interface Tracking {
  /** When the last pass began: the next window starts TRACK_OVERLAP_MS before it. */
  began: number;
  /** When the full pass under way, or the last one, began. */
  fullAt: number;
  /** The last target the full pass under way looked at; null when none is under way. */
  fullFrom: string | null;
}

/**
 * One pass: makes an item of every target published since the previous pass of any copy, then carries
 * the full pass on (starting one when the last began TRACK_FULL_EVERY_MS ago) for at most `fullBudgetMs`.
 * The full pass is spread over passes so that a large installation's first one (every published target
 * without an item, as after an upgrade) never takes the database from publishing: made at once, the
 * items of bench/growth's 2,700,000 published targets held dispatch lag p99 at 2.2 s. A pass that failed
 * moves nothing on: the next looks again from the same point.
 */
export async function trackPublishedTargets(
  db: Db,
  now: Date,
  batchSize = TRACK_BATCH,
  fullBudgetMs = TRACK_FULL_BUDGET_MS,
): Promise<void> {
  const at = now.getTime();
  const last = await lastPass(db);
  // No pass yet, or the clock went back: a full pass, and the window starts now.
  const restart = !last || at < last.began;
  if (!restart) await walk(db, now, { at: new Date(last.began - TRACK_OVERLAP_MS).toISOString(), id: ZERO }, batchSize);
  let { fullAt, fullFrom } = restart ? { fullAt: at, fullFrom: ZERO } : last;
  if (fullFrom === null && at - fullAt >= TRACK_FULL_EVERY_MS) {
    fullAt = at;
    fullFrom = ZERO;
  }
  if (fullFrom !== null) fullFrom = await walk(db, now, { at: null, id: fullFrom }, batchSize, fullBudgetMs);
  await savePass(db, { began: at, fullAt, fullFrom });
}

/**
 * Batches from the cursor until none is left (null) or, past `budgetMs` of wall time, the last target
 * looked at (where to carry on).
 */
async function walk(db: Db, now: Date, from: Cursor, batchSize: number, budgetMs = Infinity): Promise<string | null> {
  const started = performance.now();
  let cursor = from;
  for (;;) {
    const batch = await trackBatch(db, now, cursor, batchSize);
    if (batch.found < batchSize || !batch.last) return null;
    cursor = batch.last;
    if (performance.now() - started >= budgetMs) return cursor.id;
  }
}

async function lastPass(db: Db): Promise<Tracking | null> {
  const [row] = await db.rows<{ began: string | Date; full_at: string | Date; full_from: string | null }>(
    sql`select window_began as began, full_at, full_from::text from analytics_tracking where id = 1`,
  );
  if (!row) return null;
  return { began: new Date(row.began).getTime(), fullAt: new Date(row.full_at).getTime(), fullFrom: row.full_from };
}

/**
 * Of two passes that overlap (a job whose lease ran out), whichever finishes last is kept: an earlier
 * start only widens the next window, and a full pass set back only looks at some targets again.
 */
async function savePass(db: Db, t: Tracking): Promise<void> {
  const iso = (ms: number) => new Date(ms).toISOString();
  await db.rows(sql`
    insert into analytics_tracking (id, window_began, full_at, full_from)
    values (1, ${iso(t.began)}::timestamptz, ${iso(t.fullAt)}::timestamptz, ${t.fullFrom}::uuid)
    on conflict (id) do update
      set window_began = excluded.window_began, full_at = excluded.full_at, full_from = excluded.full_from`);
}

/**
 * The next `batchSize` targets after the cursor that a pass looks at. A full pass walks every target in
 * id order through the primary key, so each statement reads its batch and no more, however many targets
 * there are: computed at once (a set difference of every published target and every item, each batch
 * taking the next by id), the full pass at 3,000,000 targets ran past the statement timeout and was given
 * up on every run (bench/growth), so no item was made at all. A windowed pass reads only the targets
 * published since the window's start, in the order of post_targets_published_idx (its condition written
 * as the index's predicate, which no other index serves), each batch on from where the one before stopped.
 */
function scanned(cursor: Cursor, batchSize: number) {
  if (cursor.at === null)
    return sql`
      select t.id, null::timestamptz as updated_at, t.status, t.platform_post_id, t.account_id from post_targets t
      where t.id > ${cursor.id}::uuid
      order by t.id
      limit ${batchSize}`;
  return sql`
    select t.id, t.updated_at, t.status, t.platform_post_id, t.account_id from post_targets t
    where t.status || '' = 'published' and t.updated_at >= ${cursor.at}::timestamptz
      and (t.updated_at, t.id) > (${cursor.at}::timestamptz, ${cursor.id}::uuid)
    order by t.updated_at, t.id
    limit ${batchSize}`;
}

/**
 * Makes the items of one batch: of the targets it looked at, those published without an item, each looked
 * up in the items' target index (OFFSET 0 keeps that a lookup per target: as an anti-join, with statistics
 * that predated a burst, PostgreSQL read every item for every published target). The cursor moves past
 * every target looked at, so one that makes no item (its platform post already has another target's item)
 * never holds the rest back.
 */
async function trackBatch(
  db: Db,
  now: Date,
  cursor: Cursor,
  batchSize: number,
): Promise<{ found: number; last: Cursor | null }> {
  const [row] = await db.rows<{ found: number; last_at: string | null; last_id: string | null }>(
    trackBatchStatement(now, cursor, batchSize),
  );
  if (!row?.last_id) return { found: row?.found ?? 0, last: null };
  return { found: row.found, last: { at: row.last_at, id: row.last_id } };
}

/** The statement of one batch (exported for tests/engine/analytics-track.test.ts to read its plan). */
export function trackBatchStatement(now: Date, cursor: Cursor, batchSize: number): SQL {
  const at = now.toISOString();
  return sql`
    with scanned as (${scanned(cursor, batchSize)}
    ), untracked as (
      -- One target a platform post: a second in the same statement would make it update its own row.
      select distinct on (s.account_id, s.platform_post_id) s.id from scanned s
      where s.status = 'published' and s.platform_post_id is not null and s.account_id is not null
        and not exists (select 1 from analytics_items x where x.target_id = s.id offset 0)
      order by s.account_id, s.platform_post_id, s.id
    ), made as (
      insert into analytics_items as i (profile_id, account_id, platform, platform_post_id, target_id, post_id, url,
        caption, media_type, thumbnail_url, media_url, published_at, next_read_at)
      select t.profile_id, t.account_id, t.platform, t.platform_post_id, t.id, t.post_id, t.platform_post_url,
        coalesce(t.fitted_content, t.content_override, p.content),
        case when exists (select 1 from jsonb_array_elements(coalesce(t.fitted_media, p.media)) m where m->>'type' = 'video')
          then 'video' else 'photo' end,
        coalesce(coalesce(t.fitted_media, p.media)->0->>'thumbnail_url',
          case when coalesce(t.fitted_media, p.media)->0->>'type' = 'image' then coalesce(t.fitted_media, p.media)->0->>'url' end),
        coalesce(t.fitted_media, p.media)->0->>'url',
        coalesce(t.published_at, t.updated_at), ${at}::timestamptz
      from untracked u join post_targets t on t.id = u.id join posts p on p.id = t.post_id
      on conflict (account_id, platform_post_id) do update
        set target_id = excluded.target_id, post_id = excluded.post_id, caption = excluded.caption, media_url = excluded.media_url,
            media_type = excluded.media_type, thumbnail_url = coalesce(excluded.thumbnail_url, i.thumbnail_url)
        where i.target_id is null)
    select n.found, l.last_at, l.last_id
    from (select count(*)::int as found from scanned) n
    left join lateral (select s.updated_at::text as last_at, s.id::text as last_id from scanned s
      order by s.updated_at desc nulls last, s.id desc limit 1) l on true`;
}

export async function trackAccounts(db: Db, now: Date): Promise<void> {
  const at = now.toISOString();
  await db.rows(sql`
    insert into account_analytics (account_id, profile_id, next_stats_at, next_native_at)
    select a.id, a.profile_id, ${at}::timestamptz, ${at}::timestamptz from accounts a
    where a.status = 'active' and not exists (select 1 from account_analytics x where x.account_id = a.id)
    on conflict do nothing
    returning account_id`);
}

/** Posts made on the platform itself: added once, never over an item the service published. */
export async function trackNativePosts(
  db: Db,
  account: { id: string; profileId: string; platform: string },
  posts: RecentPost[],
  now: Date,
): Promise<void> {
  if (!posts.length) return;
  const rows = posts.map((p) => {
    const first = p.media[0];
    const thumb = first?.thumbnail_url ?? (first?.type === "image" ? first.url : null);
    const type = p.kind === "video" || p.media.some((m) => m.type === "video") ? "video" : "photo";
    return sql`(${account.profileId}::uuid, ${account.id}::uuid, ${account.platform}, ${p.platformPostId}, ${p.url}, ${p.content}, ${type}, ${thumb ?? null}, ${p.createdAt.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz)`;
  });
  await db.rows(sql`
    insert into analytics_items (profile_id, account_id, platform, platform_post_id, url, caption, media_type, thumbnail_url, published_at, next_read_at)
    values ${sql.join(rows, sql`, `)}
    on conflict (account_id, platform_post_id) do nothing
    returning id`);
}
