import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import type { AppContext } from "./context.ts";
import { envelope } from "./http/envelope.ts";
import { SCOPES } from "./http/scopes.ts";
import { finishDescription } from "./http/openapi-finish.ts";
import { accountsRoutes } from "./modules/accounts/routes.ts";
import { analyticsRoutes } from "./modules/analytics/routes.ts";
import { connectRoutes, hostedConnectRoutes } from "./modules/connect/routes.ts";
import { sandboxApiRoutes, sandboxRoutes } from "./modules/sandbox/routes.ts";
import { draftsRoutes } from "./modules/drafts/routes.ts";
import { mediaRoutes } from "./modules/media/routes.ts";
import { postsRoutes } from "./modules/posts/routes.ts";
import { bulkPostsRoutes } from "./modules/posts/bulk-routes.ts";
import { seriesRoutes } from "./modules/series/routes.ts";
import { queuesRoutes } from "./modules/queues/routes.ts";
import { workflowsRoutes } from "./modules/workflows/routes.ts";
import { usersRoutes } from "./modules/users/routes.ts";
import { dashboardRoutes } from "./web/serve.ts";
import { webhooksRoutes } from "./modules/webhooks/routes.ts";
import { describeWebhookEvents } from "./modules/webhooks/openapi.ts";
import { docsAssets, DOCS_ASSETS } from "./modules/system/docs.ts";
import { healthRoutes } from "./modules/system/health.ts";
import { type AppSelf, mcpRoutes } from "./mcp/http.ts";
import pkg from "../package.json" with { type: "json" };

const API_DESCRIPTION = `Crier publishes one piece of content to social accounts on 15 platforms, now or later.

Every /v1 route needs \`Authorization: Bearer <API_KEY>\` (create keys in the dashboard or with \`crier keys create\`)
and one scope, shown on each route as x-scope. The dashboard calls the same routes with its session cookie and
an X-CSRF-Token header (every scope, on the session's profile). Errors are always \`{ "error": { "code", "message", "hint" } }\`.

Decisions where the public spec is silent: unknown, foreign or malformed ids are 404 not_found; schema
failures are 400 validation_error naming the field, what was wrong and what is allowed; conflicts are 409
with their own code; bodies over MAX_BODY_BYTES are 413 payload_too_large; a /v1 body sent with another
Content-Type than application/json (or text/csv, which POST /v1/posts/bulk also takes) is 415 unsupported_media_type; a method the path does not have is 405
method_not_allowed with an Allow header. Paged lists are most recently updated first, with limit (1..100),
after and after_id; accounts are listed in the order they were first connected.

Rate limits: each key (or dashboard session) may make RATE_LIMIT_PER_MINUTE requests a minute, as a bucket that
refills evenly. Every authenticated answer carries the RateLimit-Policy and RateLimit header fields of the IETF
httpapi draft (\`"default";q=<per minute>;w=60\` and \`"default";r=<remaining>;t=<seconds until whole>\`); over it, 429
rate_limited with Retry-After.

Scopes: ${SCOPES.join(", ")}.`;

/** The version of the public API this server speaks, as the spec's description carries it. */
export const API_VERSION = "1.0.0-alpha";

/** Composes the whole HTTP surface. Tests drive it with app.handle(); src/server.ts listens with it. */
export function createApp(ctx: AppContext) {
  const self: AppSelf & { routes: { method: string; path: string }[]; description?: unknown } = {
    routes: [],
    handle: () => Promise.reject(new Error("app not built")),
    buildRoutes: () => {},
  };
  // Elysia builds a route's handler and validators on its first request and, doing so, writes defaults
  // (additionalProperties: false) into the TypeBox schemas the description and the MCP tools are made
  // from. Building every route at start (precompile) kept ≈ 15 MB of idle memory for routes a copy may
  // never serve; instead all are built just before the first description or tool list is read, which
  // makes both the same whatever was called before them.
  // encodeSchema off: a response schema holding elysia's t.Integer (a transform, for numeric strings in
  // queries) was run through TypeBox's interpreted Value.Encode on every answer, about 6 % of a POST's CPU;
  // without it the compiled Check still validates every answer, and no response type encodes anything.
  let built = false;
  const app = new Elysia({ normalize: false, encodeSchema: false })
    .onRequest(({ request }) => {
      if (!built && request.url.endsWith("/openapi.json")) self.buildRoutes();
    })
    .use(envelope(ctx, () => self.routes))
    // Registered before the OpenAPI plugin so it applies to the /openapi.json route.
    .onAfterHandle({ as: "global" }, ({ path, response }) => {
      if (path !== "/openapi.json") return undefined;
      // Webhook payloads join before the named schemas are hoisted, so they are components too.
      const generated = describeWebhookEvents(JSON.parse(JSON.stringify(response)));
      self.description ??= finishDescription(generated, self.routes as never, ctx.platforms.list());
      return self.description;
    })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        provider: "swagger-ui",
        // An absolute url, so the page loads the description from /docs/ as well as from /docs.
        swagger: {
          cdn: DOCS_ASSETS.bundle,
          theme: DOCS_ASSETS.css,
          autoDarkMode: false,
          url: "/openapi.json",
        } as never,
        documentation: {
          info: {
            title: "Crier API",
            version: API_VERSION,
            description: API_DESCRIPTION,
            license: { name: "MIT", identifier: "MIT" },
            "x-crier-version": pkg.version,
          } as never,
          servers: [{ url: ctx.config.publicUrl, description: "This server (PUBLIC_URL)." }],
          components: {
            securitySchemes: {
              bearer: { type: "http", scheme: "bearer", description: "An API key from `crier keys create`." },
            },
          },
        },
        exclude: { paths: [DOCS_ASSETS.bundle, DOCS_ASSETS.css] },
      }),
    )
    .use(docsAssets())
    .use(healthRoutes(ctx))
    .use(sandboxRoutes(ctx))
    .use(accountsRoutes(ctx))
    .use(queuesRoutes(ctx))
    .use(connectRoutes(ctx))
    .use(hostedConnectRoutes(ctx))
    .use(draftsRoutes(ctx))
    .use(mediaRoutes(ctx))
    .use(postsRoutes(ctx))
    .use(bulkPostsRoutes(ctx))
    .use(seriesRoutes(ctx))
    .use(analyticsRoutes(ctx))
    .use(workflowsRoutes(ctx))
    .use(webhooksRoutes(ctx))
    .use(sandboxApiRoutes(ctx))
    .use(mcpRoutes(ctx, self))
    .use(usersRoutes(ctx))
    .use(dashboardRoutes(ctx));
  self.routes = app.routes;
  self.handle = (request) => app.handle(request);
  self.buildRoutes = () => {
    built = true;
    for (const route of app.routes as { compile?: () => unknown }[]) route.compile?.();
  };
  return app;
}

export type App = ReturnType<typeof createApp>;
