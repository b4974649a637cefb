/**
 * Issue 26, item 6: one failing webhook endpoint must not stall delivery for everyone. The engine is the
 * one `crier serve` starts (serveEngine of src/server.ts, with the options serve gives it), driven by the
 * TestClock: a healthy endpoint of one profile beside an always-failing one of another. The healthy one
 * gets each event exactly once; the failing one's attempts are recorded and back off, and the endpoint
 * is disabled once it has failed for 3 days.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { DISABLE_AFTER_FAILING_MS } from "../../src/domain/webhook-events.ts";
import type { Engine } from "../../src/engine/index.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { serveEngine } from "../../src/server.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import type { Harness } from "../support/harness.ts";
import { postsHarness } from "../support/posts-kit.ts";

/** A receiver on 127.0.0.1 that counts every webhook-id and answers `status`. */
function receiver(status: number) {
  const ids: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      await req.text();
      ids.push(req.headers.get("webhook-id")!);
      return new Response(status === 200 ? "ok" : "down", { status });
    },
  });
  return { ids, url: `http://127.0.0.1:${server.port}/hook`, stop: () => server.stop(true) };
}

let served: ServedEmulator;
let h: Harness;
let engine: Engine;
const healthy = receiver(200);
const failing = receiver(500);

beforeAll(async () => {
  served = serveEmulator(createBlueskyEmulator());
  h = await postsHarness({ env: { CRIER_BLUESKY_API_URL: served.url } });
  h.ctx.config.webhookAllowPrivate = true;
  engine = serveEngine(h.ctx);
  h.ctx.dispatch = engine;
});
afterAll(async () => {
  await engine.stop();
  await h.close();
  await served.stop();
  await healthy.stop();
  await failing.stop();
});

async function profileWith(url: string, handle: string) {
  const p = await h.profile();
  const hook = await h.request("POST", "/v1/webhooks", { token: p.token, body: { url, events: ["*"] } });
  expect(hook.status).toBe(201);
  const account = await connectBluesky(h.ctx, p.profileId, handle);
  return { ...p, hookId: hook.body.data.id as string, account };
}

/** A post for next month: one post.created event for the profile's endpoint, nothing published. */
async function event(p: { token: string; account: string }) {
  const publishAt = new Date(h.clock.now().getTime() + 30 * 86400_000).toISOString();
  const res = await h.request("POST", "/v1/posts", {
    token: p.token,
    body: { content: "later", publish_at: publishAt, targets: [{ account_id: p.account }] },
  });
  expect(res.status).toBe(201);
}

const eventIds = (endpoint: string) =>
  h.db.rows<{ event_id: string }>(sql`select event_id from webhook_deliveries where endpoint_id = ${endpoint}`);

test("a failing endpoint beside a healthy one: exactly once there, backoff and the 3-day disable here", async () => {
  const good = await profileWith(healthy.url, "healthy.test");
  const bad = await profileWith(failing.url, "failing.test");
  await event(good);
  await event(bad);
  await engine.runUntilIdle();

  // The failing endpoint's attempts are recorded: a next try is due, and the healthy ones are delivered.
  const first = await h.db.rows<{ attempts: number; next_attempt_at: Date | string | null }>(
    sql`select attempts, next_attempt_at from webhook_deliveries where endpoint_id = ${bad.hookId} order by seq`,
  );
  expect(first.map((d) => d.attempts)).toEqual([1, 1]);
  expect(first.every((d) => d.next_attempt_at !== null)).toBe(true);

  // Past the lease (2 minutes) and on through the retry schedule, with new events for both along the way.
  const started = h.clock.now().getTime();
  let lastEvent = started;
  for (let i = 0; i < 100; i++) {
    const [{ active }] = await h.db.rows<{ active: boolean }>(
      sql`select is_active as active from webhook_endpoints where id = ${bad.hookId}`,
    );
    if (!active) break;
    const [{ next }] = await h.db.rows<{ next: Date | string | null }>(
      sql`select min(next_attempt_at) as next from webhook_deliveries
          where endpoint_id = ${bad.hookId} and status = 'pending'`,
    );
    const now = h.clock.now().getTime();
    const due = next === null ? now + 12 * 3600_000 : new Date(next).getTime();
    h.clock.set(new Date(Math.max(now + 1, Math.min(due, now + 12 * 3600_000) + 1)));
    if (h.clock.now().getTime() - lastEvent >= 12 * 3600_000) {
      lastEvent = h.clock.now().getTime();
      await event(good);
      await event(bad);
    }
    await engine.runUntilIdle();
  }

  // The healthy endpoint got every event of its profile exactly once, and all of them are delivered.
  const owed = (await eventIds(good.hookId)).map((r) => r.event_id).sort();
  expect(owed.length).toBeGreaterThanOrEqual(5);
  expect([...healthy.ids].sort()).toEqual(owed);
  const undelivered = await h.db.rows(
    sql`select id from webhook_deliveries where endpoint_id = ${good.hookId} and status <> 'delivered'`,
  );
  expect(undelivered).toHaveLength(0);

  // The failing one: every request it got is a recorded attempt, spaced further and further apart.
  const [{ attempts }] = await h.db.rows<{ attempts: number }>(
    sql`select count(*)::int as attempts from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
        where d.endpoint_id = ${bad.hookId}`,
  );
  expect(failing.ids.length).toBe(attempts);
  const firstDelivery = await h.db.rows<{ at: Date | string }>(
    sql`select a.attempted_at as at from webhook_attempts a
        where a.delivery_id = (select id from webhook_deliveries where endpoint_id = ${bad.hookId} order by seq limit 1)
        order by a.attempted_at`,
  );
  const at = firstDelivery.map((r) => new Date(r.at).getTime());
  expect(at.length).toBeGreaterThanOrEqual(7);
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  for (let i = 1; i < Math.min(gaps.length, 6); i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1]);
  expect(gaps[0]).toBeGreaterThanOrEqual(4_000);

  // Disabled with its note once it had failed for 3 days, and not before.
  const read = await h.request("GET", `/v1/webhooks/${bad.hookId}`, { token: bad.token });
  expect(read.body.data.is_active).toBe(false);
  expect(read.body.data.note.reason).toContain("3 days");
  const disabledAfter = Date.parse(read.body.data.note.at) - at[0];
  expect(disabledAfter).toBeGreaterThanOrEqual(DISABLE_AFTER_FAILING_MS);
  expect(disabledAfter).toBeLessThan(DISABLE_AFTER_FAILING_MS + 25 * 3600_000);
  expect(h.clock.now().getTime() - started).toBeLessThan(5 * 86400_000);
});

test("an endpoint that cannot be prepared (its secret no longer decrypts) fails alone, recorded", async () => {
  const from = healthy.ids.length;
  const good = await profileWith(healthy.url, "healthy-2.test");
  const broken = await profileWith(healthy.url, "broken.test");
  // As after a SECRET_KEY change: the stored secrets are not readable any more.
  await h.db.rows(sql`update webhook_endpoints set secrets = 'not-encrypted' where id = ${broken.hookId} returning id`);
  await event(good);
  await event(broken);
  await engine.runUntilIdle();
  h.clock.advance(121_000);
  await engine.runUntilIdle();
  const owed = (await eventIds(good.hookId)).map((r) => r.event_id).sort();
  expect(healthy.ids.slice(from).sort()).toEqual(owed);
  const list = await h.request("GET", `/v1/webhooks/${broken.hookId}/deliveries`, { token: broken.token });
  expect(list.body.data.length).toBe(2);
  for (const d of list.body.data) {
    expect(d.status).toBe("pending");
    expect(d.attempts[0].error).toContain("could not be prepared");
  }
});
