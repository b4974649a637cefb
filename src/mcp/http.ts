/**
 * /mcp: the MCP server over Streamable HTTP, stateless (a new server per request, no session), behind
 * the same bearer keys as /v1. Every tool call is a request to the app's own route with the caller's key.
 */
import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { authenticateBearer } from "../http/auth.ts";
import { ApiError } from "../http/errors.ts";
import { limiterFor } from "../http/rate-limit.ts";
import { buildTools, type RouteInfo, type Tool } from "./catalog.ts";
import type { Send } from "./invoke.ts";

export interface AppSelf {
  routes: unknown[];
  handle(request: Request): Promise<Response>;
  /** Builds every route's validators, which settles the schemas the tools are made from (src/app.ts). */
  buildRoutes(): void;
}

export function mcpRoutes(ctx: AppContext, app: AppSelf) {
  let tools: Tool[] | undefined;
  const limiter = limiterFor(ctx);
  const allTools = () => {
    if (!tools) {
      app.buildRoutes();
      tools = buildTools(app.routes as RouteInfo[]);
    }
    return tools;
  };
  return new Elysia({ name: "mcp" }).all(
    "/mcp",
    async ({ request, body }) => {
      if (request.method !== "POST")
        throw new ApiError(
          405,
          "method_not_allowed",
          "This MCP server is stateless: send JSON-RPC with POST.",
          undefined,
          {
            allow: "POST",
          },
        );
      // The same budgets as /v1: invalid keys per client address, then the key's own rate limit.
      const principal = await authenticateBearer(ctx, request);
      limiter.take(principal.keyId, ctx.clock.now().getTime());
      const bearer = /^Bearer\s+(\S+)/i.exec(request.headers.get("authorization")!)![1];
      const send: Send = (r) =>
        app.handle(
          new Request(`http://localhost${r.path}`, {
            method: r.method,
            headers: { ...r.headers, authorization: `Bearer ${bearer}` },
            body: r.body === undefined ? undefined : JSON.stringify(r.body),
          }),
        );
      const { answerMcp } = await import("./hosted.ts");
      return answerMcp(ctx, { request, body, principal, tools: allTools, send });
    },
    { detail: { hide: true } },
  );
}
