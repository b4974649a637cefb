/**
 * `crier mcp`: the MCP server over stdio for desktop clients. It forwards every tool to a Crier server's
 * /mcp (CRIER_URL, with CRIER_API_KEY), so tools, scopes and errors are that server's, and adds the tools
 * that need files on this machine.
 */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import pkg from "../../package.json" with { type: "json" };
import { contentTypeForExtension } from "../storage/keys.ts";
import { createMcpServer, errorResult, okResult } from "./server.ts";

export class McpConfigError extends Error {}

interface Remote {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
}

const PATHS = {
  type: "array",
  minItems: 1,
  items: { type: "string", description: "An absolute path of an image or video file on this computer." },
};

/** Uploads a local file through an upload ticket (create_upload_url, PUT, get_media); the media or an error result. */
async function uploadPath(
  remote: Remote,
  path: string,
): Promise<{ media?: Record<string, unknown>; error?: CallToolResult }> {
  const contentType = contentTypeForExtension(extname(path).slice(1));
  if (!contentType)
    return {
      error: errorResult({
        code: "invalid_content_type",
        message: `${path}: the extension is not one of an image or video type Crier takes.`,
        hint: "Use a .jpg, .png, .webp, .gif, .mp4, .mov or .webm file.",
      }),
    };
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (e) {
    return { error: errorResult({ code: "file_not_readable", message: `${path}: ${(e as Error).message}` }) };
  }
  const ticket = await remote.call("create_upload_url", { filename: basename(path), content_type: contentType });
  if (ticket.isError) return { error: ticket };
  const data = (ticket.structuredContent as { data: { media_id: string; upload: { signedUrl: string } } }).data;
  const put = await fetch(data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": contentType },
    body: bytes,
  });
  if (!put.ok) {
    const body = (await put.json().catch(() => null)) as {
      error?: { code: string; message: string; hint?: string };
    } | null;
    return {
      error: errorResult(body?.error ?? { code: "upload_failed", message: `The upload answered HTTP ${put.status}.` }),
    };
  }
  const media = await remote.call("get_media", { id: data.media_id });
  if (media.isError) return { error: media };
  return { media: (media.structuredContent as { data: Record<string, unknown> }).data };
}

async function uploadAll(remote: Remote, paths: string[]) {
  const media: { url: string }[] = [];
  for (const path of paths) {
    const up = await uploadPath(remote, path);
    if (up.error) return { error: up.error };
    media.push({ url: up.media!.public_url as string });
  }
  return { media };
}

/** The local tools, shaped after the server's own create_post where they create posts. */
function localTools(remoteTools: McpTool[]) {
  const has = (name: string) => remoteTools.some((t) => t.name === name);
  const createPost = remoteTools.find((t) => t.name === "create_post");
  const tools: { tool: McpTool; run(remote: Remote, args: Record<string, unknown>): Promise<CallToolResult> }[] = [];
  if (!has("create_upload_url") || !has("get_media")) return tools;
  tools.push({
    tool: {
      name: "upload_media_from_path",
      description:
        "Uploads an image or video file from this computer to Crier and returns the media with its public_url for posts.",
      inputSchema: {
        type: "object",
        properties: { path: PATHS.items },
        required: ["path"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async run(remote, args) {
      const up = await uploadPath(remote, String(args.path ?? ""));
      return up.error ?? okResult(`Uploaded ${args.path}: ${up.media!.public_url}`, { data: up.media });
    },
  });
  if (!createPost) return tools;
  const { media: _media, ...postProps } = createPost.inputSchema.properties as Record<string, unknown>;
  tools.push({
    tool: {
      name: "create_media_post_from_path",
      description:
        "Uploads files from this computer and publishes them in one post (now, or at publish_at), as create_post does. Public and cannot be undone; validate_post first.",
      inputSchema: {
        type: "object",
        properties: { paths: PATHS, ...postProps },
        required: ["paths", ...(createPost.inputSchema.required ?? [])],
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async run(remote, args) {
      const { paths, ...post } = args;
      const up = await uploadAll(remote, Array.isArray(paths) ? paths.map(String) : []);
      return up.error ?? remote.call("create_post", { ...post, media: up.media });
    },
  });
  tools.push({
    tool: {
      name: "create_tiktok_draft_from_path",
      description:
        "Uploads a video from this computer to a TikTok account's inbox as a draft (publish_mode draft): the creator finishes and posts it in the TikTok app.",
      inputSchema: {
        type: "object",
        properties: {
          path: PATHS.items,
          account_id: { type: "string", description: "A connected TikTok account of this profile." },
          content: { type: "string", description: "The caption." },
          idempotency_key: postProps.idempotency_key as object,
        },
        required: ["path", "account_id"],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    },
    async run(remote, args) {
      const up = await uploadAll(remote, [String(args.path ?? "")]);
      if (up.error) return up.error;
      return remote.call("create_post", {
        content: args.content ?? "",
        media: up.media,
        targets: [{ account_id: args.account_id, platform_options: { publish_mode: "draft" } }],
        ...(args.idempotency_key !== undefined && { idempotency_key: args.idempotency_key }),
      });
    },
  });
  return tools;
}

/** Runs until stdin closes. */
export async function runStdioServer(env: Record<string, string | undefined>): Promise<void> {
  const base = env.CRIER_URL?.replace(/\/+$/, "");
  const key = env.CRIER_API_KEY;
  if (!base || !key)
    throw new McpConfigError(
      "crier mcp needs CRIER_URL (the Crier server, e.g. http://127.0.0.1:8080) and CRIER_API_KEY",
    );
  const client = new Client({ name: "crier-mcp-stdio", version: pkg.version });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  const remote: Remote = {
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
  };
  let local: ReturnType<typeof localTools> = [];
  const server = createMcpServer({
    async list() {
      const tools = (await client.listTools()).tools;
      local = localTools(tools);
      return [...tools, ...local.map((l) => l.tool)];
    },
    async invoke(name, args) {
      if (!local.length) local = localTools((await client.listTools()).tools);
      const own = local.find((l) => l.tool.name === name);
      return own ? own.run(remote, args) : remote.call(name, args);
    },
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  process.stdin.on("end", () => void server.close());
  await closed;
  await client.close();
}
