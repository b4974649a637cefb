import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { createPost } from "../../src/modules/posts/service.ts";
import { createWebhook } from "../../src/modules/webhooks/service.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import { childDatabase, exited, startKillableServe, until } from "../support/killable-serve.ts";

// Copies of `crier serve` as child processes deliver the outbox: one killed with SIGKILL while its
// delivery is on the wire (the event is delivered after the restart, from the one event row), and on
// PostgreSQL two copies at once deliver every event exactly once.

const SECRET = "webhook-copies-secret-key-long-enough-00";
const EVENTS = 120;

let served: ServedEmulator;
let childEnv: Record<string, string>;
let token: string;
let webhookId: string;
let cleanup: () => Promise<void> = async () => {};
const children: ChildProcess[] = [];

/** Holds the first request it gets (the copy is killed meanwhile), answers every other at once. */
const seen: { id: string; at: number }[] = [];
let holdFirst = true;
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 60,
  async fetch(req) {
    await req.text();
    seen.push({ id: req.headers.get("webhook-id")!, at: Date.now() });
    if (holdFirst) {
      holdFirst = false;
      await Bun.sleep(30_000);
    }
    return new Response("ok");
  },
});

const startServe = () => startKillableServe(childEnv, children);

async function deliveries(url: string, event: string) {
  const out: { event_id: string; status: string }[] = [];
  let cursor = "";
  for (;;) {
    const res = await fetch(`${url}/v1/webhooks/${webhookId}/deliveries?limit=100&event=${event}${cursor}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const page = (await res.json()) as {
      data: { event_id: string; status: string }[];
      meta: { has_more: boolean; next_after: string; next_after_id: string };
    };
    out.push(...page.data);
    if (!page.meta.has_more) return out;
    cursor = `&after=${page.meta.next_after}&after_id=${page.meta.next_after_id}`;
  }
}

beforeAll(async () => {
  const emulator = createBlueskyEmulator();
  served = serveEmulator(emulator);
  const shared = await childDatabase("webhooks", {
    SECRET_KEY: SECRET,
    PUBLISH_LEASE_SECONDS: "5",
    WEBHOOK_ALLOW_PRIVATE: "true",
    CRIER_BLUESKY_API_URL: served.url,
  });
  const { ctx } = shared;
  const db = ctx.db;
  childEnv = shared.childEnv;
  cleanup = shared.close;
  const profile = await createProfile(db, "webhooks");
  token = (await createKey(db, { name: "webhooks", profileId: profile.id, scopes: [...SCOPES] })).token;
  webhookId = (
    await createWebhook(ctx, profile.id, { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["post.created"] })
  ).id;
  const account = await connectBluesky(ctx, profile.id, "copies.test");
  // Scheduled far ahead: nothing is published, only post.created waits in the outbox, once per post.
  const later = new Date(Date.now() + 30 * 86400_000).toISOString();
  for (let i = 0; i < EVENTS; i++)
    await createPost(ctx, profile.id, { content: `copy ${i}`, publish_at: later, targets: [{ account_id: account }] });
  await shared.release();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await served?.stop();
  receiver.stop(true);
  await cleanup();
});

describe("webhook delivery across copies", () => {
  test("kill -9 mid-delivery: after a restart every event is delivered, one event row each", async () => {
    const first = await startServe();
    await until("a delivery on the wire", () => (seen.length >= 1 ? true : undefined));
    first.child.kill("SIGKILL");
    await exited(first.child);
    const interrupted = seen[0].id;

    const second = await startServe();
    const list = await until("every delivery delivered", async () => {
      const all = await deliveries(second.url, "post.created");
      return all.length === EVENTS && all.every((d) => d.status === "delivered") ? all : undefined;
    });
    second.child.kill("SIGTERM");
    await exited(second.child);
    // One delivery (one event row) per post; the interrupted one went again with the same webhook-id.
    expect(new Set(list.map((d) => d.event_id)).size).toBe(EVENTS);
    expect(seen.filter((s) => s.id === interrupted).length).toBe(2);
    expect(new Set(seen.map((s) => s.id)).size).toBe(EVENTS);
  }, 90_000);

  test.skipIf(!process.env.TEST_DATABASE_URL)(
    "two copies deliver each event once",
    async () => {
      const a = await startServe();
      // Every delivery sent again by hand at once, so both copies find the whole outbox due together.
      const before = seen.length;
      const { DATABASE_URL } = childEnv;
      const postgres = (await import("postgres")).default;
      const pg = postgres(DATABASE_URL!, { max: 1 });
      const b = await startServe();
      await pg`update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = now()`;
      await pg.end();
      await until("every event delivered again", () => (seen.length - before >= EVENTS ? true : undefined));
      await Bun.sleep(1500);
      a.child.kill("SIGTERM");
      b.child.kill("SIGTERM");
      await Promise.all([exited(a.child), exited(b.child)]);
      const again = seen.slice(before).map((s) => s.id);
      expect(again.length).toBe(EVENTS);
      expect(new Set(again).size).toBe(EVENTS);
    },
    90_000,
  );
});
