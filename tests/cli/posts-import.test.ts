/**
 * `crier posts import` against a real `crier serve`: through the server's admin socket on the embedded
 * database, straight to the database on PostgreSQL. A sandbox profile's Bluesky account is connected
 * through the hosted form, so due rows are really published by the server's engine.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../src/db/client.ts";
import { runCli, startServe, type ServeProcess } from "../support/cli.ts";
import { submitHostedForm } from "../support/connect-kit.ts";
import { testDatabase } from "../support/db.ts";

let db: Db | undefined;
let env: Record<string, string>;
let url: string;
let token: string;
let profile: string;
let server: ServeProcess;
let account: string;
const dir = mkdtempSync(join(tmpdir(), "crier-import-"));

beforeAll(async () => {
  // A fixed address: the hosted connect form is served at PUBLIC_URL.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  await probe.stop(true);
  url = `http://127.0.0.1:${port}`;
  env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-import-data-")),
    SECRET_KEY: "cli-test-secret-key-0123456789abcdef",
    PORT: String(port),
    PUBLIC_URL: url,
  };
  if (process.env.TEST_DATABASE_URL) {
    db = await testDatabase();
    env.DATABASE_URL = (db as Db & { url: string }).url;
  }
  profile = (await runCli(["profiles", "create", "--name", "importer", "--sandbox"], env)).lastLine;
  token = (await runCli(["keys", "create", "--name", "importer", "--profile", profile], env)).lastLine;
  server = await startServe(env);
  const connect = await api("POST", "/v1/accounts/connect/bluesky");
  expect((await submitHostedForm(connect.body.data.hosted_url)).html).toContain("Account connected");
  account = (await api("GET", "/v1/accounts")).body.data[0].id;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await db?.close();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** Every post of the profile, through the API's paging. */
async function allPosts(): Promise<{ id: string; content: string; status: string }[]> {
  const out = [];
  let query = "limit=100";
  for (;;) {
    const page = (await api("GET", `/v1/posts?${query}`)).body;
    out.push(...page.data);
    if (!page.meta.has_more) return out;
    query = `limit=100&after=${encodeURIComponent(page.meta.next_after)}&after_id=${page.meta.next_after_id}`;
  }
}

function csvFile(name: string, rows: string[][]): string {
  const path = join(dir, name);
  const cell = (c: string) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  writeFileSync(path, rows.map((r) => r.map(cell).join(",")).join("\n") + "\n");
  return path;
}

const import_ = (...args: string[]) => runCli(["posts", "import", ...args], env);

test("a CSV in parts: the dry run names the bad rows and creates nothing; the import creates each post once, twice run", async () => {
  const later = (i: number) => new Date(Date.now() + (48 + i) * 3600_000).toISOString();
  const rows = [["content", "publish_at", "account_ids"]];
  for (let i = 0; i < 118; i++) rows.push([`scheduled ${i}`, later(i), account]);
  rows.push(["now from the command line", "", account]);
  rows.push(["too late", "2020-01-01T00:00:00Z", account]);
  rows.push(["nobody", later(0), "3f1d0c9e-0000-4000-8000-000000000000"]);
  const file = csvFile("posts.csv", rows);

  const dry = await import_(file, "--profile", profile, "--dry-run");
  expect(dry.code).toBe(1);
  expect(dry.stdout).toContain("row 121: publish_at_in_past (publish_at)");
  expect(dry.stdout).toContain("row 122: target_account_not_found (account_ids, account 3f1d0c9e");
  expect(dry.lastLine).toBe("dry run: 119 of 121 rows can be imported, 2 with problems; nothing was created");
  expect(await allPosts()).toHaveLength(0);

  const first = await import_(file, "--profile", profile);
  expect(first.code).toBe(1);
  expect(first.lastLine).toBe("imported 119 of 121 rows: 119 created, 2 failed");
  const created = await allPosts();
  expect(created).toHaveLength(119);
  expect(new Set(created.map((p) => p.content)).size).toBe(119);

  const second = await import_(file, "--profile", profile, "--json");
  expect(second.code).toBe(1);
  const result = JSON.parse(second.stdout);
  expect(result).toMatchObject({ total: 121, ok: 119, failed: 2, created: 0, replayed: 119 });
  expect(result.rows.find((r: any) => r.row === 2).post_id).toBe(created.find((p) => p.content === "scheduled 0")!.id);
  expect(await allPosts()).toHaveLength(119);

  // The row due now is published by the server's engine.
  const now = created.find((p) => p.content === "now from the command line")!;
  let status = "";
  for (let i = 0; i < 200 && status !== "published"; i++) {
    status = (await api("GET", `/v1/posts/${now.id}`)).body.data.status;
    if (status !== "published") await Bun.sleep(50);
  }
  expect(status).toBe("published");
}, 120_000);

test("a JSON file with --idempotency-key: all rows fine exits 0; unknown columns and a bad flag are refused", async () => {
  const file = join(dir, "posts.json");
  const at = new Date(Date.now() + 72 * 3600_000).toISOString();
  writeFileSync(
    file,
    JSON.stringify({ posts: [{ content: "from json", publish_at: at, targets: [{ account_id: account }] }] }),
  );
  const ok = await import_(file, "--profile", profile, "--idempotency-key", "json-1");
  expect(ok.code).toBe(0);
  expect(ok.lastLine).toBe("imported 1 of 1 rows: 1 created, 0 failed");
  // Row 1's key is json-1:1, as POST /v1/posts/bulk with Idempotency-Key: json-1 would make it.
  const replay = await fetch(`${url}/v1/posts`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": "json-1:1" },
    body: JSON.stringify({ content: "from json", publish_at: at, targets: [{ account_id: account }] }),
  });
  expect(replay.headers.get("idempotent-replayed")).toBe("true");

  const unknown = await import_(csvFile("bad.csv", [["content", "account_ids", "colour"]]), "--profile", profile);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('Unknown column: "colour"');
  const usage = await import_("--profile", profile);
  expect(usage.code).toBe(2);
  const help = await import_("--help");
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("Usage: crier posts import FILE");
}, 60_000);
