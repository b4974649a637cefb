/**
 * /mcp: the MCP server over Streamable HTTP, stateless (a new server per request, no session), behind
 * the same bearer keys as /v1. Every tool call is a request to the app's own route with the caller's key.
 */
import { Elysia } from "elysia";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AppContext } from "../context.ts";
import { ApiError, Unauthorized } from "../http/errors.ts";
import { authenticate } from "../modules/keys/service.ts";
import { buildTools, type RouteInfo, type Tool } from "./catalog.ts";
import { oncePerKey } from "./idempotency.ts";
import { invokeTool } from "./invoke.ts";
import { createMcpServer, describeTool, unknownTool } from "./server.ts";

export interface AppSelf {
  routes: unknown[];
  handle(request: Request): Promise<Response>;
}

export function mcpRoutes(ctx: AppContext, app: AppSelf) {
  let tools: Tool[] | undefined;
  const allTools = () => (tools ??= buildTools(app.routes as RouteInfo[]));
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
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
      const principal = match ? await authenticate(ctx.db, match[1], ctx.clock.now()) : null;
      if (!principal) throw new Unauthorized();
      const bearer = match![1];
      const send = (r: { method: string; path: string; body?: unknown; headers: Record<string, string> }) =>
        app.handle(
          new Request(`http://localhost${r.path}`, {
            method: r.method,
            headers: { ...r.headers, authorization: `Bearer ${bearer}` },
            body: r.body === undefined ? undefined : JSON.stringify(r.body),
          }),
        );
      const server = createMcpServer({
        list: async () =>
          allTools()
            .filter((t) => principal.scopes.includes(t.scope as never))
            .map((t) => describeTool(t)),
        invoke: async (name, args) => {
          const tool = allTools().find((t) => t.decl.name === name);
          if (!tool) throw unknownTool(name);
          const key = args.idempotency_key;
          // Routes with Idempotency-Key of their own get it as the header (invokeTool); others are kept here.
          if (typeof key === "string" && tool.decl.kind !== "read" && !tool.routeIdempotent)
            return oncePerKey(ctx.db, { profileId: principal.profileId, tool: tool.decl.name, key }, args, () =>
              invokeTool(tool, args, send),
            );
          return invokeTool(tool, args, send);
        },
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      try {
        return await transport.handleRequest(request, { parsedBody: body });
      } finally {
        await server.close();
      }
    },
    { detail: { hide: true } },
  );
}
