import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// Posting queues over real HTTP on the real database: the queue's own routes, posts created with
// queue: true, and what cancelling, deleting, editing and shuffling do to the slots they hold.

let h: Harness;
let token: string;
let alice: string;
let bob: string;
let carol: string;
let foreign: string;

// Monday 2026-03-02 12:00 UTC (13:00 in Berlin): far from any daylight-saving change.
const MONDAY_NOON = new Date("2026-03-02T12:00:00Z");

const connect = async (profileId: string, did: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId,
      platform: "bluesky",
      remoteId: did,
      username: `${did}.test`,
      credentials: { did, accessJwt: "a", refreshJwt: "r", handle: did },
    })
  ).id;

beforeAll(async () => {
  h = await postsHarness();
  h.clock.set(MONDAY_NOON);
  const p = await h.profile();
  token = p.token;
  alice = await connect(p.profileId, "did:plc:qalice");
  bob = await connect(p.profileId, "did:plc:qbob");
  carol = await connect(p.profileId, "did:plc:qcarol");
  const other = await h.profile({ name: "other" });
  foreign = await connect(other.profileId, "did:plc:qforeign");
});
afterAll(() => h.close());

const put = (id: string, body: unknown, t = token) => h.request("PUT", `/v1/accounts/${id}/queue`, { token: t, body });
const get = (id: string) => h.request("GET", `/v1/accounts/${id}/queue`, { token });
const next = async (id: string, count?: number) =>
  (await h.request("GET", `/v1/accounts/${id}/queue/next${count ? `?count=${count}` : ""}`, { token })).body.data;
const queuePost = (targets: string[], extra: Record<string, unknown> = {}) =>
  h.request("POST", "/v1/posts", {
    token,
    body: { content: "queued", queue: true, targets: targets.map((account_id) => ({ account_id })), ...extra },
  });
const read = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;

describe("the queue's routes", () => {
  test("an account without a queue answers an empty one", async () => {
    const res = await get(carol);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ account_id: carol, time_zone: "UTC", slots: [], updated_at: null });
    expect(await next(carol)).toEqual([]);
  });

  test("PUT stores the slots sorted (mon first, then time), GET reads them back, the zone's case is fixed", async () => {
    const res = await put(alice, {
      time_zone: "europe/berlin",
      slots: [
        { day: "wed", time: "17:30" },
        { day: "mon", time: "09:00" },
        { day: "mon", time: "08:15" },
      ],
    });
    expect(res.status).toBe(200);
    const expected = {
      account_id: alice,
      time_zone: "Europe/Berlin",
      slots: [
        { day: "mon", time: "08:15" },
        { day: "mon", time: "09:00" },
        { day: "wed", time: "17:30" },
      ],
      updated_at: MONDAY_NOON.toISOString(),
    };
    expect(res.body.data).toEqual(expected);
    expect((await get(alice)).body.data).toEqual(expected);
  });

  test("next lists the coming slots from now, in the zone's wall-clock time", async () => {
    // Monday 13:00 Berlin: Monday's slots have passed, so Wednesday 17:30 comes first.
    expect(await next(alice, 4)).toEqual([
      { at: "2026-03-04T16:30:00.000Z", local: "2026-03-04T17:30", day: "wed", time: "17:30" },
      { at: "2026-03-09T07:15:00.000Z", local: "2026-03-09T08:15", day: "mon", time: "08:15" },
      { at: "2026-03-09T08:00:00.000Z", local: "2026-03-09T09:00", day: "mon", time: "09:00" },
      { at: "2026-03-11T16:30:00.000Z", local: "2026-03-11T17:30", day: "wed", time: "17:30" },
    ]);
    expect(await next(alice)).toHaveLength(10);
    const tooMany = await h.request("GET", `/v1/accounts/${alice}/queue/next?count=101`, { token });
    expect(tooMany.status).toBe(400);
  });

  test("every bad body is a 400 with its own code and changes nothing", async () => {
    const before = (await get(alice)).body.data;
    const cases: [unknown, string, RegExp][] = [
      [{ time_zone: "Mars/Olympus", slots: [] }, "invalid_time_zone", /Mars\/Olympus/],
      [{ time_zone: "+01:00", slots: [] }, "invalid_time_zone", /\+01:00/],
      [
        {
          time_zone: "UTC",
          slots: [
            { day: "mon", time: "09:00" },
            { day: "funday", time: "09:00" },
          ],
        },
        "invalid_slot",
        /slots\[1\]\.day/,
      ],
      [{ time_zone: "UTC", slots: [{ day: "mon", time: "24:00" }] }, "invalid_slot", /slots\[0\]\.time/],
      [{ time_zone: "UTC", slots: [{ day: "mon", time: "9:00" }] }, "invalid_slot", /slots\[0\]\.time/],
      [
        {
          time_zone: "UTC",
          slots: [
            { day: "tue", time: "10:00" },
            { day: "tue", time: "10:00" },
          ],
        },
        "duplicate_slot",
        /slots\[1\]/,
      ],
      [
        {
          time_zone: "UTC",
          slots: Array.from({ length: 101 }, (_, i) => ({
            day: "mon",
            time: `${String(Math.floor(i / 60)).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`,
          })),
        },
        "too_many_slots",
        /101/,
      ],
      [{ time_zone: "UTC" }, "validation_error", /./],
    ];
    for (const [body, code, message] of cases) {
      const res = await put(alice, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toMatch(message);
      expect(res.body.error.hint).toBeTruthy();
    }
    expect((await get(alice)).body.data).toEqual(before);
  });

  test("an account of another profile, or none at all, is 404 on every route", async () => {
    for (const id of [foreign, "00000000-0000-4000-8000-000000000000"]) {
      expect((await get(id)).status).toBe(404);
      expect((await put(id, { time_zone: "UTC", slots: [] })).status).toBe(404);
      expect((await h.request("GET", `/v1/accounts/${id}/queue/next`, { token })).status).toBe(404);
      expect((await h.request("POST", `/v1/accounts/${id}/queue/shuffle`, { token })).status).toBe(404);
    }
  });

  test("scopes: reading needs accounts:read, changing accounts:write, shuffling posts:write", async () => {
    const reader = (await h.profile({ scopes: ["accounts:read"] })).token;
    const readerAccount = foreign; // any id: the scope is checked before the account
    expect((await put(readerAccount, { time_zone: "UTC", slots: [] }, reader)).status).toBe(403);
    expect((await h.request("POST", `/v1/accounts/${readerAccount}/queue/shuffle`, { token: reader })).status).toBe(
      403,
    );
    const spec = (await h.request("GET", "/openapi.json")).body;
    expect(spec.paths["/v1/accounts/{id}/queue"].get["x-scope"]).toBe("accounts:read");
    expect(spec.paths["/v1/accounts/{id}/queue"].put["x-scope"]).toBe("accounts:write");
    expect(spec.paths["/v1/accounts/{id}/queue/shuffle"].post["x-scope"]).toBe("posts:write");
  });
});

describe("posts created with queue: true", () => {
  beforeAll(async () => {
    await put(bob, { time_zone: "America/New_York", slots: [{ day: "tue", time: "10:00" }] });
  });

  test("each account gives its next free slot; the post's publish_at is the earliest", async () => {
    const res = await queuePost([alice, bob]);
    expect(res.status).toBe(201);
    const post = res.body.data;
    expect(post.status).toBe("scheduled");
    // alice (Berlin): Wednesday 17:30 = 16:30Z; bob (New York, still EST): Tuesday 10:00 = 15:00Z.
    const [a, b] = post.targets;
    expect(a.scheduled_time).toBe("2026-03-04T16:30:00.000Z");
    expect(a.queue_slot).toBe("2026-03-04T16:30:00.000Z");
    expect(b.scheduled_time).toBe("2026-03-03T15:00:00.000Z");
    expect(b.queue_slot).toBe("2026-03-03T15:00:00.000Z");
    expect(post.publish_at).toBe("2026-03-03T15:00:00.000Z");
    expect(await read(post.id)).toEqual(post);
    // The slots taken are no longer offered.
    expect((await next(alice, 1))[0].at).toBe("2026-03-09T07:15:00.000Z");
    expect((await next(bob, 1))[0].at).toBe("2026-03-10T14:00:00.000Z");
  });

  test("the next post takes the next slot; the items of a thread share one", async () => {
    const post = (await queuePost([alice, alice])).body.data;
    expect(post.targets.map((t: any) => t.queue_slot)).toEqual([
      "2026-03-09T07:15:00.000Z",
      "2026-03-09T07:15:00.000Z",
    ]);
    const third = (await queuePost([alice])).body.data;
    expect(third.targets[0].queue_slot).toBe("2026-03-09T08:00:00.000Z");
  });

  test("queue with publish_at, or on an account without slots, is a 400 that stores nothing", async () => {
    const before = (await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length;
    const both = await queuePost([alice], { publish_at: new Date(MONDAY_NOON.getTime() + 86_400_000).toISOString() });
    expect(both.status).toBe(400);
    expect(both.body.error.code).toBe("queue_and_publish_at");
    const empty = await queuePost([alice, carol]);
    expect(empty.status).toBe(400);
    expect(empty.body.error.code).toBe("queue_empty");
    expect(empty.body.error.message).toContain(`targets[1] (account ${carol})`);
    expect(empty.body.error.hint).toContain(`PUT /v1/accounts/${carol}/queue`);
    expect((await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length).toBe(before);
    // No slot was taken by the refused posts.
    expect((await next(alice, 1))[0].at).toBe("2026-03-11T16:30:00.000Z");
  });

  test("validate accepts queue, shows the slot each target would take, and reports the same 400s as problems", async () => {
    const ok = await h.request("POST", "/v1/posts/validate", {
      token,
      body: { content: "x", queue: true, targets: [{ account_id: alice }, { account_id: carol }] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.ok).toBe(false);
    expect(ok.body.data.targets[0].queue_slot).toBe("2026-03-11T16:30:00.000Z");
    expect(ok.body.data.targets[0].ok).toBe(true);
    expect(ok.body.data.targets[1].problems.map((p: any) => p.code)).toEqual(["queue_empty"]);
    const both = await h.request("POST", "/v1/posts/validate", {
      token,
      body: { content: "x", queue: true, publish_at: "2030-01-01T00:00:00Z", targets: [{ account_id: alice }] },
    });
    expect(both.body.data.problems.map((p: any) => p.code)).toEqual(["queue_and_publish_at"]);
    // Validating took nothing.
    expect((await next(alice, 1))[0].at).toBe("2026-03-11T16:30:00.000Z");
  });

  test("Idempotency-Key: a replay answers the same post and takes no second slot", async () => {
    const send = () =>
      h.request("POST", "/v1/posts", {
        token,
        headers: { "idempotency-key": "queue-once" },
        body: { content: "once", queue: true, targets: [{ account_id: bob }] },
      });
    const first = await send();
    const again = await send();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(first.body.data.targets[0].queue_slot).toBe("2026-03-10T14:00:00.000Z");
    expect((await next(bob, 1))[0].at).toBe("2026-03-17T14:00:00.000Z");
  });
});

describe("freeing and moving slots", () => {
  let dana: string;
  const SLOTS = { time_zone: "UTC", slots: ["mon", "tue", "wed", "thu", "fri"].map((day) => ({ day, time: "12:30" })) };
  beforeAll(async () => {
    const p = await h.profile({ name: "frees" });
    token = p.token;
    dana = await connect(p.profileId, "did:plc:qdana");
    await put(dana, SLOTS);
  });
  const slotOf = async (id: string) => (await read(id)).targets[0].queue_slot;

  test("cancel, target cancel and delete free the slot for the next post", async () => {
    const first = (await queuePost([dana])).body.data; // Monday 12:30
    expect(first.targets[0].queue_slot).toBe("2026-03-02T12:30:00.000Z");
    const cancelled = (await h.request("POST", `/v1/posts/${first.id}/cancel`, { token })).body.data;
    expect(cancelled.targets[0].queue_slot).toBeNull();
    expect((await next(dana, 1))[0].at).toBe("2026-03-02T12:30:00.000Z");

    const second = (await queuePost([dana])).body.data;
    expect(second.targets[0].queue_slot).toBe("2026-03-02T12:30:00.000Z");
    const t = second.targets[0].target_post_id;
    const target = (await h.request("POST", `/v1/posts/${second.id}/targets/${t}/cancel`, { token })).body.data;
    expect(target.queue_slot).toBeNull();
    expect((await next(dana, 1))[0].at).toBe("2026-03-02T12:30:00.000Z");

    const third = (await queuePost([dana])).body.data;
    expect(third.targets[0].queue_slot).toBe("2026-03-02T12:30:00.000Z");
    expect((await h.request("DELETE", `/v1/posts/${third.id}`, { token })).status).toBe(200);
    expect((await next(dana, 1))[0].at).toBe("2026-03-02T12:30:00.000Z");
  });

  test("a thread keeps its slot while one of its items still waits", async () => {
    const thread = (await queuePost([dana, dana])).body.data;
    const [one] = thread.targets;
    await h.request("POST", `/v1/posts/${thread.id}/targets/${one.target_post_id}/cancel`, { token });
    expect((await next(dana, 1))[0].at).toBe("2026-03-03T12:30:00.000Z");
    expect((await read(thread.id)).targets[1].queue_slot).toBe("2026-03-02T12:30:00.000Z");
    await h.request("DELETE", `/v1/posts/${thread.id}`, { token });
  });

  test("an edit of the text keeps the slot; a new publish_at moves the post off the queue", async () => {
    const post = (await queuePost([dana])).body.data;
    const edited = (await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { content: "edited" } })).body.data;
    expect(edited.targets[0].queue_slot).toBe("2026-03-02T12:30:00.000Z");
    expect(edited.targets[0].scheduled_time).toBe("2026-03-02T12:30:00.000Z");
    const at = "2026-04-01T08:00:00.000Z";
    const moved = (await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { publish_at: at } })).body.data;
    expect(moved.targets[0].queue_slot).toBeNull();
    expect(moved.targets[0].scheduled_time).toBe(at);
    expect((await next(dana, 1))[0].at).toBe("2026-03-02T12:30:00.000Z");
    // An edit cannot put a post back on the queue: the key is ignored, and named as ignored.
    const requeue = await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { queue: true } });
    expect(requeue.headers.get("crier-ignored-fields")).toContain("queue");
    expect(requeue.body.data.targets[0].queue_slot).toBeNull();
    await h.request("DELETE", `/v1/posts/${post.id}`, { token });
  });

  test("publishing a queued post now frees its slot", async () => {
    const post = (await queuePost([dana])).body.data;
    const now = (await h.request("POST", `/v1/posts/${post.id}/publish`, { token })).body.data;
    expect(now.targets[0].queue_slot).toBeNull();
    expect((await next(dana, 1))[0].at).toBe("2026-03-02T12:30:00.000Z");
  });

  test("shuffle fills the gaps and new slots with the queued posts, in some order, and moves publish_at", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await queuePost([dana])).body.data.id); // Mon..Fri 12:30
    expect(await slotOf(ids[4])).toBe("2026-03-06T12:30:00.000Z");
    // Cancel Tuesday's and Thursday's posts; add a slot on Monday evening.
    await h.request("POST", `/v1/posts/${ids[1]}/cancel`, { token });
    await h.request("POST", `/v1/posts/${ids[3]}/cancel`, { token });
    await put(dana, { ...SLOTS, slots: [...SLOTS.slots, { day: "mon", time: "18:00" }] });
    // Putting slots moves nothing.
    expect(await slotOf(ids[4])).toBe("2026-03-06T12:30:00.000Z");
    // The dashboard posts an empty JSON object.
    const res = await h.request("POST", `/v1/accounts/${dana}/queue/shuffle`, { token, body: {} });
    expect(res.status).toBe(200);
    const moved = res.body.data;
    expect(moved.map((m: any) => m.at)).toEqual([
      "2026-03-02T12:30:00.000Z",
      "2026-03-02T18:00:00.000Z",
      "2026-03-03T12:30:00.000Z",
    ]);
    expect(moved.map((m: any) => m.post_id).sort()).toEqual([ids[0], ids[2], ids[4]].sort());
    for (const m of moved) {
      const post = await read(m.post_id);
      expect(post.targets[0].queue_slot).toBe(m.at);
      expect(post.targets[0].scheduled_time).toBe(m.at);
      expect(post.publish_at).toBe(m.at);
      expect(m.previous_at).toMatch(/^2026-03-0[246]T12:30/);
    }
    const empty = await h.request("POST", `/v1/accounts/${bob}/queue/shuffle`, { token });
    expect(empty.status).toBe(404); // bob belongs to the first profile
  });

  test("shuffle of an account without slots is 400 queue_empty; with nothing queued, an empty list", async () => {
    const p = await h.profile({ name: "shuffle-empty" });
    const erin = await connect(p.profileId, "did:plc:qerin");
    const none = await h.request("POST", `/v1/accounts/${erin}/queue/shuffle`, { token: p.token });
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe("queue_empty");
    await put(erin, SLOTS, p.token);
    const nothing = await h.request("POST", `/v1/accounts/${erin}/queue/shuffle`, { token: p.token });
    expect(nothing.status).toBe(200);
    expect(nothing.body.data).toEqual([]);
  });
});
