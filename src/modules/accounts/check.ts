/**
 * `crier accounts check`: for each connected account, the platform's cheapest read (the plugin's
 * checkAccount, else accountStats, else fetchRecent), whether the token works and when it expires, the
 * granted scopes against the ones each capability needs, and whether the API version is served. What a
 * self-hoster needs to know before a real post goes out, without posting anything.
 */
import { and, asc, eq, ne } from "drizzle-orm";
import type { AppContext } from "../../context.ts";
import { accounts, profiles } from "../../db/schema.ts";
import { observedHttp } from "../../platform/host/observed-http.ts";
import { providerFor } from "../../platform/host/provider.ts";
import {
  RefreshError,
  SCOPED_CAPABILITIES,
  type AccountCheck,
  type Plugin,
  type PluginContext,
} from "../../platform/sdk.ts";

export interface AccountCheckRow {
  account_id: string;
  profile_id: string;
  platform: string;
  username: string;
  sandbox: boolean;
  /** valid: the read worked; refreshed: it worked after a refresh; refused: the platform refused the token. */
  token: "valid" | "refreshed" | "refused" | "unreachable" | "not_checked";
  /** When the stored access token expires (null when the platform does not say). */
  expires_at: string | null;
  /** The granted scopes (null when unknown) and, per capability, the scopes it needs that are missing. */
  scopes: { granted: string[] | null; missing: Partial<Record<string, string[]>> };
  api_version: { value: string; accepted: boolean; note?: string } | null;
  can_publish: boolean;
  /** What stands in the way, each a sentence saying what to do. */
  problems: string[];
}

type AccountRow = typeof accounts.$inferSelect;

/** Checks the connected accounts of one profile, or of every live profile (sandbox ones with includeSandbox). */
export async function checkAccounts(
  ctx: AppContext,
  opts: { profileId?: string; includeSandbox?: boolean } = {},
): Promise<AccountCheckRow[]> {
  const rows = await ctx.db.db
    .select({ account: accounts, sandbox: profiles.sandbox })
    .from(accounts)
    .innerJoin(profiles, eq(profiles.id, accounts.profileId))
    .where(
      and(
        ne(accounts.status, "disconnected"),
        opts.profileId ? eq(accounts.profileId, opts.profileId) : undefined,
        opts.profileId || opts.includeSandbox ? undefined : eq(profiles.sandbox, false),
      ),
    )
    .orderBy(asc(accounts.createdAt), asc(accounts.id));
  const out: AccountCheckRow[] = [];
  // One at a time: a check is a handful of calls, and platforms rate-limit bursts from one app.
  for (const row of rows) out.push(await checkOne(ctx, row.account, row.sandbox));
  return out;
}

export async function checkOne(ctx: AppContext, account: AccountRow, sandbox: boolean): Promise<AccountCheckRow> {
  const result: AccountCheckRow = {
    account_id: account.id,
    profile_id: account.profileId,
    platform: account.platform,
    username: account.username,
    sandbox,
    token: "not_checked",
    expires_at: null,
    scopes: { granted: null, missing: {} },
    api_version: null,
    can_publish: false,
    problems: [],
  };
  const plugin = ctx.platforms.get(account.platform);
  if (!plugin?.publish) {
    result.problems.push(`Crier cannot publish to ${account.platform} in this version.`);
    return result;
  }
  if (account.status === "auth_required" || !account.credentials) {
    result.token = "refused";
    result.problems.push(
      `The ${plugin.displayName} account needs to be connected again (POST /v1/accounts/connect/${account.platform}).`,
    );
    return result;
  }
  let provider: ReturnType<typeof providerFor>;
  try {
    provider = providerFor(ctx, account, { sandbox });
  } catch (e) {
    result.problems.push(`The stored credentials cannot be read: ${(e as Error).message}. Connect the account again.`);
    return result;
  }
  const { context } = provider;
  const obs = observedHttp(context.http);
  context.http = obs.http;
  const read = await readWithRefresh(plugin, context, obs);
  result.token = read.token;
  if (read.problem) result.problems.push(read.problem);
  const expires = Date.parse(String(context.credentials.expires_at ?? ""));
  if (Number.isFinite(expires)) result.expires_at = new Date(expires).toISOString();
  result.api_version = read.check?.apiVersion ?? null;
  if (result.api_version && !result.api_version.accepted)
    result.problems.push(
      `${plugin.displayName} no longer serves API version ${result.api_version.value}${result.api_version.note ? `: ${result.api_version.note}` : ""}.`,
    );
  result.scopes = scopeReport(plugin, read.check?.grantedScopes ?? storedScopes(context.credentials.scope));
  for (const [capability, missing] of Object.entries(result.scopes.missing))
    result.problems.push(
      `${capability} needs the scope(s) ${missing!.join(", ")}, which the token was not granted: connect the account again (the server asks for them) or ask the platform for access.`,
    );
  result.can_publish =
    (result.token === "valid" || result.token === "refreshed") &&
    !result.scopes.missing.publish &&
    (result.api_version?.accepted ?? true);
  return result;
}

type Observed = ReturnType<typeof observedHttp>;

/** The read, once more after a refresh when the platform says the token expired. */
async function readWithRefresh(
  plugin: Plugin,
  context: PluginContext,
  obs: Observed,
): Promise<{ token: AccountCheckRow["token"]; check?: AccountCheck; problem?: string }> {
  const first = await cheapestRead(plugin, context, obs);
  if (first.ok) return { token: "valid", check: first.check };
  if (first.kind === "auth_expired" && plugin.refresh) {
    try {
      await plugin.refresh(context);
    } catch (e) {
      const retryable = e instanceof RefreshError && e.retryable;
      return {
        token: retryable ? "unreachable" : "refused",
        problem: retryable
          ? `${plugin.displayName} could not be reached to refresh the token: ${(e as Error).message}. Try again later.`
          : `${plugin.displayName} refused to refresh the token: connect the account again.`,
      };
    }
    obs.reset();
    const second = await cheapestRead(plugin, context, obs);
    if (second.ok) return { token: "refreshed", check: second.check };
    return failure(plugin, second);
  }
  return failure(plugin, first);
}

function failure(plugin: Plugin, f: { kind: string; reason: string }) {
  if (f.kind === "auth_expired")
    return {
      token: "refused" as const,
      problem: `${plugin.displayName} refused the token: connect the account again.`,
    };
  if (f.kind === "not_checked") return { token: "not_checked" as const, problem: f.reason };
  if (f.kind === "permanent")
    return { token: "refused" as const, problem: `${plugin.displayName} refused the read: ${f.reason}` };
  return {
    token: "unreachable" as const,
    problem: `${plugin.displayName} could not be reached: ${f.reason}. Try again later.`,
  };
}

async function cheapestRead(
  plugin: Plugin,
  context: PluginContext,
  obs: Observed,
): Promise<{ ok: true; check: AccountCheck } | { ok: false; kind: string; reason: string }> {
  const read = plugin.checkAccount
    ? () => plugin.checkAccount!(context)
    : plugin.accountStats
      ? async () => (await plugin.accountStats!(context), {})
      : plugin.fetchRecent
        ? async () => (await plugin.fetchRecent!(context, new Date(context.now().getTime() - 3600_000)), {})
        : null;
  if (!read)
    return { ok: false, kind: "not_checked", reason: `${plugin.displayName} offers no read to check the token with.` };
  try {
    return { ok: true, check: await read() };
  } catch (e) {
    const seen = obs.lastFailure();
    return { ok: false, kind: seen?.kind ?? "retryable", reason: (e as Error).message };
  }
}

/** The scopes stored at connect: the token answer's `scope`, space- or comma-separated. */
function storedScopes(scope: unknown): string[] | null {
  if (typeof scope !== "string" || !scope.trim()) return null;
  return scope.split(/[\s,]+/).filter(Boolean);
}

function scopeReport(plugin: Plugin, granted: string[] | null): AccountCheckRow["scopes"] {
  const missing: AccountCheckRow["scopes"]["missing"] = {};
  // A first comment's scopes are declared with it (firstComment.scopes) where requiredScopes does not name them.
  const required = {
    ...(plugin.firstComment?.scopes && { first_comment: plugin.firstComment.scopes }),
    ...plugin.requiredScopes,
  };
  if (!granted || !Object.keys(required).length) return { granted, missing };
  const have = new Set(granted);
  for (const capability of SCOPED_CAPABILITIES) {
    const lacking = (required[capability] ?? []).filter((s) => !have.has(s));
    if (lacking.length) missing[capability] = lacking;
  }
  return { granted, missing };
}
