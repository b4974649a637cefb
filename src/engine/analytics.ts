/**
 * Analytics collection, never on the request path: published items' numbers through each plugin's
 * metrics() in batches on the schedule of analytics-schedule.ts, posts made on the platform itself through
 * fetchRecent, followers through accountStats. Items and accounts are claimed with a lease, so copies
 * sharing one database share the work; every reading is kept as a snapshot.
 */
import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { accounts, profiles } from "../db/schema.ts";
import { metricsStatusOf, type MetricsStatus } from "../domain/metrics-status.ts";
import { providerFor } from "../platform/host/provider.ts";
import { METRIC_NAMES, RefreshError, type Plugin, type PluginContext, type PostMetrics } from "../platform/sdk.ts";
import { observedHttp } from "../platform/host/observed-http.ts";
import {
  FOLLOWERS_EVERY_MS,
  NATIVE_EVERY_MS,
  nextMetricsRead,
  nextReadAfterFailure,
} from "../domain/analytics-schedule.ts";
import type { PeriodicJob } from "./jobs.ts";
import { trackAccounts, trackNativePosts, trackPublishedTargets } from "./analytics-track.ts";
import { uuidArray } from "../db/uuid-array.ts";

export interface AnalyticsOptions {
  /** Recorded as claimed_by on what this copy reads. */
  claimedBy: string;
  /** How long a claim holds; a copy that dies mid-read leaves its items to others after this. */
  leaseMs?: number;
  /** Items claimed per round. */
  batch?: number;
}

const DEFAULT_LEASE_MS = 5 * 60_000;
const DEFAULT_BATCH = 200;
/** Ids per metrics() call: the plugins split further where their platform wants smaller requests. */
const METRICS_CHUNK = 100;
const MAX_ROUNDS = 50;
/**
 * Accounts read at once. Each account's read ends in a few statements on the copy's database pool, which
 * the publishes share: a round of 50 accounts (or 200 items of as many accounts) started together queued
 * hundreds of statements in front of the claims of targets falling due (bench/dispatch, regime (c)). The
 * job goes at this pace instead; every account and item claimed is still read in its round.
 */
const ACCOUNTS_AT_ONCE = 4;

/** Runs read over every entry, at most ACCOUNTS_AT_ONCE at a time. */
async function atPace<T>(entries: T[], read: (entry: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < entries.length) await read(entries[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(ACCOUNTS_AT_ONCE, entries.length) }, worker));
}

/** One pass: track what is new, read what is due (accounts, then items) until nothing due is left. */
export async function collectAnalytics(ctx: AppContext, o: AnalyticsOptions): Promise<void> {
  await trackPublishedTargets(ctx.db, ctx.clock.now());
  await trackAccounts(ctx.db, ctx.clock.now());
  for (let i = 0; i < MAX_ROUNDS && (await readDueAccounts(ctx, o)) > 0; i++) {
    /* until none is due */
  }
  // Native posts found just now are items too: tracked above only when they were service posts.
  for (let i = 0; i < MAX_ROUNDS && (await readDueItems(ctx, o)) > 0; i++) {
    /* until none is due */
  }
}

/**
 * The periodic job (src/engine/jobs.ts) that collects analytics: one pass at a time across copies, in the
 * background so publishing never waits for a platform's statistics. Items and accounts are leased too, so
 * a pass that outlives its job lease never reads the same item twice.
 */
export const analyticsJob: PeriodicJob = {
  name: "analytics",
  everyMs: 15_000,
  run: (ctx) => collectAnalytics(ctx, { claimedBy: `analytics-${randomUUID()}` }),
};

type Attempt<T> = { ok: true; value: T } | { ok: false; status: MetricsStatus; reason: string };

/**
 * Runs a read; a refused token is refreshed once and the read tried again. The status of a failure comes
 * from the platform's answer (401 reconnect, 403 limited, else unavailable).
 */
async function attempt<T>(
  plugin: Plugin,
  pctx: PluginContext,
  obs: ReturnType<typeof observedHttp>,
  run: () => Promise<T>,
): Promise<Attempt<T>> {
  const once = async (): Promise<Attempt<T>> => {
    obs.reset();
    try {
      return { ok: true, value: await run() };
    } catch (e) {
      return { ok: false, status: metricsStatusOf(obs.lastFailure()), reason: (e as Error)?.message ?? String(e) };
    }
  };
  const first = await once();
  if (first.ok || first.status !== "reconnect" || !plugin.refresh) return first;
  const refreshed = await plugin.refresh(pctx).then(
    () => true,
    (e: unknown) => e,
  );
  if (refreshed === true) return once();
  // The platform could not be reached to refresh: the token was not refused, try later.
  if (refreshed instanceof RefreshError && refreshed.retryable)
    return { ok: false, status: "unavailable", reason: refreshed.message };
  return first;
}

type AccountRow = typeof accounts.$inferSelect;

async function loadAccounts(
  ctx: AppContext,
  ids: string[],
): Promise<Map<string, { account: AccountRow; sandbox: boolean }>> {
  if (!ids.length) return new Map();
  const rows = await ctx.db.db
    .select({ account: accounts, sandbox: profiles.sandbox })
    .from(accounts)
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(sql`${accounts.id} = any(${uuidArray(ids)}::uuid[])`);
  return new Map(rows.map((r) => [r.account.id, r]));
}

/** The plugin and a context whose HTTP answers are observed; undefined when the account cannot be read. */
function readerFor(ctx: AppContext, row: { account: AccountRow; sandbox: boolean } | undefined) {
  if (!row || row.account.status !== "active" || !row.account.credentials) return undefined;
  const { plugin, context } = providerFor(ctx, row.account, { sandbox: row.sandbox });
  const obs = observedHttp(context.http);
  context.http = obs.http;
  return { plugin, context, obs };
}

/** What an account that cannot be read reports: reconnect when the user must act, else what it had. */
const unreadableStatus = (row: { account: AccountRow } | undefined): MetricsStatus | null =>
  row?.account.status === "auth_required" || (row?.account.status === "active" && !row.account.credentials)
    ? "reconnect"
    : null;

async function setAccountStatus(
  ctx: AppContext,
  accountId: string,
  profileId: string,
  status: MetricsStatus,
): Promise<void> {
  const later = new Date(ctx.clock.now().getTime() + FOLLOWERS_EVERY_MS).toISOString();
  await ctx.db.rows(sql`
    insert into account_analytics (account_id, profile_id, metrics_status, next_stats_at, next_native_at)
    values (${accountId}::uuid, ${profileId}::uuid, ${status}, ${later}::timestamptz, ${later}::timestamptz)
    on conflict (account_id) do update set metrics_status = excluded.metrics_status
    returning account_id`);
}

async function claim<T>(
  ctx: AppContext,
  o: AnalyticsOptions,
  table: "account_analytics" | "analytics_items",
  due: ReturnType<typeof sql>,
  key: string,
  limit: number,
  returning: ReturnType<typeof sql>,
  order = sql``,
): Promise<T[]> {
  const now = ctx.clock.now();
  const lease = new Date(now.getTime() + (o.leaseMs ?? DEFAULT_LEASE_MS)).toISOString();
  return ctx.db.rows<T>(sql`
    update ${sql.identifier(table)} set lease_until = ${lease}::timestamptz, claimed_by = ${o.claimedBy}
    where ${sql.identifier(key)} in (select ${sql.identifier(key)} from ${sql.identifier(table)}
      where (${due}) and (lease_until is null or lease_until < ${now.toISOString()}::timestamptz)
      ${order} limit ${limit} for update skip locked)
    returning ${returning}`);
}

/** Followers (weekly) and posts made on the platform (every few hours) of the accounts due. */
async function readDueAccounts(ctx: AppContext, o: AnalyticsOptions): Promise<number> {
  const now = ctx.clock.now();
  const at = sql`${now.toISOString()}::timestamptz`;
  const claimed = await claim<{ account_id: string; profile_id: string; stats_due: boolean; native_due: boolean }>(
    ctx,
    o,
    "account_analytics",
    sql`next_stats_at <= ${at} or next_native_at <= ${at}`,
    "account_id",
    50,
    sql`account_id, profile_id, next_stats_at <= ${at} as stats_due, next_native_at <= ${at} as native_due`,
  );
  if (!claimed.length) return 0;
  const rows = await loadAccounts(
    ctx,
    claimed.map((c) => c.account_id),
  );
  await atPace(claimed, async (c) => {
    const row = rows.get(c.account_id);
    const reader = readerFor(ctx, row);
    let status: MetricsStatus | null = reader ? null : unreadableStatus(row);
    let nextStats = new Date(now.getTime() + FOLLOWERS_EVERY_MS);
    let nextNative = new Date(now.getTime() + NATIVE_EVERY_MS);
    if (reader && c.stats_due && reader.plugin.accountStats) {
      const r = await attempt(reader.plugin, reader.context, reader.obs, () =>
        reader.plugin.accountStats!(reader.context),
      );
      if (r.ok && r.value.followers !== null) {
        await ctx.db.rows(sql`insert into follower_snapshots (account_id, observed_at, followers)
          values (${c.account_id}::uuid, ${at}, ${r.value.followers}) on conflict do nothing returning account_id`);
        await ctx.db
          .rows(sql`update account_analytics set followers = ${r.value.followers}, followers_observed_at = ${at}
          where account_id = ${c.account_id}::uuid returning account_id`);
      }
      if (!r.ok) {
        nextStats = nextReadAfterFailure(nextStats, now, r.status === "unavailable");
        reader.context.log.warn("account statistics could not be read", { status: r.status, reason: r.reason });
      }
      status = r.ok ? "ok" : r.status;
    }
    if (reader && c.native_due && reader.plugin.fetchRecent && reader.plugin.capabilities.source) {
      const r = await attempt(reader.plugin, reader.context, reader.obs, () =>
        reader.plugin.fetchRecent!(reader.context, null),
      );
      if (r.ok)
        await trackNativePosts(
          ctx.db,
          { id: c.account_id, profileId: c.profile_id, platform: row!.account.platform },
          r.value,
          now,
        );
      else {
        nextNative = nextReadAfterFailure(nextNative, now, r.status === "unavailable");
        reader.context.log.warn("posts made on the platform could not be read", {
          status: r.status,
          reason: r.reason,
        });
      }
      // A failure of either read is what the account shows.
      status = r.ok ? (status ?? "ok") : r.status;
    }
    await ctx.db.rows(sql`update account_analytics set lease_until = null, claimed_by = null,
        next_stats_at = case when ${c.stats_due}::boolean then ${nextStats.toISOString()}::timestamptz else next_stats_at end,
        next_native_at = case when ${c.native_due}::boolean then ${nextNative.toISOString()}::timestamptz else next_native_at end,
        metrics_status = coalesce(${status}, metrics_status)
      where account_id = ${c.account_id}::uuid returning account_id`);
  });
  return claimed.length;
}

/** Numbers a platform does not expose are null, whatever its answer held. */
function exposed(plugin: Plugin, m: PostMetrics): Record<(typeof METRIC_NAMES)[number], number | null> {
  const names = new Set(plugin.metricNames ?? []);
  const out = {} as Record<(typeof METRIC_NAMES)[number], number | null>;
  for (const n of METRIC_NAMES) {
    const v = m[n];
    out[n] = names.has(n) && typeof v === "number" && Number.isFinite(v) ? Math.max(0, Math.round(v)) : null;
  }
  return out;
}

interface ClaimedItem {
  id: string;
  account_id: string;
  profile_id: string;
  platform_post_id: string;
  published_at: Date | string;
}

/** The numbers of the items due, one metrics() call per account and chunk. */
async function readDueItems(ctx: AppContext, o: AnalyticsOptions): Promise<number> {
  const now = ctx.clock.now();
  const claimed = await claim<ClaimedItem>(
    ctx,
    o,
    "analytics_items",
    sql`next_read_at <= ${now.toISOString()}::timestamptz`,
    "id",
    o.batch ?? DEFAULT_BATCH,
    sql`id, account_id, profile_id, platform_post_id, published_at`,
    // A round's items by account: one metrics() call reads many of an account's posts (Bluesky 25 a call),
    // where a round taken in any order held one or two posts of each of 200 accounts, a call each.
    sql`order by account_id`,
  );
  if (!claimed.length) return 0;
  const byAccount = new Map<string, ClaimedItem[]>();
  for (const c of claimed) byAccount.set(c.account_id, [...(byAccount.get(c.account_id) ?? []), c]);
  const rows = await loadAccounts(ctx, [...byAccount.keys()]);
  await atPace([...byAccount], async ([accountId, items]) => {
    const row = rows.get(accountId);
    const reader = readerFor(ctx, row);
    const regular = (i: ClaimedItem) => nextMetricsRead(new Date(i.published_at), now);
    if (!reader || !reader.plugin.metrics) {
      // Nothing to ask: the numbers stay as they were (null where never read).
      const status = reader ? "ok" : unreadableStatus(row);
      await settleItems(
        ctx,
        items.map((i) => ({ id: i.id, next: regular(i), status })),
      );
      if (status) await setAccountStatus(ctx, accountId, items[0].profile_id, status);
      return;
    }
    let accountStatus: MetricsStatus = "ok";
    for (let k = 0; k < items.length; k += METRICS_CHUNK) {
      const chunk = items.slice(k, k + METRICS_CHUNK);
      const r = await attempt(reader.plugin, reader.context, reader.obs, () =>
        reader.plugin.metrics!(
          reader.context,
          chunk.map((i) => i.platform_post_id),
        ),
      );
      if (!r.ok) {
        accountStatus = r.status;
        reader.context.log.warn("post numbers could not be read", { status: r.status, reason: r.reason });
        // The previous numbers stay, with their last_updated.
        await settleItems(
          ctx,
          chunk.map((i) => ({
            id: i.id,
            next: nextReadAfterFailure(regular(i), now, r.status === "unavailable"),
            status: r.status,
          })),
        );
        continue;
      }
      await settleItems(
        ctx,
        chunk.map((i) => {
          const m = r.value[i.platform_post_id];
          return {
            id: i.id,
            next: regular(i),
            status: "ok" as const,
            ...(m && { numbers: exposed(reader.plugin, m) }),
          };
        }),
        now,
      );
    }
    await setAccountStatus(ctx, accountId, items[0].profile_id, accountStatus);
  });
  return claimed.length;
}

interface Settled {
  id: string;
  next: Date;
  status: MetricsStatus | null;
  numbers?: Record<(typeof METRIC_NAMES)[number], number | null>;
}

/** Writes a read's result and releases the lease; numbers read are also kept as a snapshot. */
async function settleItems(ctx: AppContext, items: Settled[], observedAt?: Date): Promise<void> {
  if (!items.length) return;
  const n = (v: number | null | undefined) => (v === null || v === undefined ? null : v);
  const values = items.map(
    (
      i,
    ) => sql`(${i.id}::uuid, ${i.next.toISOString()}::timestamptz, ${i.status}::text, ${i.numbers !== undefined}::boolean,
    ${n(i.numbers?.views)}::bigint, ${n(i.numbers?.likes)}::bigint, ${n(i.numbers?.comments)}::bigint, ${n(i.numbers?.shares)}::bigint, ${n(i.numbers?.saves)}::bigint)`,
  );
  const at = observedAt ? sql`${observedAt.toISOString()}::timestamptz` : sql`null::timestamptz`;
  await ctx.db.rows(sql`
    update analytics_items i set next_read_at = v.next, lease_until = null, claimed_by = null,
      metrics_status = coalesce(v.status, i.metrics_status),
      views = case when v.read then v.views else i.views end, likes = case when v.read then v.likes else i.likes end,
      comments = case when v.read then v.comments else i.comments end, shares = case when v.read then v.shares else i.shares end,
      saves = case when v.read then v.saves else i.saves end,
      last_updated = case when v.read then ${at} else i.last_updated end
    from (values ${sql.join(values, sql`, `)}) as v(id, next, status, read, views, likes, comments, shares, saves)
    where i.id = v.id
    returning i.id`);
  const read = items.filter((i) => i.numbers);
  if (!observedAt || !read.length) return;
  await ctx.db.rows(sql`
    insert into metric_snapshots (item_id, observed_at, views, likes, comments, shares, saves)
    values ${sql.join(
      read.map(
        (i) => sql`(${i.id}::uuid, ${at}, ${n(i.numbers!.views)}::bigint, ${n(i.numbers!.likes)}::bigint,
      ${n(i.numbers!.comments)}::bigint, ${n(i.numbers!.shares)}::bigint, ${n(i.numbers!.saves)}::bigint)`,
      ),
      sql`, `,
    )}
    on conflict do nothing
    returning item_id`);
}
