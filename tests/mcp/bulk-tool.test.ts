/**
 * The bulk_create_posts MCP tool over Streamable HTTP: the JSON form of POST /v1/posts/bulk, with a dry run
 * that creates nothing and an import that creates each post once however often the agent sends it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listeningHarness, type ListeningHarness } from "../support/connect-kit.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";

let h: ListeningHarness;
let client: Client;
let bsky: string;

beforeAll(async () => {
  h = await listeningHarness();
  const { token, profileId } = await h.profile();
  bsky = await storedBlueskyAccount(h.ctx, profileId, "agent");
  client = new Client({ name: "test-agent", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
});
afterAll(async () => {
  await client.close();
  await h.stop();
});

const call = async (args: Record<string, unknown>) =>
  (await client.callTool({ name: "bulk_create_posts", arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: { type: string; text: string }[];
  };

test("bulk_create_posts takes posts and dry_run; the dry run names bad rows, the import creates each post once", async () => {
  const tool = (await client.listTools()).tools.find((t) => t.name === "bulk_create_posts")!;
  expect(Object.keys(tool.inputSchema.properties!).sort()).toEqual(["dry_run", "idempotency_key", "on_limit", "posts"]);
  const at = new Date(Date.now() + 86_400_000).toISOString();
  const posts = [
    { content: "agent one", publish_at: at, targets: [{ account_id: bsky }] },
    { content: "agent two", publish_at: at, targets: [{ account_id: crypto.randomUUID() }] },
  ];
  const dry = await call({ posts, dry_run: true });
  expect(dry.isError).toBeFalsy();
  expect(dry.content[0].text).toContain("1 of 2 post(s) can be created");
  expect(dry.structuredContent.data.rows[1]).toMatchObject({ row: 2, ok: false });
  expect(dry.structuredContent.data.rows[1].problems[0].code).toBe("target_account_not_found");

  const first = await call({ posts: [posts[0]], idempotency_key: "agent-batch" });
  expect(first.structuredContent.data).toMatchObject({ created: 1, failed: 0 });
  const again = await call({ posts: [posts[0]], idempotency_key: "agent-batch" });
  expect(again.structuredContent.data).toMatchObject({ created: 0, replayed: 1 });
  expect(again.structuredContent.data.rows[0].post_id).toBe(first.structuredContent.data.rows[0].post_id);
});
