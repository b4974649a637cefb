/**
 * The MCP server at /mcp, driven by the SDK's own Client over real HTTP against a listening server, in a
 * sandbox profile: tools per scope, connect, uploads, validate, publish once, errors as the API's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { BlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import type { Scope } from "../../src/http/scopes.ts";
import { TOOLS } from "../../src/mcp/tools.ts";
import { listeningHarness, submitHostedForm, type ListeningHarness } from "../support/connect-kit.ts";
import { makePng } from "../support/media-fixtures.ts";

let h: ListeningHarness;
let engine: Engine;
let token: string;
let profileId: string;
let client: Client;
let bsky: string;
let files: ReturnType<typeof Bun.serve>;
const png = makePng(4, 3);

async function connectClient(key: string) {
  const c = new Client({ name: "test-agent", version: "1.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => {
  const res = (await c.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: { type: string; text: string }[];
  };
  return { ...res, json: res.structuredContent };
};

beforeAll(async () => {
  h = await listeningHarness();
  // Only this test's file server on 127.0.0.1 is let through the media guard.
  h.ctx.mediaFetchAllow = (ip) => ip === "127.0.0.1";
  engine = createEngine(h.ctx, { random: () => 0.5 });
  h.ctx.dispatch = engine;
  files = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === "/cat.png"
        ? new Response(png, { headers: { "content-type": "image/png" } })
        : new Response("no", { status: 404 }),
  });
  ({ token, profileId } = await h.profile({ sandbox: true }));
  client = await connectClient(token);
});
afterAll(async () => {
  await client.close();
  await engine.stop();
  files.stop(true);
  await h.stop();
});

describe("MCP over Streamable HTTP", () => {
  test("tools/list: every tool for a full key, only those its scopes allow otherwise, with annotations", async () => {
    const all = (await client.listTools()).tools;
    expect(all.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const byName = new Map(all.map((t) => [t.name, t]));
    expect(byName.get("list_posts")!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.get("delete_post")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.get("create_post")!.inputSchema.properties).toHaveProperty("idempotency_key");
    expect(byName.get("get_post")!.inputSchema.properties).not.toHaveProperty("idempotency_key");
    // A target's first comment comes through the route's schema, with its description.
    const targets = byName.get("create_post")!.inputSchema.properties!.targets as {
      items: { properties: Record<string, { description?: string }> };
    };
    expect(targets.items.properties.first_comment.description).toContain("right after");
    expect(byName.get("create_post")!.description).toContain("first_comment");

    const cases: [Scope[], string[]][] = [
      [
        ["posts:read"],
        [
          "get_analytics",
          "get_draft",
          "get_post",
          "get_post_analytics",
          "get_series",
          "get_target",
          "list_drafts",
          "list_posts",
          "list_series",
        ],
      ],
      // Refreshing analytics starts calls to every platform: it needs the write scope.
      [["posts:write"], expect.arrayContaining(["refresh_analytics", "create_post"]) as unknown as string[]],
      [
        ["accounts:read", "media:read"],
        [
          "check_account",
          "get_media",
          "get_queue",
          "list_accounts",
          "list_accounts_at_risk",
          "list_active_accounts",
          "list_media",
          "next_queue_slots",
        ],
      ],
    ];
    for (const [scopes, names] of cases) {
      const { token: key } = await h.profile({ scopes, sandbox: true });
      const c = await connectClient(key);
      expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(names);
      await c.close();
    }
  });

  test("a key without the scope gets the same missing_scope error as REST", async () => {
    const { token: key } = await h.profile({ scopes: ["posts:read"], sandbox: true });
    const c = await connectClient(key);
    const res = await call(c, "create_post", { content: "hi", targets: [{ account_id: crypto.randomUUID() }] });
    expect(res.isError).toBe(true);
    expect(res.json.error.code).toBe("missing_scope");
    expect(res.content[0].text).toContain("missing_scope");
    expect(res.json.error.hint).toContain("posts:write");
    await c.close();
  });

  test("a request without a valid key is 401 with the error envelope", async () => {
    const res = await fetch(`${h.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect((await res.json()).error.code).toBe("invalid_api_key");
  });

  test("connect_account returns the hosted URL and says never to paste credentials; the account then connects", async () => {
    const res = await call(client, "connect_account", { platform: "bluesky" });
    expect(res.isError).toBeFalsy();
    const url = res.json.data.hosted_url as string;
    expect(url.startsWith(`${h.url}/connect/bluesky`)).toBe(true);
    expect(res.content[0].text).toContain(url);
    expect(res.content[0].text).toMatch(/never ask for or accept passwords/i);
    expect((await submitHostedForm(url)).html).toContain("Account connected");
    const accounts = await call(client, "list_active_accounts");
    expect(accounts.json.data).toHaveLength(1);
    bsky = accounts.json.data[0].id;
  });

  test("upload_media_from_url stores the file like an upload; a refused address is a tool error", async () => {
    const res = await call(client, "upload_media_from_url", { url: `http://127.0.0.1:${files.port}/cat.png` });
    expect(res.isError).toBeFalsy();
    expect(res.json.data).toMatchObject({ content_type: "image/png", size: png.byteLength, width: 4, height: 3 });
    const stored = await fetch(res.json.data.public_url);
    expect(new Uint8Array(await stored.arrayBuffer())).toEqual(png);
    const again = await call(client, "get_media", { id: res.json.data.id });
    expect(again.json.data.public_url).toBe(res.json.data.public_url);

    const refused = await call(client, "upload_media_from_url", { url: "http://10.0.0.1/cat.png" });
    expect(refused.isError).toBe(true);
    expect(refused.json.error.code).toBe("media_fetch_failed");
  });

  test("upload_media_base64 stores small files; bad base64 is an error", async () => {
    const res = await call(client, "upload_media_base64", {
      filename: "dot.png",
      content_type: "image/png",
      data: Buffer.from(png).toString("base64"),
    });
    expect(res.json.data).toMatchObject({ content_type: "image/png", size: png.byteLength });
    const bad = await call(client, "upload_media_base64", { filename: "x.png", content_type: "image/png", data: "!!" });
    expect(bad.json.error.code).toBe("invalid_base64");
  });

  test("validate_post with on_limit reject lists every problem of a bad post and saves nothing", async () => {
    const res = await call(client, "validate_post", {
      content: "x".repeat(310),
      media: [{ url: "nope" }, ...Array.from({ length: 5 }, (_, i) => ({ url: `https://cdn.example.com/${i}.jpg` }))],
      targets: [{ account_id: bsky }],
      on_limit: "reject",
    });
    expect(res.isError).toBeFalsy();
    expect(res.json.data.ok).toBe(false);
    expect(res.json.data.problems.map((p: any) => p.code)).toEqual(["invalid_media"]);
    expect(res.json.data.targets[0].problems.map((p: any) => p.code)).toEqual([
      "content_too_long",
      "too_many_media",
      "too_many_media",
    ]);
    expect(res.content[0].text).toContain("4 problem(s)");
    expect((await call(client, "list_posts")).json.data).toHaveLength(0);
  });

  test("on_limit fit is the default: create_post adapts what the platform cannot take and reports it", async () => {
    const args = {
      content: `fit-default ${"word ".repeat(80)}`,
      media: Array.from({ length: 5 }, (_, i) => ({ url: `https://cdn.example.com/${i}.jpg` })),
      targets: [{ account_id: bsky }],
      publish_at: new Date(h.clock.now().getTime() + 3600_000).toISOString(),
    };
    const checked = await call(client, "validate_post", args);
    expect(checked.json.data.ok).toBe(true);
    expect(checked.json.data.targets[0].media).toHaveLength(4);
    const created = await call(client, "create_post", args);
    expect(created.isError).toBeFalsy();
    expect(created.json.data.targets[0].adjustments.map((a: any) => a.code)).toEqual([
      "media_dropped",
      "content_truncated",
    ]);
    expect(created.content[0].text).toContain("Adjusted to fit: targets[0] (bluesky)");
    const refused = await call(client, "create_post", { ...args, on_limit: "reject" });
    expect(refused.json.error.code).toBe("content_too_long");
    const bad = await call(client, "create_post", { ...args, on_limit: "sometimes" });
    expect(bad.json.error.code).toBe("validation_error");
    await call(client, "delete_post", { id: created.json.data.id });
  });

  test("create_post publishes on the emulator exactly once, even when the agent retries with its idempotency_key", async () => {
    const args = { content: "hello from an agent", targets: [{ account_id: bsky }], idempotency_key: "agent-1" };
    expect((await call(client, "validate_post", args)).json.data.ok).toBe(true);
    const first = await call(client, "create_post", args);
    expect(first.isError).toBeFalsy();
    const retry = await call(client, "create_post", args);
    expect(retry.json.data.id).toBe(first.json.data.id);
    const other = await call(client, "create_post", { ...args, content: "something else" });
    expect(other.json.error.code).toBe("idempotency_conflict");
    await engine.runUntilIdle();
    const post = await call(client, "get_post", { id: first.json.data.id });
    expect(post.json.data.status).toBe("published");
    expect(post.json.data.targets).toHaveLength(1);
    expect(post.json.data.targets[0].attempts).toBe(1);
    const emulator = h.ctx.platforms.emulatorFor("bluesky", profileId) as BlueskyEmulator;
    expect(emulator.record(post.json.data.targets[0].platform_post_id)).toMatchObject({ text: "hello from an agent" });
    expect((await call(client, "list_posts")).json.data).toHaveLength(1);
  });

  test("queue tools: set_queue, next_queue_slots and create_post with queue: true take the slot shown", async () => {
    const set = await call(client, "set_queue", {
      id: bsky,
      time_zone: "Europe/Berlin",
      slots: [{ day: "mon", time: "09:00" }],
    });
    expect(set.isError).toBeFalsy();
    expect((await call(client, "get_queue", { id: bsky })).json.data.slots).toEqual([{ day: "mon", time: "09:00" }]);
    const [next] = (await call(client, "next_queue_slots", { id: bsky, count: 1 })).json.data;
    expect(next.local.endsWith("T09:00")).toBe(true);
    const post = await call(client, "create_post", {
      content: "queued by an agent",
      queue: true,
      targets: [{ account_id: bsky }],
    });
    expect(post.json.data.targets[0].queue_slot).toBe(next.at);
    expect((await call(client, "shuffle_queue", { id: bsky })).json.data).toHaveLength(1);
    await call(client, "delete_post", { id: post.json.data.id });
  });

  test("idempotency_key on a tool whose route has no Idempotency-Key: the retry gets the original result", async () => {
    const later = new Date(h.clock.now().getTime() + 3600_000).toISOString();
    const post = await call(client, "create_post", {
      content: "later",
      publish_at: later,
      targets: [{ account_id: bsky }],
    });
    const args = { id: post.json.data.id, idempotency_key: "cancel-1" };
    const first = await call(client, "cancel_post", args);
    expect(first.json.data.status).toBe("cancelled");
    // Without the key a second cancel is refused (nothing waits any more); with it, the first answer comes back.
    const replay = await call(client, "cancel_post", args);
    expect(replay.isError).toBeFalsy();
    expect(replay.json).toEqual(first.json);
    expect((await call(client, "cancel_post", { id: post.json.data.id })).json.error.code).toBe("post_not_cancellable");
    const other = await call(client, "cancel_post", { id: crypto.randomUUID(), idempotency_key: "cancel-1" });
    expect(other.json.error.code).toBe("idempotency_conflict");
    // A refused call frees its key.
    const missing = await call(client, "delete_post", { id: crypto.randomUUID(), idempotency_key: "del-1" });
    expect(missing.json.error.code).toBe("not_found");
    const del = await call(client, "delete_post", { id: post.json.data.id, idempotency_key: "del-1" });
    expect(del.isError).toBeFalsy();
  });

  test("another profile's ids are not found; a bad argument is the route's validation error", async () => {
    const mine = (await call(client, "list_posts")).json.data[0].id;
    const { token: otherKey } = await h.profile({ sandbox: true });
    const other = await connectClient(otherKey);
    for (const [name, args] of [
      ["get_post", { id: mine }],
      ["cancel_post", { id: mine }],
      ["disconnect_account", { id: bsky }],
    ] as const) {
      const res = await call(other, name, args);
      expect(`${name}: ${res.json.error.code}`).toBe(`${name}: not_found`);
    }
    // A malformed id is not found, as over REST; an argument outside its schema is the route's validation error.
    const malformed = await call(other, "get_post", { id: "not-a-uuid" });
    expect(malformed.json.error.code).toBe("not_found");
    const bad = await call(other, "list_posts", { limit: 1000 });
    expect(bad.json.error.code).toBe("validation_error");
    await other.close();
  });

  test("tools/list input schemas are the OpenAPI request schemas of the same operations", async () => {
    const doc = await (await fetch(`${h.url}/openapi.json`)).json();
    const resolve = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(resolve);
      if (!node || typeof node !== "object") return node;
      const ref = (node as { $ref?: string }).$ref;
      if (ref)
        return resolve(
          ref
            .replace(/^#\//, "")
            .split("/")
            .reduce((o: any, k) => o[k], doc),
        );
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
    };
    // Compared as validation rules: the OpenAPI generator writes a union of string constants as an enum
    // (the same schema, spelt otherwise), and the document adds reader annotations.
    const norm = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(norm);
      if (!node || typeof node !== "object") return node;
      const o = node as Record<string, any>;
      if (Array.isArray(o.anyOf) && o.anyOf.every((b: any) => "const" in b && b.type === "string")) {
        const { anyOf, ...rest } = o;
        return norm({ ...rest, type: "string", enum: anyOf.map((b: any) => b.const) });
      }
      // A nullable type: the document writes anyOf [{type: X}, {type: "null"}] as type [X, "null"].
      if (
        Array.isArray(o.anyOf) &&
        o.anyOf.every((b: any) => Object.keys(b).length === 1 && typeof b.type === "string")
      ) {
        const { anyOf, ...rest } = o;
        return norm({ ...rest, type: anyOf.map((b: any) => b.type) });
      }
      // Annotations the document adds for readers (descriptions, x-platform-options links) validate nothing;
      // key order carries no rule either.
      return Object.fromEntries(
        Object.entries(o)
          .filter(([k]) => k !== "description" && !k.startsWith("x-"))
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, norm(v)]),
      );
    };
    const same = (a: unknown) => JSON.stringify(norm(a));
    const tools = (await client.listTools()).tools;
    let compared = 0;
    for (const decl of TOOLS) {
      const tool = tools.find((t) => t.name === decl.name)!;
      const op = resolve(doc.paths[decl.path.replace(/:(\w+)/g, "{$1}")][decl.method.toLowerCase()]) as any;
      const props = { ...(tool.inputSchema.properties as Record<string, unknown>) };
      delete props.idempotency_key;
      delete props.on_limit; // like idempotency_key, a tool argument sent as a header (Prefer), not a body field
      for (const p of op.parameters ?? []) {
        if (p.in === "header") continue;
        const arg = p.name.replace(/[A-Z]/g, (c: string) => `_${c.toLowerCase()}`);
        expect(`${decl.name}.${arg}: ${same(props[arg])}`).toBe(`${decl.name}.${arg}: ${same(p.schema)}`);
        delete props[arg];
        compared++;
      }
      const body = op.requestBody?.content?.["application/json"]?.schema;
      if (body) {
        expect(`${decl.name}: ${same(props)}`).toBe(`${decl.name}: ${same(body.properties)}`);
        expect(tool.inputSchema.required ?? []).toEqual(expect.arrayContaining(body.required ?? []));
        compared++;
      } else expect(`${decl.name}: ${Object.keys(props)}`).toBe(`${decl.name}: `);
    }
    expect(compared).toBeGreaterThan(40);
  });
});
