/**
 * What Meta's Graph APIs (Facebook, Instagram, Threads) share: the error body
 * `{error:{message, type, code, error_subcode}}` and what its codes mean for an attempt, and the
 * container publishing, insights and long-lived tokens of Instagram and Threads.
 */
import {
  RefreshError,
  type ConnectContext,
  type Credentials,
  type FailureOutcome,
  type Outcome,
  type PluginContext,
  type ProviderResponse,
} from "./sdk.ts";
import { bearerAuth, connectCall, tokenCredentials, type TokenResponse } from "./oauth.ts";

interface GraphError {
  message?: string;
  type?: string;
  code?: number;
  error_subcode?: number;
  error_user_msg?: string;
  is_transient?: boolean;
}

// Throttling codes: application, user and page request limits, and the newer business-use-case one.
const THROTTLED = new Set([4, 17, 32, 613, 80001, 80002, 80004]);

export function classifyGraph(res: ProviderResponse): FailureOutcome | undefined {
  const err = (res.body as { error?: GraphError } | null)?.error;
  if (!err || typeof err.code !== "number") return undefined;
  const reason = err.error_user_msg ?? err.message ?? `Graph error ${err.code}`;
  if (err.code === 190 || err.code === 102) return { kind: "auth_expired", reason };
  if (THROTTLED.has(err.code))
    return { kind: "retryable", reason: `rate limited: ${reason}`, retryAfterMs: 10 * 60_000 };
  // Codes 1 and 2 are Graph's "unknown" and "service" errors; Instagram's -1 and -2 (server error, media
  // download timeout) say "Try again", and Meta marks any error worth retrying is_transient
  // (developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/error-codes and Graph
  // API "Handling Errors", checked 2026-11-26).
  // On the creating call (media_publish, a Page post) a passing error does not prove nothing was made.
  if (err.code === 1 || err.code === 2 || err.code === -1 || err.code === -2 || err.is_transient === true)
    return res.creates
      ? { kind: "unknown", reason: `platform error after the creating call was sent: ${reason}` }
      : { kind: "retryable", reason };
  if (res.status >= 500) return undefined;
  return { kind: "permanent", reason, code: String(err.error_subcode ?? err.code) };
}

/** Creates a media container at the platform's edge (`/v23.0/me/media`, `/v1.0/me/threads`): its id, or why not. */
export async function createContainer(
  ctx: PluginContext,
  edge: string,
  fields: Record<string, string>,
): Promise<string | FailureOutcome> {
  const res = await ctx.http.request<{ id: string }>("POST", edge, { form: fields, headers: bearerAuth(ctx) });
  return res.ok ? res.body.id : res.outcome;
}

/** A carousel container: one container per item (marked as a carousel item), then the carousel over them. */
export async function createCarousel(
  ctx: PluginContext,
  edge: string,
  items: Record<string, string>[],
  fields: Record<string, string>,
): Promise<string | FailureOutcome> {
  const children: string[] = [];
  for (const item of items) {
    const child = await createContainer(ctx, edge, { ...item, is_carousel_item: "true" });
    if (typeof child !== "string") return child;
    children.push(child);
  }
  return createContainer(ctx, edge, { media_type: "CAROUSEL", children: children.join(","), ...fields });
}

/**
 * The last step of Meta's container publishing (Instagram, Threads): publish a container the platform
 * has finished preparing (the creating call), then read the new post's permalink.
 */
export async function publishContainer(
  ctx: PluginContext,
  publishPath: string,
  creationId: string,
  version: string,
): Promise<Outcome> {
  const res = await ctx.http.request<{ id: string }>("POST", publishPath, {
    form: { creation_id: creationId },
    headers: bearerAuth(ctx),
    creates: true,
  });
  if (!res.ok) return res.outcome;
  const link = await ctx.http.request<{ permalink?: string }>("GET", `${version}/${res.body.id}`, {
    query: { fields: "permalink" },
    headers: bearerAuth(ctx),
  });
  return { kind: "published", platformPostId: res.body.id, url: link.ok ? (link.body.permalink ?? null) : null };
}

/**
 * A comment on a Graph object (`POST /{object-id}/comments` with `message`): a Facebook Page post or an
 * Instagram media, the one call that creates it. Its id, or why not (a 5xx or a timeout is `unknown`).
 */
export async function createGraphComment(
  ctx: PluginContext,
  edge: string,
  message: string,
  headers: Record<string, string>,
): Promise<string | FailureOutcome> {
  const res = await ctx.http.request<{ id?: string }>("POST", edge, { form: { message }, headers, creates: true });
  if (!res.ok) return res.outcome;
  return res.body.id ?? { kind: "unknown", reason: "the platform took the comment but named no comment id" };
}

/** A container already published by an earlier attempt must never be published again. */
export const alreadyPublished: FailureOutcome = {
  kind: "permanent",
  reason: "This container was already published by an earlier attempt.",
  code: "already_published",
};

/**
 * Refreshes a long-lived Instagram or Threads token (GET /refresh_access_token with the platform's
 * grant type) and saves it. A refusal means the user must reconnect; anything else is worth retrying.
 */
export async function refreshLongLivedToken(ctx: PluginContext, grantType: string, name: string): Promise<Credentials> {
  const res = await ctx.http.request<TokenResponse>("GET", "/refresh_access_token", {
    query: { grant_type: grantType, access_token: String(ctx.credentials.access_token) },
  });
  if (!res.ok) {
    if (res.outcome.kind === "retryable" || res.outcome.kind === "unknown")
      throw new RefreshError(`${name} could not refresh the token now: ${res.outcome.reason}`, true);
    throw new RefreshError(
      `${name} refused to refresh the token (reconnect the account): ${res.outcome.reason}`,
      false,
    );
  }
  const next = tokenCredentials(res.body, ctx.now());
  await ctx.saveCredentials(next);
  return next;
}

/** The one-hour token of Instagram's or Threads' code exchange, traded for the 60-day one (GET /access_token). */
export function longLivedToken(c: ConnectContext, grantType: string, token: TokenResponse): Promise<TokenResponse> {
  return connectCall<TokenResponse>(c, "Getting a long-lived token", "GET", "/access_token", {
    query: { grant_type: grantType, client_secret: c.settings.CLIENT_SECRET, access_token: token.access_token },
  });
}

/** A post's insights (GET /{id}/insights): each metric's value as the platform reports it, null where it has none. */
export async function readInsights(
  ctx: PluginContext,
  version: string,
  id: string,
  metrics: string[],
  name: string,
): Promise<(metric: string) => number | null> {
  const res = await ctx.http.request<{
    data: { name: string; values?: { value: number }[]; total_value?: { value: number } }[];
  }>("GET", `${version}/${id}/insights`, {
    query: { metric: metrics.join(",") },
    headers: bearerAuth(ctx),
  });
  if (!res.ok) throw new Error(`${name} insights ${id}: ${res.outcome.reason}`);
  return (metric) => {
    const m = res.body.data.find((d) => d.name === metric);
    return m ? (m.total_value?.value ?? m.values?.[0]?.value ?? null) : null;
  };
}
