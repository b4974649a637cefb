/**
 * Changing SECRET_KEY on a real `crier serve` (issue 30 item 4): a sandbox profile's accounts connected
 * under the old key keep publishing once the server runs with SECRET_KEY=new and SECRET_KEY_PREVIOUS=old;
 * `crier secrets rotate` moves every stored credential to the new key while the server runs (through the
 * admin socket on PGlite, in its own process on PostgreSQL); then the server runs on the new key alone.
 * An upload URL and a connect link made with the old key still work after the switch. A credential under
 * a key the server does not have is named at start and by the rotation, and left as it is.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { acquireLock } from "../../src/cli/lock.ts";
import { openDatabase, type Db } from "../../src/db/client.ts";
import { decryptJson, encryptJson, keyId } from "../../src/db/crypto.ts";
import { accounts } from "../../src/db/schema.ts";
import { runCli, startServe, type ServeProcess } from "../support/cli.ts";
import { submitHostedForm } from "../support/connect-kit.ts";
import { testDatabase } from "../support/db.ts";
import { makePng } from "../support/media-fixtures.ts";

const OLD = "old-secret-key-0123456789abcdef-0123456789";
const NEW = "new-secret-key-fedcba9876543210-9876543210";
const OTHER = "some-other-key-that-this-server-never-had-00";

let pg: (Db & { url?: string }) | undefined;
let env: Record<string, string>;
let url: string;
let token: string;

beforeAll(async () => {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  await probe.stop(true);
  url = `http://127.0.0.1:${port}`;
  env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-secrets-")),
    PORT: String(port),
    PUBLIC_URL: url,
  };
  if (process.env.TEST_DATABASE_URL) {
    pg = await testDatabase();
    env.DATABASE_URL = pg.url!;
  }
  const keys = { ...env, SECRET_KEY: OLD };
  const profile = await runCli(["profiles", "create", "--name", "play", "--sandbox"], keys);
  token = (await runCli(["keys", "create", "--name", "play", "--profile", profile.lastLine], keys)).lastLine;
}, 60_000);

afterAll(async () => {
  await pg?.close();
});

const withKeys = (secret: string, previous?: string) => ({
  ...env,
  SECRET_KEY: secret,
  ...(previous ? { SECRET_KEY_PREVIOUS: previous } : {}),
  LOG_LEVEL: "info",
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function publish(accountIds: string[], content: string) {
  const created = await api("POST", "/v1/posts", {
    content,
    targets: accountIds.map((account_id) => ({ account_id })),
  });
  expect(created.status).toBe(201);
  for (let i = 0; i < 300; i++) {
    const post = await api("GET", `/v1/posts/${created.body.data.id}`);
    if (!["queued", "processing"].includes(post.body.data.status))
      return post.body.data as { status: string; targets: { status: string; error: string | null }[] };
    await Bun.sleep(50);
  }
  throw new Error("the post did not settle");
}

/** The stored credentials, read with the server stopped (PGlite: under the data directory's lock). */
async function storedCredentials(): Promise<{ id: string; credentials: string }[]> {
  return onDatabase(async (db) =>
    (await db.db.select({ id: accounts.id, credentials: accounts.credentials }).from(accounts)).map((r) => ({
      id: r.id,
      credentials: r.credentials!,
    })),
  );
}

async function onDatabase<T>(run: (db: Db) => Promise<T>): Promise<T> {
  if (pg) return run(pg);
  const release = acquireLock(env.DATA_DIR);
  const db = await openDatabase(loadConfig({ ...env, SECRET_KEY: NEW }));
  try {
    return await run(db);
  } finally {
    await db.close();
    release();
  }
}

let server: ServeProcess | undefined;
async function restart(secret: string, previous?: string) {
  await server?.stop();
  server = await startServe(withKeys(secret, previous));
  return server;
}
afterAll(async () => {
  await server?.stop();
});

test("a rotation of SECRET_KEY end to end on a running server", async () => {
  // Under the old key: two sandbox accounts, a publish, an upload URL and a connect link kept for later.
  await restart(OLD);
  for (const platform of ["bluesky", "telegram"]) {
    const res = await api("POST", `/v1/accounts/connect/${platform}`);
    expect((await submitHostedForm(res.body.data.hosted_url)).html).toContain("Account connected");
  }
  const accountIds = (await api("GET", "/v1/accounts")).body.data.map((a: { id: string }) => a.id);
  expect((await publish(accountIds, "under the old key")).status).toBe("published");
  const ticket = (await api("POST", "/v1/media/uploads", { filename: "a.png", content_type: "image/png" })).body.data;
  const pendingConnect = (await api("POST", "/v1/accounts/connect/bluesky")).body.data.hosted_url as string;

  // The new key alone: start names the problem and its fix, and each publish fails.
  let s = await restart(NEW);
  expect(s.stderr()).toContain("cannot be opened with SECRET_KEY");
  expect(s.stderr()).toContain("SECRET_KEY_PREVIOUS");
  for (const id of accountIds) expect(s.stderr()).toContain(id);
  const failed = await publish(accountIds, "new key, no previous");
  expect(failed.status).toBe("failed");
  expect(failed.targets[0].error).toContain("SECRET_KEY_PREVIOUS");
  // Links made with the old key are refused without it (so the next step proves the previous key works).
  const refused = await fetch(ticket.upload.signedUrl, {
    method: "PUT",
    body: makePng(2, 2),
    headers: { "content-type": "image/png" },
  });
  expect(refused.status).toBe(403);

  // New key with the old one as previous: publishing works again, old links still work.
  s = await restart(NEW, OLD);
  expect(s.stderr()).not.toContain("cannot be opened");
  expect((await publish(accountIds, "new key, old as previous")).status).toBe("published");
  const put = await fetch(ticket.upload.signedUrl, {
    method: "PUT",
    body: makePng(2, 2),
    headers: { "content-type": "image/png" },
  });
  expect(put.status).toBeLessThan(300);
  expect((await submitHostedForm(pendingConnect)).html).toContain("Account connected");

  // The rotation, while that server runs.
  const rotate = await runCli(["secrets", "rotate", "--batch", "1"], withKeys(NEW, OLD));
  expect(rotate.code).toBe(0);
  // The reconnect above stored that account under the new key already: one is left, the telegram account.
  expect(rotate.stderr).toContain("re-encrypting 1 stored secret(s)");
  expect(rotate.stderr).toContain("re-encrypted 1/1");
  expect(rotate.lastLine).toContain("re-encrypted 1 stored secret(s)");
  expect(rotate.lastLine).toContain("SECRET_KEY_PREVIOUS can be removed");
  expect((await publish(accountIds, "rotated, previous still set")).status).toBe("published");
  // Again: nothing left, nothing done.
  const again = await runCli(["secrets", "rotate"], withKeys(NEW, OLD));
  expect(again.code).toBe(0);
  expect(again.lastLine).toContain("re-encrypted 0 stored secret(s)");
  await server!.stop();
  server = undefined;
  const stored = await storedCredentials();
  expect(stored.length).toBe(accountIds.length);
  for (const r of stored) {
    expect(r.credentials.startsWith(`v2.${keyId(Buffer.from(NEW))}.`)).toBe(true);
    expect(() => decryptJson(Buffer.from(OLD), r.credentials)).toThrow();
  }

  // The new key alone: everything works, nothing is reported.
  s = await restart(NEW);
  expect(s.stderr()).not.toContain("cannot be opened");
  expect((await publish(accountIds, "new key alone")).status).toBe("published");
  await server!.stop();
  server = undefined;
}, 180_000);

test("a credential under a key the server does not have is reported and left as it is", async () => {
  const [victim] = await storedCredentials();
  const foreign = encryptJson(Buffer.from(OTHER), { accessJwt: "x" });
  await onDatabase((db) => db.db.update(accounts).set({ credentials: foreign }).where(eq(accounts.id, victim.id)));

  const s = await restart(NEW, OLD);
  expect(s.stderr()).toContain("cannot be opened with SECRET_KEY or SECRET_KEY_PREVIOUS");
  expect(s.stderr()).toContain(victim.id);
  const r = await runCli(["secrets", "rotate"], withKeys(NEW, OLD));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain(victim.id);
  expect(r.stderr).toContain("nothing was changed");
  await server!.stop();
  server = undefined;
  const after = await storedCredentials();
  expect(after.find((a) => a.id === victim.id)!.credentials).toBe(foreign);
  const [{ n }] = await onDatabase((db) =>
    db.rows<{ n: number }>(sql`select count(*)::int as n from accounts where credentials = ${foreign}`),
  );
  expect(n).toBe(1);
}, 120_000);

test("the rotation refuses when the running server holds another SECRET_KEY than its environment", async () => {
  if (pg) return; // only the embedded database runs commands inside the server
  await restart(OLD, NEW);
  const r = await runCli(["secrets", "rotate"], withKeys(NEW, OLD));
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("another SECRET_KEY");
  await server!.stop();
  server = undefined;
}, 60_000);
