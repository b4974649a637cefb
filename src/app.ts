import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import type { AppContext } from "./context.ts";
import { envelope } from "./http/envelope.ts";
import { SCOPES } from "./http/scopes.ts";
import { finishOpenApi } from "./http/openapi-finish.ts";
import { describePlatformOptions } from "./http/openapi-platforms.ts";
import { accountsRoutes } from "./modules/accounts/routes.ts";
import { analyticsRoutes } from "./modules/analytics/routes.ts";
import { connectRoutes, hostedConnectRoutes } from "./modules/connect/routes.ts";
import { sandboxRoutes } from "./modules/sandbox/routes.ts";
import { draftsRoutes } from "./modules/drafts/routes.ts";
import { mediaRoutes } from "./modules/media/routes.ts";
import { postsRoutes } from "./modules/posts/routes.ts";
import { workflowsRoutes } from "./modules/workflows/routes.ts";
import { docsAssets, DOCS_ASSETS } from "./modules/system/docs.ts";
import { healthRoutes } from "./modules/system/health.ts";
import { type AppSelf, mcpRoutes } from "./mcp/http.ts";
import pkg from "../package.json" with { type: "json" };

const API_DESCRIPTION = `Crier publishes one piece of content to social accounts on 15 platforms, now or later.

Every /v1 route needs \`Authorization: Bearer <API_KEY>\` (create keys with \`crier keys create\`) and one
scope, shown on each route as x-scope. Errors are always \`{ "error": { "code", "message", "hint" } }\`.

Decisions where the public spec is silent: unknown or foreign ids are 404 not_found; schema failures are
400 validation_error naming the field; conflicts are 409 with their own code; bodies over MAX_BODY_BYTES
are 413 payload_too_large. Lists page newest first with limit (1..100), after and after_id.

Scopes: ${SCOPES.join(", ")}.`;

/** Composes the whole HTTP surface. Tests drive it with app.handle(); src/server.ts listens with it. */
export function createApp(ctx: AppContext) {
  const self: AppSelf = { routes: [], handle: () => Promise.reject(new Error("app not built")) };
  const app = new Elysia({ normalize: false })
    .use(envelope(ctx))
    // Registered before the OpenAPI plugin so it applies to the /openapi.json route.
    .onAfterHandle({ as: "global" }, ({ path, response }) =>
      path === "/openapi.json"
        ? // A copy: the generated document shares schema objects with the routes (and the MCP tools built
          // from them), which must not gain references that only resolve inside this document.
          describePlatformOptions(
            JSON.parse(JSON.stringify(finishOpenApi(response, self.routes as never))),
            ctx.platforms.list(),
          )
        : undefined,
    )
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        provider: "swagger-ui",
        swagger: { cdn: DOCS_ASSETS.bundle, theme: DOCS_ASSETS.css, autoDarkMode: false } as never,
        documentation: {
          info: { title: "Crier API", version: pkg.version, description: API_DESCRIPTION },
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
    .use(connectRoutes(ctx))
    .use(hostedConnectRoutes(ctx))
    .use(draftsRoutes(ctx))
    .use(mediaRoutes(ctx))
    .use(postsRoutes(ctx))
    .use(analyticsRoutes(ctx))
    .use(workflowsRoutes(ctx))
    .use(mcpRoutes(ctx, self));
  self.routes = app.routes;
  self.handle = (request) => app.handle(request);
  return app;
}

export type App = ReturnType<typeof createApp>;
