/**
 * The database's webhook triggers on posts and targets run only while some endpoint is active anywhere
 * (migrations/0020_webhook_triggers_follow_endpoints.sql): a server without endpoints pays nothing for
 * them on each claim and result. What a user sees must not change: the first endpoint made, one paused
 * and resumed, the last deleted and a new one made, each gets the events of every change after it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { engineHarness, type EngineHarness } from "../../support/engine-kit.ts";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.ts";

let h: EngineHarness;
let rx: Receiver;
let token: string;
let account: string;

beforeAll(async () => {
  h = await engineHarness();
  h.ctx.config.webhookAllowPrivate = true;
  rx = startReceiver();
  const p = await h.profile();
  token = p.token;
  account = await h.bluesky(p.profileId, "switch.test");
});
afterAll(async () => {
  await h.close();
  await rx.stop();
});

const api = (method: string, path: string, body?: unknown) => h.request(method, path, { token, body });

/** Whether the target trigger fires now (pg_trigger.tgenabled 'D' is disabled). */
const triggersOn = async () =>
  (
    await h.db.rows<{ on: boolean }>(
      sql`select bool_and(tgenabled <> 'D') as on from pg_trigger
          where tgname in ('crier_webhook_posts', 'crier_webhook_targets', 'crier_webhook_targets_before')`,
    )
  )[0].on;

/** Publishes a post now and returns the event types the receiver got for it. */
async function eventsOfAPost(content: string): Promise<string[]> {
  const from = rx.received.length;
  const res = await api("POST", "/v1/posts", { content, targets: [{ account_id: account }] });
  expect(res.status).toBe(201);
  await h.engine.runUntilIdle();
  return rx.received.slice(from).map((r) => r.json.type as string);
}

const endpoint = async () => {
  const res = await api("POST", "/v1/webhooks", { url: rx.url, events: ["post.created", "post.published"] });
  expect(res.status).toBe(201);
  return res.body.data.id as string;
};

const ALL = ["post.created", "post.published"];

test("no endpoint: the triggers are off and nothing is written to the outbox", async () => {
  expect(await triggersOn()).toBe(false);
  expect(await eventsOfAPost("before any endpoint")).toEqual([]);
  const [row] = await h.db.rows<{ n: number }>(sql`select count(*)::int as n from webhook_events`);
  expect(row.n).toBe(0);
});

test("the first endpoint turns them on; pausing the only one turns them off, resuming on again", async () => {
  const id = await endpoint();
  expect(await triggersOn()).toBe(true);
  expect(await eventsOfAPost("first endpoint")).toEqual(ALL);

  expect((await api("PATCH", `/v1/webhooks/${id}`, { is_active: false })).status).toBe(200);
  expect(await triggersOn()).toBe(false);
  expect(await eventsOfAPost("while paused")).toEqual([]);

  expect((await api("PATCH", `/v1/webhooks/${id}`, { is_active: true })).status).toBe(200);
  expect(await triggersOn()).toBe(true);
  expect(await eventsOfAPost("resumed")).toEqual(ALL);
  expect((await api("DELETE", `/v1/webhooks/${id}`)).status).toBe(200);
});

test("deleting the last endpoint turns them off, a new one on", async () => {
  expect(await triggersOn()).toBe(false);
  const id = await endpoint();
  expect(await eventsOfAPost("new endpoint")).toEqual(ALL);
  expect((await api("DELETE", `/v1/webhooks/${id}`)).status).toBe(200);
  expect(await triggersOn()).toBe(false);
});

test("endpoints made and deleted at once leave the triggers as the endpoints that remain ask", async () => {
  const [a, b] = await Promise.all([endpoint(), endpoint()]);
  expect(await triggersOn()).toBe(true);
  await Promise.all([api("DELETE", `/v1/webhooks/${a}`), api("DELETE", `/v1/webhooks/${b}`), endpoint()]);
  expect(await triggersOn()).toBe(true);
  const left = (await api("GET", "/v1/webhooks")).body.data as { id: string }[];
  await Promise.all(left.map((e) => api("DELETE", `/v1/webhooks/${e.id}`)));
  expect(await triggersOn()).toBe(false);
});
