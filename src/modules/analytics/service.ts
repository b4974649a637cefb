/**
 * The analytics answers, from stored numbers only: the engine (src/engine/analytics.ts) reads the
 * platforms in the background, so a request never waits for one.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { accountAnalytics, accounts, analyticsItems, analyticsRefreshes, posts, postTargets } from "../../db/schema.ts";
import { ApiError, NotFound } from "../../http/errors.ts";
import { isoOrNull } from "../../http/model.ts";
import { posterUrlFor } from "../../media/poster.ts";
import type { AnalyticsQuery, PostAnalytics, PostTargetAnalytics } from "./model.ts";
import { dailySeries, dayKeyIn } from "./daily.ts";
import { engagementRate, median, titleOf, versusMedian, type Numbers } from "./numbers.ts";

const DAY_MS = 24 * 3600_000;
/** One refresh per profile in this window: each refresh makes a call per account to every platform. */
export const REFRESH_EVERY_MS = 5 * 60_000;

export class RefreshTooSoon extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      "rate_limited",
      "A refresh of this profile's analytics was asked for less than 5 minutes ago.",
      `Wait ${retryAfterSeconds} s; numbers are also read in the background on their own schedule.`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}

type ItemRow = typeof analyticsItems.$inferSelect & { username: string };

const numbersOf = (i: Numbers): Numbers => ({
  views: i.views,
  likes: i.likes,
  comments: i.comments,
  shares: i.shares,
  saves: i.saves,
});

export async function overview(ctx: AppContext, profileId: string, q: AnalyticsQuery): Promise<PostAnalytics> {
  const days = q.days ?? 30;
  const limit = q.limit ?? 50;
  const end = ctx.clock.now();
  const start = new Date(end.getTime() - days * DAY_MS);
  const dayKey = dayKeyIn(q.time_zone ?? "UTC");
  const accountFilter = and(
    eq(accounts.profileId, profileId),
    q.account_id ? eq(accounts.id, q.account_id) : undefined,
    q.platform ? eq(accounts.platform, q.platform) : undefined,
  );
  const accountRows = await ctx.db.db
    .select({ account: accounts, stats: accountAnalytics })
    .from(accounts)
    .leftJoin(accountAnalytics, eq(accountAnalytics.accountId, accounts.id))
    .where(accountFilter)
    .orderBy(asc(accounts.createdAt), asc(accounts.id));
  if (q.account_id && !accountRows.length) throw new NotFound("Account");

  const items: ItemRow[] = (
    await ctx.db.db
      .select({ item: analyticsItems, username: accounts.username })
      .from(analyticsItems)
      .innerJoin(accounts, eq(accounts.id, analyticsItems.accountId))
      .where(
        and(
          accountFilter,
          sql`${analyticsItems.publishedAt} between ${start.toISOString()}::timestamptz and ${end.toISOString()}::timestamptz`,
        ),
      )
  ).map((r) => ({ ...r.item, username: r.username }));

  const viewsByAccount = new Map<string, number[]>();
  for (const i of items)
    if (i.views !== null) viewsByAccount.set(i.accountId, [...(viewsByAccount.get(i.accountId) ?? []), i.views]);
  const medians = new Map([...viewsByAccount].map(([id, v]) => [id, median(v)]));

  // One entry per service post (its copies are destinations), one per post made on the platform.
  const groups = new Map<string, ItemRow[]>();
  for (const i of items) {
    const key = i.postId ?? `native:${i.id}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const entries = [...groups.values()]
    .map((group) => {
      group.sort((a, b) => a.publishedAt.getTime() - b.publishedAt.getTime() || a.id.localeCompare(b.id));
      const first = group[0];
      const service = group.some((i) => i.targetId !== null || i.postId !== null);
      return {
        id: first.postId ?? first.id,
        post_id: first.postId,
        title: titleOf(first.caption),
        caption: first.caption,
        thumbnail_url: group.find((i) => i.thumbnailUrl)?.thumbnailUrl ?? null,
        media_url: service ? first.mediaUrl : null,
        media_type: first.mediaType,
        published_at: first.publishedAt.toISOString(),
        origin: service ? ("postonce" as const) : ("native" as const),
        destinations: group.map((i) => ({
          platform: i.platform,
          account_id: i.accountId,
          username: i.username,
          url: i.url,
          published_at: i.publishedAt.toISOString(),
          ...numbersOf(i),
          engagement_rate: engagementRate(i),
          views_vs_account_median: versusMedian(i.views, medians.get(i.accountId) ?? null),
        })),
      };
    })
    .sort((a, b) => b.published_at.localeCompare(a.published_at) || a.id.localeCompare(b.id));

  const withItems = new Set(items.map((i) => i.accountId));
  const shownAccounts = accountRows.filter((r) => r.account.status !== "disconnected" || withItems.has(r.account.id));
  const lastRead = items.reduce<Date | null>(
    (m, i) => (i.lastUpdated && (!m || i.lastUpdated > m) ? i.lastUpdated : m),
    null,
  );
  return {
    range: { days, start: start.toISOString(), end: end.toISOString() },
    accounts: shownAccounts.map(({ account, stats }) => ({
      id: account.id,
      platform: account.platform,
      username: account.username,
      metrics_status: account.status === "auth_required" ? "reconnect" : (stats?.metricsStatus ?? "ok"),
      posts_with_views: viewsByAccount.get(account.id)?.length ?? 0,
      median_views: medians.get(account.id) ?? null,
      followers: stats?.followers ?? null,
      followers_observed_at: isoOrNull(stats?.followersObservedAt),
    })),
    posts: await withPosters(ctx, entries.slice(0, limit)),
    daily: dailySeries(items, start, end, dayKey),
    truncated: entries.length > limit,
    refreshing: await refreshing(ctx, profileId, end),
    updated_at: (lastRead ?? end).toISOString(),
  };
}

/**
 * A video published through Crier from its own media, with no thumbnail of its own, shows the poster frame
 * Crier made of it (looked up when answering: the poster may be made after the item was tracked).
 */
function withPosters<T extends { thumbnail_url: string | null; media_url: string | null; media_type: string }>(
  ctx: AppContext,
  entries: T[],
): Promise<T[]> {
  return Promise.all(
    entries.map(async (e) =>
      e.thumbnail_url || e.media_type !== "video" || !e.media_url
        ? e
        : { ...e, thumbnail_url: await posterUrlFor(ctx, e.media_url) },
    ),
  );
}

/** A read of the profile is due or under way: numbers, followers, or a published copy not yet tracked. */
async function refreshing(ctx: AppContext, profileId: string, now: Date): Promise<boolean> {
  const at = sql`${now.toISOString()}::timestamptz`;
  const [row] = await ctx.db.rows<{ busy: boolean }>(sql`select
    exists (select 1 from analytics_items where profile_id = ${profileId}::uuid and (next_read_at <= ${at} or lease_until > ${at}))
    or exists (select 1 from account_analytics x join accounts a on a.id = x.account_id
               where x.profile_id = ${profileId}::uuid and a.status = 'active'
                 and (x.lease_until > ${at} or x.next_stats_at <= ${at} or x.next_native_at <= ${at}))
    or exists (select 1 from accounts a where a.profile_id = ${profileId}::uuid and a.status = 'active'
               and not exists (select 1 from account_analytics x where x.account_id = a.id))
    or exists (select 1 from post_targets t where t.profile_id = ${profileId}::uuid and t.status = 'published'
               and t.platform_post_id is not null and t.account_id is not null
               and not exists (select 1 from analytics_items i where i.target_id = t.id)) as busy`);
  return Boolean(row?.busy);
}

export async function postAnalytics(ctx: AppContext, profileId: string, postId: string): Promise<PostTargetAnalytics> {
  const [post] = await ctx.db.db
    .select({ id: posts.id, media: posts.media })
    .from(posts)
    .where(and(eq(posts.id, postId), eq(posts.profileId, profileId)));
  if (!post) throw new NotFound("Post");
  const rows = await ctx.db.db
    .select({ target: postTargets, item: analyticsItems, accountStatus: accounts.status })
    .from(postTargets)
    .leftJoin(analyticsItems, eq(analyticsItems.targetId, postTargets.id))
    .leftJoin(accounts, eq(accounts.id, postTargets.accountId))
    .where(eq(postTargets.postId, postId))
    .orderBy(asc(postTargets.position), asc(postTargets.targetVariant), asc(postTargets.id));
  const media = post.media as { url?: string }[];
  return {
    id: post.id,
    media_url: media[0]?.url ?? null,
    targets: rows.map(({ target: t, item: i, accountStatus }) => {
      const n: Numbers = i ? numbersOf(i) : { views: null, likes: null, comments: null, shares: null, saves: null };
      return {
        target_post_id: t.id,
        target_variant: t.targetVariant,
        account_id: t.accountId,
        platform: t.platform,
        platform_post_id: t.platformPostId,
        url: t.platformPostUrl,
        published_at: t.status === "published" ? isoOrNull(t.publishedAt ?? t.updatedAt) : null,
        metrics_status: accountStatus === "auth_required" ? "reconnect" : (i?.metricsStatus ?? "ok"),
        ...n,
        engagement_rate: engagementRate(n),
        last_updated: isoOrNull(i?.lastUpdated),
      };
    }),
  };
}

/** Asks the engine to read the profile's numbers and platform posts now; once per profile per 5 minutes. */
export async function requestRefresh(
  ctx: AppContext,
  profileId: string,
): Promise<{ requested_at: string; refreshing: boolean }> {
  const now = ctx.clock.now();
  const at = sql`${now.toISOString()}::timestamptz`;
  const accepted = await ctx.db.db.transaction(async (tx) => {
    const won = await ctx.db.rows<{ profile_id: string }>(
      sql`
      insert into analytics_refreshes (profile_id, requested_at) values (${profileId}::uuid, ${at})
      on conflict (profile_id) do update set requested_at = excluded.requested_at
        where analytics_refreshes.requested_at <= ${new Date(now.getTime() - REFRESH_EVERY_MS).toISOString()}::timestamptz
      returning profile_id`,
      tx,
    );
    if (!won.length) return false;
    await tx.update(analyticsItems).set({ nextReadAt: now }).where(eq(analyticsItems.profileId, profileId));
    await tx.update(accountAnalytics).set({ nextNativeAt: now }).where(eq(accountAnalytics.profileId, profileId));
    return true;
  });
  if (!accepted) {
    const [last] = await ctx.db.db.select().from(analyticsRefreshes).where(eq(analyticsRefreshes.profileId, profileId));
    const wait = last ? last.requestedAt.getTime() + REFRESH_EVERY_MS - now.getTime() : REFRESH_EVERY_MS;
    throw new RefreshTooSoon(Math.max(1, Math.ceil(wait / 1000)));
  }
  return { requested_at: now.toISOString(), refreshing: true };
}
