/**
 * The MCP server over a set of tools: tools/list shows the tools the key's scopes allow, tools/call runs
 * one through `invoke`. Built per request (hosted, stateless) or once (crier mcp over stdio).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import pkg from "../../package.json" with { type: "json" };
import type { Tool } from "./catalog.ts";

export const INSTRUCTIONS =
  "Crier publishes posts to social accounts. Find account ids with list_accounts; check a post with validate_post (free, changes nothing) before create_post, " +
  "which publishes publicly and cannot be undone; pass idempotency_key to mutating tools so a retry never acts twice. " +
  "To connect an account, call connect_account and give the user the URL to open in a browser: never ask for passwords or provider credentials in chat.";

/** How a tool appears in tools/list. */
export function describeTool(tool: Tool, summary?: string): McpTool {
  const read = tool.decl.kind === "read";
  return {
    name: tool.decl.name,
    description: summary ? `${tool.decl.description} (${summary}; scope ${tool.scope})` : tool.decl.description,
    inputSchema: tool.inputSchema as McpTool["inputSchema"],
    annotations: {
      readOnlyHint: read,
      destructiveHint: tool.decl.kind === "destructive",
      idempotentHint: read,
      openWorldHint: !read,
    },
  };
}

export interface McpServerOptions {
  /** The tools this caller may see (already filtered by scope). */
  list(): Promise<McpTool[]>;
  invoke(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

export function createMcpServer(opts: McpServerOptions): Server {
  const server = new Server(
    { name: "crier", version: pkg.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await opts.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (req) =>
    opts.invoke(req.params.name, req.params.arguments ?? {}),
  );
  return server;
}

export const unknownTool = (name: string) => new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);

/** An API error as an MCP tool error: the model reads code, message and hint; clients get them structured. */
export function errorResult(error: { code: string; message: string; hint?: string }): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: `${error.code}: ${error.message}${error.hint ? ` Hint: ${error.hint}` : ""}` },
      { type: "text", text: JSON.stringify({ error }) },
    ],
    structuredContent: { error },
  };
}

/** The API's JSON, with a one-line summary first for the model. */
export function okResult(summary: string, json: Record<string, unknown>): CallToolResult {
  return {
    content: [
      { type: "text", text: summary },
      { type: "text", text: JSON.stringify(json) },
    ],
    structuredContent: json,
  };
}
