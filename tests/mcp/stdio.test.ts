/**
 * `crier mcp` spawned as a process, driven by the SDK's Client over stdio: it forwards to a running
 * server's /mcp (tools per scope, errors) and adds the tools that read local files.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Scope } from "../../src/http/scopes.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";
import { makePng } from "../support/media-fixtures.ts";

let h: ListeningHarness;
const dir = mkdtempSync(join(tmpdir(), "crier-mcp-"));
const png = makePng(5, 2);
const clients: Client[] = [];

async function spawn(key: string) {
  const c = new Client({ name: "desktop", version: "1.0.0" });
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(import.meta.dir, "../../src/main.ts"), "mcp"],
      env: { PATH: process.env.PATH ?? "", CRIER_URL: h.url, CRIER_API_KEY: key },
      stderr: "pipe",
    }),
  );
  clients.push(c);
  return c;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) =>
  (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };

beforeAll(async () => {
  h = await listeningHarness();
  writeFileSync(join(dir, "pic.png"), png);
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await h.stop();
});

test("lists the server's tools for the key plus the local file tools, and forwards errors", async () => {
  const { token } = await h.profile({ sandbox: true, scopes: ["posts:read"] as Scope[] });
  const c = await spawn(token);
  const names = (await c.listTools()).tools.map((t) => t.name);
  expect(names).toContain("list_posts");
  expect(names).not.toContain("create_post");
  expect(names).not.toContain("upload_media_from_path");
  const denied = await call(c, "create_post", { content: "x", targets: [{ account_id: crypto.randomUUID() }] });
  expect(denied.isError).toBe(true);
  expect(denied.structuredContent.error.code).toBe("missing_scope");
});

test("uploads a local file and posts it; connect gives the hosted URL", async () => {
  const { token } = await h.profile({ sandbox: true });
  const c = await spawn(token);
  const names = (await c.listTools()).tools.map((t) => t.name);
  for (const n of ["upload_media_from_path", "create_media_post_from_path", "create_tiktok_draft_from_path"])
    expect(names).toContain(n);

  const connect = await call(c, "connect_account", { platform: "bluesky" });
  expect((await submitHostedForm(connect.structuredContent.data.hosted_url)).html).toContain("Account connected");
  const account = (await call(c, "list_accounts")).structuredContent.data[0].id;

  const up = await call(c, "upload_media_from_path", { path: join(dir, "pic.png") });
  expect(up.structuredContent.data).toMatchObject({ content_type: "image/png", size: png.byteLength, width: 5 });
  const missing = await call(c, "upload_media_from_path", { path: join(dir, "nope.png") });
  expect(missing.structuredContent.error.code).toBe("file_not_readable");

  const post = await call(c, "create_media_post_from_path", {
    paths: [join(dir, "pic.png")],
    content: "from my desktop",
    targets: [{ account_id: account }],
    publish_at: new Date(Date.now() + 3600_000).toISOString(),
  });
  expect(post.isError).toBeFalsy();
  expect(post.structuredContent.data).toMatchObject({ status: "scheduled", content: "from my desktop" });
  expect(post.structuredContent.data.media).toHaveLength(1);
});
