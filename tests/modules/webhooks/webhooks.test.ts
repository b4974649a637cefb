import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { engineHarness, type EngineHarness } from "../../support/engine-kit.ts";
import { startReceiver, type Received, type Receiver } from "../../support/webhook-receiver.ts";

// Webhooks end to end: real HTTP to a receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE on), events written
// by the database in the transaction of each change, delivered by the engine driven with the TestClock.

let h: EngineHarness;
let rx: Receiver;
let token: string;
let profileId: string;

beforeAll(async () => {
  h = await engineHarness();
  h.ctx.config.webhookAllowPrivate = true;
  rx = startReceiver();
  ({ token, profileId } = await h.profile());
});
afterAll(async () => {
  await h.close();
  await rx.stop();
});

const api = (method: string, path: string, body?: unknown, key = token) =>
  h.request(method, path, { token: key, body });

async function endpoint(events: string[] = ["*"], url = rx.url) {
  const res = await api("POST", "/v1/webhooks", { url, events, description: "test receiver" });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string };
}

const verify = (secret: string, r: Received) => <{ type: string }>new Webhook(secret).verify(r.body, {
    "webhook-id": r.headers["webhook-id"],
    "webhook-timestamp": r.headers["webhook-timestamp"],
    "webhook-signature": r.headers["webhook-signature"],
  });

const deliver = () => h.engine.runUntilIdle();

describe("events", () => {
  let hook: { id: string; secret: string };
  let otherProfile: string;
  beforeAll(async () => {
    hook = await endpoint();
    otherProfile = (await h.profile()).token;
  });

  test("a post published now: created, processing, target.published, published, each once, signed", async () => {
    const acct = await h.bluesky(profileId, "events.test");
    await deliver();
    const connected = rx.ofType("account.connected");
    expect(connected).toHaveLength(1);
    expect(connected[0].json.data).toMatchObject({ id: acct, platform: "bluesky", status: "active" });
    expect(connected[0].json.data.capabilities).not.toBeNull();

    const from = rx.received.length;
    const created = await api("POST", "/v1/posts", { content: "hook me", targets: [{ account_id: acct }] });
    expect(created.status).toBe(201);
    await deliver();
    const got = rx.received.slice(from);
    expect(got.map((r) => r.json.type)).toEqual([
      "post.created",
      "post.processing",
      "target.published",
      "post.published",
    ]);
    // Each carries the resource as the API showed it at that moment.
    expect(got[0].json.data).toEqual(created.body.data);
    const final = await api("GET", `/v1/posts/${created.body.data.id}`);
    expect(got[3].json.data).toEqual(final.body.data);
    expect(got[2].json.data).toEqual({ ...final.body.data.targets[0], post_id: created.body.data.id });
    for (const r of got) {
      expect(verify(hook.secret, r)).toEqual(r.json);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    }
    // A body changed on the way fails verification.
    const tampered = { ...got[0], body: got[0].body.replace("hook me", "hook you") };
    expect(() => verify(hook.secret, tampered)).toThrow();
    // Another profile's key sees none of it.
    expect((await api("GET", `/v1/webhooks/${hook.id}`, undefined, otherProfile)).status).toBe(404);
  });

  test("scheduled then cancelled; failure with auth_required; disconnect", async () => {
    const acct = await h.bluesky(profileId, "fail.test");
    await deliver();
    let from = rx.received.length;
    const later = new Date(h.clock.now().getTime() + 3600_000).toISOString();
    const post = await api("POST", "/v1/posts", {
      content: "later",
      publish_at: later,
      targets: [{ account_id: acct }],
    });
    await api("POST", `/v1/posts/${post.body.data.id}/cancel`);
    await deliver();
    expect(rx.received.slice(from).map((r) => r.json.type)).toEqual(["post.created", "post.cancelled"]);

    from = rx.received.length;
    h.emulator.failNext({ kind: "auth_expired", on: "createRecord", times: 2 });
    const bad = await api("POST", "/v1/posts", { content: "doomed", targets: [{ account_id: acct }] });
    await deliver();
    const types = rx.received.slice(from).map((r) => r.json.type);
    expect(types).toContain("account.auth_required");
    expect(types.filter((t) => t === "target.failed")).toHaveLength(1);
    expect(types.filter((t) => t === "post.failed")).toHaveLength(1);
    const failed = rx.ofType("target.failed").at(-1)!;
    expect(failed.json.data.post_id).toBe(bad.body.data.id);
    expect(failed.json.data.error).toBeTruthy();

    from = rx.received.length;
    expect((await api("DELETE", `/v1/accounts/${acct}`)).status).toBe(200);
    await deliver();
    expect(rx.received.slice(from).map((r) => r.json.type)).toEqual(["account.disconnected"]);
  });

  test("an endpoint subscribed to some events gets only those", async () => {
    const rx2 = startReceiver();
    try {
      await endpoint(["post.published"], rx2.url);
      const acct = await h.bluesky(profileId, "only.test");
      await api("POST", "/v1/posts", { content: "only published", targets: [{ account_id: acct }] });
      await deliver();
      expect(rx2.received.map((r) => r.json.type)).toEqual(["post.published"]);
    } finally {
      await rx2.stop();
    }
  });

  test("the outbox holds one event row per change, none for profiles without endpoints", async () => {
    const quiet = await h.profile();
    const acct = await h.bluesky(quiet.profileId, "quiet.test");
    await h.request("POST", "/v1/posts", {
      token: quiet.token,
      body: { content: "x", targets: [{ account_id: acct }] },
    });
    await deliver();
    const rows = await h.db.rows<{ n: number }>(
      sql`select count(*)::int as n from webhook_events where profile_id = ${quiet.profileId}`,
    );
    expect(rows[0].n).toBe(0);
  });
});

describe("delivery", () => {
  test("500 then 200: delivered on the retry with the same webhook-id; deliveries list both attempts", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      r.script({ status: 500, body: "x".repeat(5000) });
      await h.bluesky(own.profileId, "retry.test");
      await deliver();
      expect(r.received).toHaveLength(1);
      const list = await h.request("GET", `/v1/webhooks/${hook.id}/deliveries?status=pending`, { token: own.token });
      expect(list.body.data).toHaveLength(1);
      const pending = list.body.data[0];
      expect(pending.attempts[0].status_code).toBe(500);
      expect(pending.attempts[0].response_excerpt.length).toBe(1024);
      expect(pending.next_retry_at).not.toBeNull();
      h.clock.advance(10_000);
      await deliver();
      expect(r.received).toHaveLength(2);
      expect(r.received[1].headers["webhook-id"]).toBe(r.received[0].headers["webhook-id"]);
      const done = await h.request("GET", `/v1/webhooks/${hook.id}/deliveries?event=account.connected`, {
        token: own.token,
      });
      expect(done.body.data[0].status).toBe("delivered");
      expect(done.body.data[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 200]);

      // Redeliver sends the same event again, same webhook-id.
      const again = await h.request("POST", `/v1/webhooks/${hook.id}/deliveries/${pending.id}/redeliver`, {
        token: own.token,
      });
      expect(again.status).toBe(200);
      expect(again.body.data.attempts).toHaveLength(3);
      expect(r.received[2].headers["webhook-id"]).toBe(r.received[0].headers["webhook-id"]);
    } finally {
      await r.stop();
    }
  });

  test("429 Retry-After is honoured", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } });
      r.script({ status: 429, headers: { "retry-after": "120" } });
      await h.bluesky(own.profileId, "slow.test");
      await deliver();
      h.clock.advance(60_000);
      await deliver();
      expect(r.received).toHaveLength(1);
      h.clock.advance(61_000);
      await deliver();
      expect(r.received).toHaveLength(2);
    } finally {
      await r.stop();
    }
  });

  test("410 Gone disables the endpoint with a note; nothing more is sent until it is turned on again", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      r.script({ status: 410 });
      await h.bluesky(own.profileId, "gone.test");
      await deliver();
      const read = await h.request("GET", `/v1/webhooks/${hook.id}`, { token: own.token });
      expect(read.body.data.is_active).toBe(false);
      expect(read.body.data.note.type).toBe("endpoint.disabled");
      await h.bluesky(own.profileId, "gone2.test");
      h.clock.advance(3600_000);
      await deliver();
      expect(r.received).toHaveLength(1);
      const on = await h.request("PATCH", `/v1/webhooks/${hook.id}`, { token: own.token, body: { is_active: true } });
      expect(on.body.data.note).toBeNull();
    } finally {
      await r.stop();
    }
  });

  test("a post from before any endpoint, two targets claimed in one transaction: processing and published once each", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const a = await h.bluesky(own.profileId, "early-a.test");
      const b = await h.bluesky(own.profileId, "early-b.test");
      // Scheduled, so nothing moves until the clock says so (a post published now may start at once).
      const publish_at = new Date(h.clock.now().getTime() + 60_000).toISOString();
      const body = { content: "made before the webhook", publish_at, targets: [{ account_id: a }, { account_id: b }] };
      const post = (await h.request("POST", "/v1/posts", { token: own.token, body })).body.data;
      expect(post.status).toBe("scheduled");
      await h.request("POST", "/v1/webhooks", {
        token: own.token,
        body: { url: r.url, events: ["post.processing", "post.published"] },
      });
      h.clock.advance(61_000);
      await deliver();
      const types = r.received.map((x) => x.json.type);
      expect(types).toEqual(["post.processing", "post.published"]);
      expect(r.received[1].json.data).toMatchObject({ id: post.id, status: "published" });
    } finally {
      await r.stop();
    }
  });

  test("deliveries owed to a paused endpoint are kept and go out in order once it is active again", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      await h.bluesky(own.profileId, "owed-1.test");
      await h.bluesky(own.profileId, "owed-2.test");
      const off = await h.request("PATCH", `/v1/webhooks/${hook.id}`, { token: own.token, body: { is_active: false } });
      expect(off.body.data.is_active).toBe(false);
      await h.bluesky(own.profileId, "while-paused.test");
      h.clock.advance(3600_000);
      await deliver();
      expect(r.received).toHaveLength(0);
      const pending = await h.request("GET", `/v1/webhooks/${hook.id}/deliveries?status=pending`, { token: own.token });
      expect(pending.body.data).toHaveLength(2);
      await h.request("PATCH", `/v1/webhooks/${hook.id}`, { token: own.token, body: { is_active: true } });
      await deliver();
      expect(r.received.map((x) => x.json.data.username)).toEqual(["owed-1.test", "owed-2.test"]);
    } finally {
      await r.stop();
    }
  });

  test("failing for 3 days disables the endpoint", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      r.script(...Array.from({ length: 20 }, () => ({ status: 503 })));
      await h.bluesky(own.profileId, "down.test");
      for (let i = 0; i < 12; i++) {
        await deliver();
        h.clock.advance(12 * 3600_000);
      }
      const read = await h.request("GET", `/v1/webhooks/${hook.id}`, { token: own.token });
      expect(read.body.data.is_active).toBe(false);
      expect(read.body.data.note.reason).toContain("3 days");
    } finally {
      await r.stop();
    }
  });

  test("secret rotation: both secrets sign for 24 h, then only the new one", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      const rotated = await h.request("POST", `/v1/webhooks/${hook.id}/rotate-secret`, { token: own.token });
      expect(rotated.status).toBe(200);
      const fresh = rotated.body.data.secret as string;
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(hook.secret);
      expect(rotated.body.data.previous_secret_expires_at).not.toBeNull();
      const t1 = await h.request("POST", `/v1/webhooks/${hook.id}/test`, { token: own.token });
      expect(t1.body.data.status).toBe("delivered");
      expect(verify(hook.secret, r.received[0]).type).toBe("webhook.test");
      expect(verify(fresh, r.received[0]).type).toBe("webhook.test");
      h.clock.advance(24 * 3600_000 + 1000);
      await h.request("POST", `/v1/webhooks/${hook.id}/test`, { token: own.token });
      expect(verify(fresh, r.received[1]).type).toBe("webhook.test");
      expect(() => verify(hook.secret, r.received[1])).toThrow();
      // The secret is stored encrypted, never in clear.
      const stored = await h.db.rows<{ secrets: string }>(
        sql`select secrets from webhook_endpoints where id = ${hook.id}`,
      );
      expect(stored[0].secrets).not.toContain(fresh.slice(6));
    } finally {
      await r.stop();
    }
  });
});

describe("SSRF guard", () => {
  test("loopback, private, link-local and metadata URLs are refused at creation", async () => {
    h.ctx.config.webhookAllowPrivate = false;
    try {
      for (const url of [
        rx.url,
        "http://10.1.2.3/hook",
        "https://169.254.169.254/latest",
        "http://metadata.google.internal/x",
        "https://[::1]/x",
        "ftp://example.com/x",
        "not a url",
      ]) {
        const res = await api("POST", "/v1/webhooks", { url, events: ["*"] });
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe("webhook_url_not_allowed");
        expect(res.body.error.hint).toBeTruthy();
      }
    } finally {
      h.ctx.config.webhookAllowPrivate = true;
    }
  });

  test("checked again at delivery: nothing reaches a URL the guard refuses now", async () => {
    const own = await h.profile();
    const r = startReceiver();
    try {
      const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: r.url, events: ["*"] } }))
        .body.data;
      h.ctx.config.webhookAllowPrivate = false;
      const t = await h.request("POST", `/v1/webhooks/${hook.id}/test`, { token: own.token });
      expect(t.body.data.status).toBe("pending");
      expect(t.body.data.attempts[0].error).toContain("loopback");
      expect(r.received).toHaveLength(0);
    } finally {
      h.ctx.config.webhookAllowPrivate = true;
      await r.stop();
    }
  });
});

describe("routes", () => {
  test("bad bodies are 400 with the envelope and change nothing", async () => {
    const own = await h.profile();
    for (const body of [
      { url: rx.url, events: [] },
      { url: rx.url, events: ["post.nope"] },
      { url: rx.url },
      { url: rx.url, events: ["*"], extra: 1 },
    ]) {
      const res = await h.request("POST", "/v1/webhooks", { token: own.token, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBeTruthy();
    }
    expect((await h.request("GET", "/v1/webhooks", { token: own.token })).body.data).toHaveLength(0);
  });

  test("scopes and other profiles' ids on every route", async () => {
    const own = await h.profile();
    const hook = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: rx.url, events: ["*"] } }))
      .body.data;
    const t = await h.request("POST", `/v1/webhooks/${hook.id}/test`, { token: own.token });
    const deliveryId = t.body.data.id;
    const readOnly = (await h.profile({ scopes: ["webhooks:read"] })).token;
    const none = (await h.profile({ scopes: ["posts:read", "posts:write"] })).token;
    const stranger = (await h.profile()).token;
    const routes: [string, string, "read" | "write", unknown?][] = [
      ["GET", `/v1/webhooks/${hook.id}`, "read"],
      ["GET", `/v1/webhooks/${hook.id}/deliveries`, "read"],
      ["PATCH", `/v1/webhooks/${hook.id}`, "write", { description: "x" }],
      ["POST", `/v1/webhooks/${hook.id}/rotate-secret`, "write"],
      ["POST", `/v1/webhooks/${hook.id}/test`, "write"],
      ["POST", `/v1/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`, "write"],
      ["DELETE", `/v1/webhooks/${hook.id}`, "write"],
    ];
    for (const [method, path, need, body] of routes) {
      expect((await h.request(method, path, { token: none, body })).status).toBe(403);
      if (need === "write") expect((await h.request(method, path, { token: readOnly, body })).status).toBe(403);
      const foreign = await h.request(method, path, { token: stranger, body });
      expect(foreign.status).toBe(404);
      expect(foreign.body.error.code).toBe("not_found");
    }
    expect((await h.request("GET", "/v1/webhooks", { token: none })).status).toBe(403);
    expect(
      (await h.request("POST", "/v1/webhooks", { token: readOnly, body: { url: rx.url, events: ["*"] } })).status,
    ).toBe(403);
    expect((await h.request("GET", "/v1/webhooks", { token: stranger })).body.data).toHaveLength(0);
    // A delivery id of another webhook is 404 too.
    const second = (await h.request("POST", "/v1/webhooks", { token: own.token, body: { url: rx.url, events: ["*"] } }))
      .body.data;
    expect(
      (await h.request("POST", `/v1/webhooks/${second.id}/deliveries/${deliveryId}/redeliver`, { token: own.token }))
        .status,
    ).toBe(404);
    // Everything still there for its owner.
    expect((await h.request("GET", `/v1/webhooks/${hook.id}`, { token: own.token })).body.data.description).toBeNull();
    expect((await h.request("DELETE", `/v1/webhooks/${hook.id}`, { token: own.token })).status).toBe(200);
    expect((await h.request("GET", `/v1/webhooks/${hook.id}`, { token: own.token })).status).toBe(404);
  });

  test("crier_post_status_of agrees with postStatus on every combination of two targets", async () => {
    const { postStatus, TARGET_STATUSES } = await import("../../../src/domain/status.ts");
    for (const a of TARGET_STATUSES)
      for (const b of TARGET_STATUSES) {
        const rows = await h.db.rows<{ s: string }>(sql`select crier_post_status_of(array[${a}, ${b}]::text[]) as s`);
        expect(rows[0].s).toBe(postStatus([a, b]));
      }
  });
});

test("OpenAPI describes every webhook payload in its 3.1 webhooks object", async () => {
  const doc = (await h.request("GET", "/openapi.json")).body;
  const { WEBHOOK_EVENTS } = await import("../../../src/domain/webhook-events.ts");
  for (const event of WEBHOOK_EVENTS) {
    const schema = doc.webhooks[event].post.requestBody.content["application/json"].schema;
    expect(schema.properties.type.const).toBe(event);
    expect(schema.properties.data).toBeTruthy();
  }
  expect(doc.paths["/v1/webhooks/{id}/deliveries"].get["x-scope"]).toBe("webhooks:read");
});
