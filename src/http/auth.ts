import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { authenticate, type Principal } from "../modules/keys/service.ts";
import { MissingScope, Unauthorized } from "./errors.ts";
import { clientAddress } from "./client-address.ts";
import { authFailureLimiterFor, limiterFor, rateLimitHeaders, type RateLimitState } from "./rate-limit.ts";
import { SCOPES, type Scope } from "./scopes.ts";
import { readCookie, requireSession, SESSION_COOKIE } from "./session.ts";

export type { Principal };

/**
 * The `scope` macro: a route declares `{ scope: "posts:read" }` and gets `principal` (profile id and
 * scopes of the bearer key), or a 401/403 (or 429 over the key's rate limit) before its handler runs.
 * Without an Authorization header, a dashboard session (cookie, Origin and CSRF token) stands for a key
 * with every scope on the session's current profile.
 * The scope is also written into the route's OpenAPI entry (x-scope, with 401/403/429 added by
 * openapi-finish.ts), so docs and enforcement share one source.
 */
export function auth(ctx: AppContext) {
  // Authentication runs at the transform stage, before schema validation, so a request without a
  // valid key is a 401 whatever its body; resolve then hands the principal to the handler, typed.
  const principals = new WeakMap<Request, Principal>();
  const limiter = limiterFor(ctx);
  return new Elysia({ name: "auth" }).macro({
    scope: (scope: Scope) => ({
      detail: {
        security: [{ bearer: [] }],
        "x-scope": scope,
      } as Record<string, unknown>,
      async transform({ request, headers, set }) {
        const header = headers.authorization ?? "";
        const report = (state: RateLimitState | null) => state && Object.assign(set.headers, rateLimitHeaders(state));
        if (!header && readCookie(request, SESSION_COOKIE)) {
          const session = await requireSession(ctx, request);
          report(limiter.take(`session:${session.id}`, ctx.clock.now().getTime()));
          principals.set(request, {
            keyId: `session:${session.id}`,
            profileId: session.profileId,
            sandbox: session.sandbox,
            scopes: [...SCOPES],
          });
          return;
        }
        const principal = await authenticateBearer(ctx, request);
        if (!principal.scopes.includes(scope)) throw new MissingScope(scope);
        report(limiter.take(principal.keyId, ctx.clock.now().getTime()));
        principals.set(request, principal);
      },
      resolve({ request }) {
        const principal = principals.get(request);
        if (!principal) throw new Unauthorized();
        return { principal };
      },
    }),
  });
}

/**
 * The principal of the request's bearer key, or 401. Each attempt is first taken from the client
 * address's budget of failures (MAX_AUTH_FAILURES_PER_MINUTE; 429 once spent) and given back when the
 * key is valid, so guessing keys or hammering with a revoked one is limited even in a burst, while
 * valid keys count only against their own limit. Requests made in-process (no network address) are
 * not counted.
 */
export async function authenticateBearer(ctx: AppContext, request: Request): Promise<Principal> {
  const address = clientAddress(request);
  const failures = address === "local" ? undefined : authFailureLimiterFor(ctx);
  const bucket = `addr:${address}`;
  failures?.take(bucket, ctx.clock.now().getTime());
  let principal: Principal | null = null;
  try {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match)
      throw new Unauthorized(header ? "The Authorization header is not 'Bearer <API_KEY>'." : "No API key was sent.");
    principal = await authenticate(ctx.db, match[1], ctx.clock.now());
    if (!principal) throw new Unauthorized("The API key is invalid, revoked or expired.");
    return principal;
  } catch (e) {
    // Only a refused key counts; a database outage is not the client's failure.
    if (!(e instanceof Unauthorized)) failures?.give(bucket);
    throw e;
  } finally {
    if (principal) failures?.give(bucket);
  }
}
