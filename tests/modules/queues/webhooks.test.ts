import { afterAll, beforeAll, expect, test } from "bun:test";
import { engineHarness, type EngineHarness } from "../../support/engine-kit.ts";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.ts";

// The post.created event of a queued post is written by the database at commit: it carries the post as the
// API answered it, each target at its own account's slot with queue_slot, not the times first inserted.

let h: EngineHarness;
let rx: Receiver;

beforeAll(async () => {
  h = await engineHarness();
  h.ctx.config.webhookAllowPrivate = true;
  rx = startReceiver();
});
afterAll(async () => {
  await h.engine.stop();
  await h.close();
  await rx.stop();
});

test("post.created of a queued post equals the created post, slots included", async () => {
  h.clock.set(new Date("2026-03-02T12:00:00Z"));
  const { token, profileId } = await h.profile();
  const api = (method: string, path: string, body?: unknown) => h.request(method, path, { token, body });
  const berlin = await h.bluesky(profileId, "hook-berlin.test");
  const tokyo = await h.bluesky(profileId, "hook-tokyo.test");
  await api("PUT", `/v1/accounts/${berlin}/queue`, {
    time_zone: "Europe/Berlin",
    slots: [{ day: "fri", time: "09:00" }],
  });
  await api("PUT", `/v1/accounts/${tokyo}/queue`, { time_zone: "Asia/Tokyo", slots: [{ day: "wed", time: "21:00" }] });
  expect((await api("POST", "/v1/webhooks", { url: rx.url, events: ["post.created"] })).status).toBe(201);

  const created = await api("POST", "/v1/posts", {
    content: "queued with a hook",
    queue: true,
    targets: [{ account_id: berlin }, { account_id: tokyo }],
  });
  expect(created.status).toBe(201);
  expect(created.body.data.targets.map((t: { queue_slot: string }) => t.queue_slot)).toEqual([
    "2026-03-06T08:00:00.000Z",
    "2026-03-04T12:00:00.000Z",
  ]);
  await h.engine.runUntilIdle();
  const [event] = rx.ofType("post.created");
  expect(event.json.data).toEqual(created.body.data);
});
