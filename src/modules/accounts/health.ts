/**
 * Account health for the dashboard and for clients: one account's `crier accounts check` facts on demand
 * (it calls the platform, so it is asked for per account, never for a whole list), and the accounts whose
 * scheduled posts will not go out unless they are connected again (a database read only, cheap enough
 * for every page load).
 */
import { and, eq, sql } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { accounts, profiles } from "../../db/schema.ts";
import { NotFound } from "../../http/errors.ts";
import { checkOne } from "./check.ts";
import type { AccountAtRisk, AccountCheck } from "./model.ts";

export async function checkAccount(ctx: AppContext, profileId: string, id: string): Promise<AccountCheck> {
  const [row] = await ctx.db.db
    .select({ account: accounts, sandbox: profiles.sandbox })
    .from(accounts)
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(and(eq(accounts.id, id), eq(accounts.profileId, profileId)));
  if (!row || ctx.config.platformsDisabled.includes(row.account.platform)) throw new NotFound("Account");
  if (row.account.status === "disconnected")
    return {
      account_id: row.account.id,
      platform: row.account.platform,
      username: row.account.username,
      token: "refused",
      expires_at: null,
      scopes: { granted: null, missing: {} },
      api_version: null,
      can_publish: false,
      problems: [`The account is disconnected: connect it again (POST /v1/accounts/connect/${row.account.platform}).`],
      checked_at: ctx.clock.now().toISOString(),
    };
  const r = await checkOne(ctx, row.account, row.sandbox);
  return {
    account_id: r.account_id,
    platform: r.platform,
    username: r.username,
    token: r.token,
    expires_at: r.expires_at,
    scopes: { granted: r.scopes.granted, missing: r.scopes.missing as Record<string, string[]> },
    api_version: r.api_version,
    can_publish: r.can_publish,
    problems: r.problems,
    checked_at: ctx.clock.now().toISOString(),
  };
}

interface AtRiskRow {
  id: string;
  platform: string;
  username: string;
  status: AccountAtRisk["status"];
  expire: string | null;
  first_due: string;
  scheduled: number | string;
}

/**
 * Accounts with scheduled targets that cannot publish them: not active now, or whose credentials end
 * before the first of them is due. Uses the (account_id, status) index of post_targets.
 */
export async function accountsAtRisk(ctx: AppContext, profileId: string): Promise<AccountAtRisk[]> {
  const rows = await ctx.db.rows<AtRiskRow>(sqlAtRisk(profileId));
  const off = ctx.config.platformsDisabled;
  return rows
    .filter((r) => !off.includes(r.platform))
    .map((r) => ({
      account_id: r.id,
      platform: r.platform,
      username: r.username,
      status: r.status,
      credentials_expire_at: r.expire ? new Date(r.expire).toISOString() : null,
      first_scheduled_at: new Date(r.first_due).toISOString(),
      scheduled_posts: Number(r.scheduled),
      reason: r.status === "active" ? "expires_before_due" : r.status,
    }));
}

const sqlAtRisk = (profileId: string) => sql`
  select a.id, a.platform, a.username, a.status, a.credentials_expire_at::text as expire,
         min(coalesce(t.scheduled_time, t.due_at))::text as first_due, count(distinct t.post_id) as scheduled
  from accounts a
  join post_targets t on t.account_id = a.id and t.status = 'scheduled'
  where a.profile_id = ${profileId}::uuid
  group by a.id
  having a.status <> 'active'
      or (a.credentials_expire_at is not null
          and a.credentials_expire_at < min(coalesce(t.scheduled_time, t.due_at)))
  order by min(coalesce(t.scheduled_time, t.due_at)), a.id`;
