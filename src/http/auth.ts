import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { authenticate, type Principal } from "../modules/keys/service.ts";
import { MissingScope, Unauthorized } from "./errors.ts";
import type { Scope } from "./scopes.ts";

export type { Principal };

/** Error responses every authenticated route can give; merged into each route's OpenAPI entry. */
const authResponses = {
  401: { description: "invalid_api_key: the key is missing, malformed, unknown, revoked or expired" },
  403: { description: "missing_scope: the key lacks the scope this route needs" },
};

/**
 * The `scope` macro: a route declares `{ scope: "posts:read" }` and gets `principal` (profile id and
 * scopes of the bearer key) or a 401/403 before its handler runs. The scope is also written into the
 * route's OpenAPI entry (x-scope and the description), so docs and enforcement share one source.
 */
export function auth(ctx: AppContext) {
  // Authentication runs at the transform stage, before schema validation, so a request without a
  // valid key is a 401 whatever its body; resolve then hands the principal to the handler, typed.
  const principals = new WeakMap<Request, Principal>();
  return new Elysia({ name: "auth" }).macro({
    scope: (scope: Scope) => ({
      detail: {
        security: [{ bearer: [] }],
        "x-scope": scope,
        responses: authResponses,
      } as Record<string, unknown>,
      async transform({ request, headers }) {
        const header = headers.authorization ?? "";
        const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
        if (!match) throw new Unauthorized(header ? "The Authorization header is not 'Bearer <API_KEY>'." : "No API key was sent.");
        const principal = await authenticate(ctx.db, match[1], ctx.clock.now());
        if (!principal) throw new Unauthorized("The API key is invalid, revoked or expired.");
        if (!principal.scopes.includes(scope)) throw new MissingScope(scope);
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
