/** Runs a tool as a REST request and turns the answer into an MCP result. */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { requestFor, type Tool } from "./catalog.ts";
import { errorResult, okResult } from "./server.ts";

/** Sends one REST request with the caller's key (in process with app.handle, or over HTTP). */
export type Send = (req: {
  method: string;
  path: string;
  body?: unknown;
  headers: Record<string, string>;
}) => Promise<Response>;

function defaultSummary(tool: Tool, json: { data?: unknown; meta?: { next_after?: unknown } }): string {
  const data = json.data as Record<string, unknown> | unknown[] | undefined;
  if (Array.isArray(data))
    return `${data.length} result(s)${json.meta?.next_after ? "; more exist: pass meta.next_after and meta.next_after_id as after and after_id" : ""}.`;
  if (data && typeof data === "object") {
    const facts = ["id", "media_id", "status", "public_url"]
      .filter((k) => typeof data[k] === "string")
      .map((k) => `${k} ${data[k]}`);
    return `${tool.decl.name} succeeded${facts.length ? `: ${facts.join(", ")}` : ""}.`;
  }
  return `${tool.decl.name} succeeded.`;
}

export async function invokeTool(tool: Tool, args: Record<string, unknown>, send: Send): Promise<CallToolResult> {
  const missing = tool.inputSchema.required?.filter((k) => args[k] === undefined || args[k] === null) ?? [];
  if (missing.length)
    return errorResult({
      code: "validation_error",
      message: `${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} required.`,
      hint: `See the input schema of ${tool.decl.name}.`,
    });
  if (tool.decl.onLimit && args.on_limit !== undefined && args.on_limit !== "fit" && args.on_limit !== "reject")
    return errorResult({
      code: "validation_error",
      message: `on_limit must be fit or reject, got ${JSON.stringify(args.on_limit)}.`,
      hint: "Leave on_limit out to fit the post to each platform, or pass reject to be told what does not fit.",
    });
  const req = requestFor(tool, args);
  const headers: Record<string, string> = {};
  if (tool.decl.onLimit && (args.on_limit ?? "fit") === "fit") headers.prefer = "handling=lenient";
  if (req.body !== undefined) headers["content-type"] = "application/json";
  if (typeof args.idempotency_key === "string" && tool.routeIdempotent)
    headers["idempotency-key"] = args.idempotency_key;
  const res = await send({ ...req, headers });
  const text = await res.text();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text);
  } catch {
    return errorResult({ code: "internal_error", message: `The API answered HTTP ${res.status} without JSON.` });
  }
  if (!res.ok) return errorResult(json.error as { code: string; message: string; hint?: string });
  if (tool.decl.filter) json = { ...json, data: tool.decl.filter(json.data) };
  return okResult(tool.decl.summary?.(json.data) ?? defaultSummary(tool, json), json);
}
