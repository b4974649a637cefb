import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineHarness, type EngineHarness } from "../../support/engine-kit.ts";

// Queue slots are wall-clock times: across a daylight-saving change a 09:00 slot stays 09:00 local and its
// UTC time moves by the hour, in Berlin (last Sunday of March and of October) and New York (second
// Sunday of March, first of November). The engine publishes queued posts when that local time comes.

let h: EngineHarness;
let token: string;
let berlin: string;
let newYork: string;

const EVERY_DAY = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((day) => ({ day, time: "09:00" }));
const HOUR = 3_600_000;

beforeAll(async () => {
  h = await engineHarness();
  const p = await h.profile();
  token = p.token;
  berlin = await h.bluesky(p.profileId, "dst-berlin.test");
  newYork = await h.bluesky(p.profileId, "dst-newyork.test");
});
afterAll(async () => {
  await h.engine.stop();
  await h.close();
});

const put = (id: string, time_zone: string, slots: unknown[]) =>
  h.request("PUT", `/v1/accounts/${id}/queue`, { token, body: { time_zone, slots } });
const next = async (id: string, count: number) =>
  (await h.request("GET", `/v1/accounts/${id}/queue/next?count=${count}`, { token })).body.data as {
    at: string;
    local: string;
    day: string;
  }[];
const queuePost = async (account: string, content: string) =>
  (
    await h.request("POST", "/v1/posts", {
      token,
      body: { content, queue: true, targets: [{ account_id: account }] },
    })
  ).body.data;
const statusOf = async (id: string) =>
  (await h.request("GET", `/v1/posts/${id}`, { token })).body.data.targets[0].status as string;

/** The UTC hour of each day's 09:00 slot around a change: `before` until the change's day, `after` from it. */
function expectHours(list: { at: string; local: string }[], change: string, before: number, after: number) {
  for (const o of list) {
    expect(o.local.endsWith("T09:00")).toBe(true);
    const day = o.local.slice(0, 10);
    expect(new Date(o.at).getUTCHours()).toBe(day < change ? before : after);
  }
  expect(list.some((o) => o.local.slice(0, 10) < change)).toBe(true);
  expect(list.some((o) => o.local.slice(0, 10) >= change)).toBe(true);
}

describe("spring forward", () => {
  test("09:00 stays 09:00 local in both zones; the UTC time moves an hour earlier", async () => {
    h.clock.set(new Date("2026-03-02T12:00:00Z"));
    await put(berlin, "Europe/Berlin", EVERY_DAY);
    await put(newYork, "America/New_York", EVERY_DAY);
    // Berlin: CET (08:00Z) until 29 March, CEST (07:00Z) from then. New York: EST (14:00Z), EDT (13:00Z) from 8 March.
    expectHours(await next(berlin, 40), "2026-03-29", 8, 7);
    expectHours(await next(newYork, 20), "2026-03-08", 14, 13);
  });

  test("a time the change skips is moved forward by the gap; the rest of the year it is as set", async () => {
    h.clock.set(new Date("2026-03-02T12:00:00Z"));
    await put(berlin, "Europe/Berlin", [{ day: "sun", time: "02:30" }]);
    await put(newYork, "America/New_York", [{ day: "sun", time: "02:30" }]);
    const b = await next(berlin, 5);
    expect(b.map((o) => o.local)).toEqual([
      "2026-03-08T02:30",
      "2026-03-15T02:30",
      "2026-03-22T02:30",
      "2026-03-29T03:30",
      "2026-04-05T02:30",
    ]);
    expect(b[3].at).toBe("2026-03-29T01:30:00.000Z");
    const n = await next(newYork, 2);
    expect(n.map((o) => o.local)).toEqual(["2026-03-08T03:30", "2026-03-15T02:30"]);
    expect(n[0].at).toBe("2026-03-08T07:30:00.000Z");
  });

  test("queued posts are published when 09:00 local comes, before and after the change", async () => {
    // Friday 27 March, 12:00Z: Berlin's next 09:00s are Saturday (CET, 08:00Z) and Sunday (CEST, 07:00Z);
    // New York's, already on EDT, this Friday at 13:00Z.
    h.clock.set(new Date("2026-03-27T12:00:00Z"));
    await put(berlin, "Europe/Berlin", EVERY_DAY);
    await put(newYork, "America/New_York", EVERY_DAY);
    const saturday = await queuePost(berlin, "berlin saturday");
    const sunday = await queuePost(berlin, "berlin sunday");
    const ny = await queuePost(newYork, "new york friday");
    expect(saturday.publish_at).toBe("2026-03-28T08:00:00.000Z");
    expect(sunday.publish_at).toBe("2026-03-29T07:00:00.000Z");
    expect(ny.publish_at).toBe("2026-03-27T13:00:00.000Z");

    for (const [post, at] of [
      [ny, "2026-03-27T13:00:00.000Z"],
      [saturday, "2026-03-28T08:00:00.000Z"],
      [sunday, "2026-03-29T07:00:00.000Z"],
    ] as const) {
      h.clock.set(new Date(new Date(at).getTime() - 60_000));
      await h.engine.runUntilIdle();
      expect(await statusOf(post.id)).toBe("scheduled");
      h.clock.set(new Date(at));
      await h.engine.runUntilIdle();
      expect(await statusOf(post.id)).toBe("published");
    }
    // Sunday's post went out at 09:00 CEST, an hour earlier in UTC than Saturday's.
    expect(new Date(sunday.publish_at).getTime() - new Date(saturday.publish_at).getTime()).toBe(23 * HOUR);
  });
});

describe("fall back", () => {
  test("09:00 stays 09:00 local in both zones; the UTC time moves an hour later", async () => {
    h.clock.set(new Date("2026-10-19T12:00:00Z"));
    await put(berlin, "Europe/Berlin", EVERY_DAY);
    await put(newYork, "America/New_York", EVERY_DAY);
    // Berlin: CEST (07:00Z) until 25 October, CET (08:00Z) from then.
    // New York: EDT (13:00Z) until 1 November, EST (14:00Z) from then.
    expectHours(await next(berlin, 14), "2026-10-25", 7, 8);
    expectHours(await next(newYork, 20), "2026-11-01", 13, 14);
  });

  test("a time the change repeats is its first occurrence", async () => {
    h.clock.set(new Date("2026-10-19T12:00:00Z"));
    await put(berlin, "Europe/Berlin", [{ day: "sun", time: "02:30" }]);
    await put(newYork, "America/New_York", [{ day: "sun", time: "01:30" }]);
    // 02:30 happens twice in Berlin on 25 October (CEST, then CET): the first is 00:30Z.
    const [b] = await next(berlin, 1);
    expect(b).toMatchObject({ at: "2026-10-25T00:30:00.000Z", local: "2026-10-25T02:30" });
    // 01:30 happens twice in New York on 1 November (EDT, then EST): the first is 05:30Z.
    const n = await next(newYork, 3);
    expect(n[1]).toMatchObject({ at: "2026-11-01T05:30:00.000Z", local: "2026-11-01T01:30" });
    expect(n[2]).toMatchObject({ at: "2026-11-08T06:30:00.000Z", local: "2026-11-08T01:30" });
  });
});
