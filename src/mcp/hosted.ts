/**
 * One /mcp request: a new MCP server over the caller's tools, answered and closed (stateless). Apart from
 * src/mcp/http.ts so the MCP SDK (and the zod schemas it builds when imported) is loaded on the first
 * /mcp request instead of at start: a copy nobody reaches through MCP never pays for it (≈ 9 MB idle).
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AppContext } from "../context.ts";
import type { Principal } from "../modules/keys/service.ts";
import type { Tool } from "./catalog.ts";
import { oncePerKey } from "./idempotency.ts";
import { invokeTool, type Send } from "./invoke.ts";
import { createMcpServer, describeTool, unknownTool } from "./server.ts";

export interface HostedCall {
  request: Request;
  body: unknown;
  principal: Principal;
  /** The app's tools (all scopes). */
  tools: () => Tool[];
  /** Sends a tool's request to the app's own route with the caller's key. */
  send: Send;
}

export async function answerMcp(ctx: AppContext, { request, body, principal, tools, send }: HostedCall) {
  const server = createMcpServer({
    list: async () =>
      tools()
        .filter((t) => principal.scopes.includes(t.scope as never))
        .map((t) => describeTool(t)),
    invoke: async (name, args) => {
      const tool = tools().find((t) => t.decl.name === name);
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
}
