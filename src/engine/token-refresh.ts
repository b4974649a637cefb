/**
 * Refreshing tokens ahead of their end (a periodic job). Some tokens die of age rather than of use:
 * Instagram's and Threads' long-lived tokens last 60 days and can be refreshed only while still valid
 * ("at least 24 hours old but has not expired"), so an account that publishes nothing for 60 days would
 * otherwise be lost for good. The job finds the accounts whose stored credentials end within
 * REFRESH_WINDOW_MS (accounts.credentials_expire_at, src/platform/host/credential-expiry.ts) and calls
 * their plugin's refresh().
 *
 * Short-lived access tokens with a refresh token are not this job's: the engine refreshes them when a
 * call is refused, and before a multi-call upload. A refresh token with a known end of its own is, so a
 * platform that gives its refresh token a lifetime and renews it on use keeps the account alive too.
 *
 * Per platform, from what each stores (checked 2026-11-26): Instagram and Threads, 60-day tokens, kept
 * alive here. TikTok (refresh_expires_in, 365 days) and Pinterest (refresh_token_expires_in; continuous
 * refresh renews it) are refreshed in their refresh token's last week; LinkedIn's refresh token
 * (refresh_token_expires_in) has a fixed year that a refresh does not extend, so its last week is retried
 * daily and ends in a reconnect, as it must. YouTube's and X's refresh tokens state no end (Google's
 * lapses after six months unused; the weekly follower read uses it), Facebook's Page tokens do not expire,
 * Bluesky's session refreshes on use: none of them is stored with an end, so none is picked.
 *
 * Each account is leased (credentials_refresh_after moved ahead before the call) so two copies never
 * refresh the same account at once; an account with a publish in flight is left for the next run, so
 * this refresh never races the engine's own.
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import { errorFields } from "../log.ts";
import { providerFor, type HostedAccount } from "../platform/host/provider.ts";
import { RefreshError } from "../platform/sdk.ts";
import type { PeriodicJob } from "./jobs.ts";

/** Refresh this long before the end: a week of runs (and of passing outages) before a 60-day token dies. */
export const REFRESH_WINDOW_MS = 7 * 86_400_000;
/** A refresh the platform could not answer now is tried again this much later. */
export const RETRY_AFTER_MS = 3_600_000;
/** A refresh that did not move the end out of the window (a refresh token of fixed life) waits a day. */
export const STILL_DUE_AFTER_MS = 86_400_000;
/** How long a copy holds an account while refreshing it. */
const LEASE_MS = 5 * 60_000;
const BATCH = 50;

export const tokenRefreshJob: PeriodicJob = {
  name: "token-refresh",
  everyMs: 3_600_000,
  async run(ctx) {
    await refreshExpiringTokens(ctx);
  },
};

interface Claimed {
  id: string;
  profile_id: string;
  platform: string;
  remote_id: string;
  username: string;
  metadata: Record<string, unknown> | null;
  credentials: string | null;
  credentials_expire_at: string;
  sandbox: boolean;
}

/** Refreshes every account due, a batch at a time; returns how many were attempted. */
export async function refreshExpiringTokens(ctx: AppContext): Promise<number> {
  const platforms = ctx.platforms
    .list()
    .filter((p) => typeof p.refresh === "function")
    .map((p) => p.platform);
  if (!platforms.length) return 0;
  let attempted = 0;
  for (;;) {
    const batch = await claimDue(ctx, platforms);
    for (const row of batch) await refreshOne(ctx, row);
    attempted += batch.length;
    if (batch.length < BATCH) return attempted;
  }
}

/** Takes the lease of up to BATCH due accounts, earliest end first. */
async function claimDue(ctx: AppContext, platforms: string[]): Promise<Claimed[]> {
  const now = ctx.clock.now();
  const horizon = new Date(now.getTime() + REFRESH_WINDOW_MS).toISOString();
  const lease = new Date(now.getTime() + LEASE_MS).toISOString();
  return ctx.db.rows<Claimed>(sql`
    with due as (
      select a.id from accounts a
      where a.status = 'active' and a.credentials is not null
        and a.credentials_expire_at <= ${horizon}::timestamptz
        and (a.credentials_refresh_after is null or a.credentials_refresh_after <= ${now.toISOString()}::timestamptz)
        and a.platform in (${sql.join(
          platforms.map((p) => sql`${p}`),
          sql`, `,
        )})
        and not exists (select 1 from post_targets t where t.account_id = a.id and t.status = 'processing')
      order by a.credentials_expire_at
      limit ${BATCH}
      for update of a skip locked
    )
    update accounts a set credentials_refresh_after = ${lease}::timestamptz
    from due, profiles p
    where a.id = due.id and p.id = a.profile_id
    returning a.id, a.profile_id, a.platform, a.remote_id, a.username, a.metadata, a.credentials,
      a.credentials_expire_at::text as credentials_expire_at, p.sandbox`);
}

/** Whether the stored credentials have stopped working: past their end and past the access token's own. */
function ended(row: Claimed, credentials: Record<string, unknown>, now: Date): boolean {
  const access = Date.parse(String(credentials.expires_at ?? ""));
  const end = Math.max(Date.parse(row.credentials_expire_at), Number.isFinite(access) ? access : -Infinity);
  return end <= now.getTime();
}

async function refreshOne(ctx: AppContext, row: Claimed): Promise<void> {
  const log = ctx.log.child({ component: "token-refresh", account_id: row.id, platform: row.platform });
  const account: HostedAccount = {
    id: row.id,
    profileId: row.profile_id,
    platform: row.platform,
    remoteId: row.remote_id,
    username: row.username,
    metadata: row.metadata,
    credentials: row.credentials,
  };
  let next: Date | null;
  let credentials: Record<string, unknown> = {};
  try {
    const { plugin, context } = providerFor(ctx, account, { sandbox: row.sandbox });
    credentials = context.credentials;
    await plugin.refresh!(context);
    // The saved credentials set the new end; one still inside the window is not tried again at once.
    const [after] = await ctx.db.rows<{ end: string | null }>(
      sql`select credentials_expire_at::text as end from accounts where id = ${row.id}`,
    );
    const now = ctx.clock.now().getTime();
    const end = after?.end ? Date.parse(after.end) : null;
    next = end !== null && end - now <= REFRESH_WINDOW_MS ? new Date(now + STILL_DUE_AFTER_MS) : null;
    log.info("token refreshed ahead of its end", { ends_at: after?.end ?? null });
  } catch (e) {
    if (!(e instanceof RefreshError) || e.retryable) {
      log.warn("token refresh could not reach the platform; trying again later", errorFields(e));
      next = new Date(ctx.clock.now().getTime() + RETRY_AFTER_MS);
    } else if (!ended(row, credentials, ctx.clock.now())) {
      // Refused while what is stored still works (an access token outliving its refresh token, a token
      // the platform will not renew yet): publishing goes on, and the job asks again a day later.
      log.warn("token refresh refused while the token still works; trying again later", errorFields(e));
      next = new Date(ctx.clock.now().getTime() + STILL_DUE_AFTER_MS);
    } else {
      // Refused after the end: nothing brings the token back, only the user can give a new one. The
      // status change fires the account webhook (account.auth_required), as a refusal while publishing does.
      log.warn("token refresh refused; the account must be reconnected", errorFields(e));
      await ctx.db.rows(sql`
        update accounts set status = 'auth_required', credentials_refresh_after = null,
          updated_at = ${ctx.clock.now().toISOString()}::timestamptz
        where id = ${row.id} and status = 'active'
        returning id`);
      return;
    }
  }
  await ctx.db.rows(sql`
    update accounts set credentials_refresh_after = ${next?.toISOString() ?? null}::timestamptz
    where id = ${row.id}
    returning id`);
}
