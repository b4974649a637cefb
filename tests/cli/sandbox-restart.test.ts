/**
 * A sandbox through a real restart of `crier serve` (a new process on the same database and address):
 * sandbox accounts stay active and publish again with new ids, and the inbox link `crier keys create`
 * prints opens the inbox with what both processes delivered.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
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
let inboxLink: string;
let keyId: string;

beforeAll(async () => {
  // A fixed address across both processes, as behind a real PUBLIC_URL.
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  await probe.stop(true);
  url = `http://127.0.0.1:${port}`;
  env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-sandbox-restart-")),
    SECRET_KEY: "cli-test-secret-key-0123456789abcdef",
    PORT: String(port),
    PUBLIC_URL: url,
  };
  if (process.env.TEST_DATABASE_URL) {
    db = await testDatabase();
    env.DATABASE_URL = (db as Db & { url: string }).url;
  }
  const profile = await runCli(["profiles", "create", "--name", "play", "--sandbox"], env);
  const key = await runCli(["keys", "create", "--name", "play", "--profile", profile.lastLine], env);
  token = key.lastLine;
  inboxLink = /sandbox inbox[^:]*: (\S+)/.exec(key.stderr)?.[1] ?? "";
  keyId = /created key (\S+)/.exec(key.stderr)?.[1] ?? "";
}, 60_000);

afterAll(async () => {
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

interface Published {
  status: string;
  targets: { platform: string; status: string; platform_post_id: string }[];
}

async function publishAndWait(accountIds: string[], content: string): Promise<Published> {
  const created = await api("POST", "/v1/posts", {
    content,
    targets: accountIds.map((account_id) => ({ account_id })),
  });
  expect(created.status).toBe(201);
  for (let i = 0; i < 200; i++) {
    const post = await api("GET", `/v1/posts/${created.body.data.id}`);
    if (!["queued", "processing"].includes(post.body.data.status)) return post.body.data;
    await Bun.sleep(50);
  }
  throw new Error("the post did not settle");
}

async function serve(): Promise<ServeProcess> {
  return startServe(env);
}

test("crier keys create prints a one-time inbox sign-in link for a sandbox key (the token stays the last line)", () => {
  expect(token).toStartWith("crier_sandbox_");
  expect(inboxLink).toStartWith(`${url}/sandbox?sign_in=`);
  // The link carries no API key (security issue 26 item 7).
  expect(inboxLink).not.toContain(token);
  expect(inboxLink).not.toContain(encodeURIComponent(token));
});

test("sandbox accounts survive a restart of the server process", async () => {
  let server = await serve();
  let first: Published;
  let accountIds: string[];
  try {
    for (const platform of ["bluesky", "telegram"]) {
      const res = await api("POST", `/v1/accounts/connect/${platform}`);
      expect((await submitHostedForm(res.body.data.hosted_url)).html).toContain("Account connected");
    }
    accountIds = (await api("GET", "/v1/accounts")).body.data.map((a: { id: string }) => a.id);
    first = await publishAndWait(accountIds, "before the restart");
    expect(first.targets.map((t) => t.status)).toEqual(["published", "published"]);
  } finally {
    await server.stop();
  }

  server = await serve();
  try {
    const second = await publishAndWait(accountIds, "after the restart");
    expect(second.targets.map((t) => t.status)).toEqual(["published", "published"]);
    for (const t of second.targets) {
      const before = first.targets.find((f) => f.platform === t.platform)!;
      expect(t.platform_post_id).not.toBe(before.platform_post_id);
    }
    const accounts = (await api("GET", "/v1/accounts")).body.data;
    expect(accounts.map((a: { status: string }) => a.status)).toEqual(["active", "active"]);

    // The link from the CLI opens the inbox, which shows both processes' posts; it works once.
    const signIn = await fetch(inboxLink, { redirect: "manual" });
    expect(signIn.status).toBe(303);
    expect((await fetch(inboxLink, { redirect: "manual" })).status).toBe(401);
    // `crier keys inbox-link` makes a new one (through the running server's admin socket on PGlite).
    const fresh = await runCli(["keys", "inbox-link", keyId], env);
    expect(fresh.lastLine).toStartWith(`${url}/sandbox?sign_in=`);
    expect(fresh.lastLine).not.toBe(inboxLink);
    expect((await fetch(fresh.lastLine, { redirect: "manual" })).status).toBe(303);
    const page = await fetch(`${url}/sandbox`, {
      headers: { cookie: signIn.headers.get("set-cookie")!.split(";")[0] },
    });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("before the restart");
    expect(html).toContain("after the restart");
  } finally {
    await server.stop();
  }
}, 120_000);
