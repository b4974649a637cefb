import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { createKey, createProfile } from "../src/modules/keys/service.ts";
import { SCOPES } from "../src/http/scopes.ts";
import { serveEmulator, type ServedEmulator } from "../src/platform/emulator-kit.ts";
import { createBlueskyEmulator } from "../plugins/bluesky/emulator.ts";
import { connectBluesky } from "./support/engine-kit.ts";
import { testDatabase } from "./support/db.ts";

// `crier serve` in-process: the API reaches the engine of its own copy only through what src/server.ts
// wires up. With the engine, POST /publish answers once the targets are claimed (processing); an
// API-only copy (--no-scheduler) answers queued and leaves them to another copy.

const emulator = createBlueskyEmulator();
let served: ServedEmulator;
let env: Record<string, string>;
let dropDatabase = async () => {};

beforeAll(async () => {
  served = serveEmulator(emulator);
  env = {
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-serve-")),
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    SECRET_KEY: "test-secret-key-that-is-long-enough-000",
    CRIER_BLUESKY_API_URL: served.url,
  };
  if (process.env.TEST_DATABASE_URL) {
    const pg = await testDatabase();
    env.DATABASE_URL = pg.url!;
    dropDatabase = () => pg.close();
  }
});
afterAll(async () => {
  await served?.stop();
  await dropDatabase();
});

/** Starts a copy, connects an account, schedules a post for tomorrow and publishes it now. */
async function publishEarly(scheduler: boolean, handle: string) {
  const server = await startServer(loadConfig(env), { scheduler });
  try {
    const profile = await createProfile(server.ctx.db, handle);
    const { token } = await createKey(server.ctx.db, { name: handle, profileId: profile.id, scopes: [...SCOPES] });
    const accountId = await connectBluesky(server.ctx, profile.id, handle);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const tomorrow = new Date(Date.now() + 86400_000).toISOString();
    const created = await call("POST", "/v1/posts", {
      content: `early ${handle}`,
      publish_at: tomorrow,
      targets: [{ account_id: accountId }],
    });
    expect(created.status).toBe(201);
    const published = await call("POST", `/v1/posts/${created.body.data.id}/publish`);
    expect(published.status).toBe(200);
    let final = published.body.data;
    for (let i = 0; scheduler && final.status !== "published" && i < 200; i++) {
      await Bun.sleep(25);
      final = (await call("GET", `/v1/posts/${created.body.data.id}`)).body.data;
    }
    return { answered: published.body.data.status as string, final: final.status as string };
  } finally {
    await server.stop();
  }
}

test("an API-only copy answers queued and publishes nothing itself", async () => {
  const r = await publishEarly(false, "api-only.test");
  expect(r.answered).toBe("queued");
  expect(emulator.posts().filter((p) => p.text === "early api-only.test")).toHaveLength(0);
});

test("a copy with its engine claims the post before answering, then publishes it once", async () => {
  const r = await publishEarly(true, "engine.test");
  expect(r.answered).toBe("processing");
  expect(r.final).toBe("published");
  expect(emulator.posts().filter((p) => p.text === "early engine.test")).toHaveLength(1);
});
