/**
 * What Meta's Graph APIs (Facebook, Instagram, Threads) share: the error body
 * `{error:{message, type, code, error_subcode}}` and what its codes mean for an attempt, and the
 * container publishing and token refresh of Instagram and Threads.
 */
import { RefreshError, type Credentials, type FailureOutcome, type Outcome, type PluginContext, type ProviderResponse } from "./sdk.ts";
import { bearerAuth, tokenCredentials, type TokenResponse } from "./oauth.ts";

interface GraphError { message?: string; type?: string; code?: number; error_subcode?: number; error_user_msg?: string }

// Throttling codes: application, user and page request limits, and the newer business-use-case one.
const THROTTLED = new Set([4, 17, 32, 613, 80001, 80002, 80004]);

export function classifyGraph(res: ProviderResponse): FailureOutcome | undefined {
  const err = (res.body as { error?: GraphError } | null)?.error;
  if (!err || typeof err.code !== "number") return undefined;
  const reason = err.error_user_msg ?? err.message ?? `Graph error ${err.code}`;
  if (err.code === 190 || err.code === 102) return { kind: "auth_expired", reason };
  if (THROTTLED.has(err.code)) return { kind: "retryable", reason: `rate limited: ${reason}`, retryAfterMs: 10 * 60_000 };
  if (err.code === 1 || err.code === 2) return { kind: "retryable", reason };
  if (res.status >= 500) return undefined;
  return { kind: "permanent", reason, code: String(err.error_subcode ?? err.code) };
}


/**
 * The last step of Meta's container publishing (Instagram, Threads): publish a container the platform
 * has finished preparing (the creating call), then read the new post's permalink.
 */
export async function publishContainer(ctx: PluginContext, publishPath: string, creationId: string, version: string): Promise<Outcome> {
  const res = await ctx.http.request<{ id: string }>("POST", publishPath, { form: { creation_id: creationId }, headers: bearerAuth(ctx), creates: true });
  if (!res.ok) return res.outcome;
  const link = await ctx.http.request<{ permalink?: string }>("GET", `${version}/${res.body.id}`, { query: { fields: "permalink" }, headers: bearerAuth(ctx) });
  return { kind: "published", platformPostId: res.body.id, url: link.ok ? link.body.permalink ?? null : null };
}

/** A container already published by an earlier attempt must never be published again. */
export const alreadyPublished: FailureOutcome = { kind: "permanent", reason: "This container was already published by an earlier attempt.", code: "already_published" };

/**
 * Refreshes a long-lived Instagram or Threads token (GET /refresh_access_token with the platform's
 * grant type) and saves it. A refusal means the user must reconnect; anything else is worth retrying.
 */
export async function refreshLongLivedToken(ctx: PluginContext, grantType: string, name: string): Promise<Credentials> {
  const res = await ctx.http.request<TokenResponse>("GET", "/refresh_access_token", {
    query: { grant_type: grantType, access_token: String(ctx.credentials.access_token) },
  });
  if (!res.ok) {
    if (res.outcome.kind === "retryable" || res.outcome.kind === "unknown") throw new RefreshError(`${name} could not refresh the token now: ${res.outcome.reason}`, true);
    throw new RefreshError(`${name} refused to refresh the token (reconnect the account): ${res.outcome.reason}`, false);
  }
  const next = tokenCredentials(res.body, ctx.now());
  await ctx.saveCredentials(next);
  return next;
}
