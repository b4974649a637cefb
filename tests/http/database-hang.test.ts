/**
 * A PostgreSQL that accepts connections but never answers (a TCP proxy the test freezes), and one that
 * answers everything but a table held under an exclusive lock: requests answer 503 database_unavailable
 * within 2 s instead of hanging, store nothing, and everything comes back by itself.
 * PostgreSQL only: the embedded database runs in process, with no connection to freeze or lock to wait on.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import { testDatabase } from "../support/db.ts";
import { freezableProxy, type FreezableProxy } from "../support/freezable-proxy.ts";
import type { Db } from "../../src/db/client.ts";

const onPostgres = !!process.env.TEST_DATABASE_URL;
if (!onPostgres) console.log("database-hang.test.ts: skipped, PostgreSQL only (set TEST_DATABASE_URL)");

let direct: Db & { url?: string };
let proxy: FreezableProxy;
let server: RunningServer;
let served: ServedEmulator;
let auth: Record<string, string>;
let accountId: string;

beforeAll(async () => {
  if (!onPostgres) return;
  direct = await testDatabase();
  proxy = await freezableProxy(direct.url!);
  served = serveEmulator(createBlueskyEmulator());
  server = await startServer(
    loadConfig({
      DATABASE_URL: proxy.url,
      DATA_DIR: mkdtempSync(join(tmpdir(), "crier-hang-")),
      SECRET_KEY: "hang-test-secret-0123456789abcdef0123",
      LOG_LEVEL: "silent",
      HOST: "127.0.0.1",
      PORT: "0",
      CRIER_BLUESKY_API_URL: served.url,
    }),
    { scheduler: false },
  );
  const profile = await createProfile(server.ctx.db, "hang");
  const { token } = await createKey(server.ctx.db, { profileId: profile.id, name: "hang", scopes: [...SCOPES] });
  accountId = await connectBluesky(server.ctx, profile.id, "hang.bsky.social");
  auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
}, 60_000);

afterAll(async () => {
  if (!onPostgres) return;
  proxy?.resume();
  await server?.stop();
  await served?.stop();
  await proxy?.stop();
  await direct?.close();
});

interface Answer {
  ms: number;
  status: number;
  code?: string;
  retryAfter?: string | null;
}

/** One request, timed; a request still unanswered after 6 s counts as status 0. */
async function timed(path: string, init?: RequestInit): Promise<Answer> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${server.url}${path}`, { ...init, signal: AbortSignal.timeout(6000) });
    const body = (await res.json().catch(() => ({}))) as { error?: { code: string } };
    return {
      ms: performance.now() - t0,
      status: res.status,
      code: body.error?.code,
      retryAfter: res.headers.get("retry-after"),
    };
  } catch {
    return { ms: performance.now() - t0, status: 0 };
  }
}

const storedPosts = async (content: string) =>
  Number((await direct.rows<{ n: string }>(sql`select count(*) as n from posts where content = ${content}`))[0]!.n);

test.skipIf(!onPostgres)(
  "a database that never answers: /v1 answers 503 database_unavailable within 2 s, /readyz 503 within 1 s, and both recover when it answers again",
  async () => {
    expect((await timed("/v1/accounts", { headers: auth })).status).toBe(200);
    proxy.freeze();
    const during: Answer[] = [];
    const ready: Answer[] = [];
    try {
      const started = performance.now();
      // Several clients at once (the pool's connections all stuck), then one after another.
      during.push(...(await Promise.all(Array.from({ length: 4 }, () => timed("/v1/accounts", { headers: auth })))));
      while (performance.now() - started < 5000) {
        during.push(await timed("/v1/accounts", { headers: auth }));
        ready.push(await timed("/readyz"));
        await Bun.sleep(100);
      }
    } finally {
      proxy.resume();
    }
    const summary = (xs: Answer[]) =>
      `n=${xs.length} statuses ${[...new Set(xs.map((a) => a.status))]} max ${Math.max(...xs.map((a) => a.ms)).toFixed(0)} ms`;
    console.log(`frozen: /v1/accounts ${summary(during)}; /readyz ${summary(ready)}`);
    for (const a of during) {
      expect(a.status).toBe(503);
      expect(a.code).toBe("database_unavailable");
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.ms).toBeLessThanOrEqual(2000);
    }
    for (const a of ready) {
      expect(a.status).toBe(503);
      expect(a.ms).toBeLessThanOrEqual(1000);
    }

    const resumed = performance.now();
    let back = -1;
    while (performance.now() - resumed < 15_000) {
      if ((await timed("/v1/accounts", { headers: auth })).status === 200) {
        back = performance.now() - resumed;
        break;
      }
      await Bun.sleep(100);
    }
    console.log(`/v1/accounts answered 200 again ${back.toFixed(0)} ms after the proxy resumed`);
    expect(back).toBeGreaterThanOrEqual(0);
    let readyAgain = false;
    for (let i = 0; i < 100 && !readyAgain; i++) {
      readyAgain = (await timed("/readyz")).status === 200;
      if (!readyAgain) await Bun.sleep(100);
    }
    expect(readyAgain).toBe(true);
  },
  60_000,
);

test.skipIf(!onPostgres)(
  "a table held under an exclusive lock: POST /v1/posts answers 503 database_unavailable within 2 s and stores nothing",
  async () => {
    // From a database that answers (the test before this one froze it).
    let up = false;
    for (let i = 0; i < 150 && !up; i++) {
      up = (await timed("/v1/accounts", { headers: auth })).status === 200;
      if (!up) await Bun.sleep(100);
    }
    expect(up).toBe(true);
    const holder = postgres(direct.url!, { max: 1, onnotice: () => {} });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holding = holder.begin(async (tx) => {
      await tx`lock table posts in access exclusive mode`;
      locked();
      await released;
    });
    await isLocked;
    const content = "written while posts was locked";
    let answer: Answer;
    try {
      answer = await timed("/v1/posts", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          content,
          publish_at: new Date(Date.now() + 86_400_000).toISOString(),
          targets: [{ account_id: accountId }],
        }),
      });
    } finally {
      // Released at once: a statement the server still had queued behind the lock would now go through.
      release();
      await holding;
      await holder.end();
    }
    console.log(`POST /v1/posts behind the lock: ${answer.status} ${answer.code} in ${answer.ms.toFixed(0)} ms`);
    expect(answer.status).toBe(503);
    expect(answer.code).toBe("database_unavailable");
    expect(answer.ms).toBeLessThanOrEqual(2000);
    // Nothing went in then, nor later: the statement was cancelled, not left waiting.
    await Bun.sleep(1500);
    expect(await storedPosts(content)).toBe(0);

    // Not an outage: the next create goes through.
    const again = await timed("/v1/posts", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        content: "after the lock",
        publish_at: new Date(Date.now() + 86_400_000).toISOString(),
        targets: [{ account_id: accountId }],
      }),
    });
    expect(again.status).toBe(201);
  },
  60_000,
);
