/**
 * The series API without an engine running: what POST /v1/posts refuses about repeat (and stores
 * nothing), reading and listing series, edits checked as post edits are, a timing change moving the
 * waiting occurrence, and the series job never making one occurrence twice.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import { advanceSeries } from "../../../src/engine/series.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

let h: Harness;
let token: string;
let otherToken: string;
let alice: string;

beforeAll(async () => {
  h = await postsHarness();
  const p = await h.profile();
  token = p.token;
  otherToken = (await h.profile()).token;
  alice = (
    await upsertConnectedAccount(h.ctx, {
      profileId: p.profileId,
      platform: "bluesky",
      remoteId: "did:plc:alice",
      username: "alice.test",
      credentials: { did: "did:plc:alice", accessJwt: "a", refreshJwt: "r", handle: "alice.test" },
    })
  ).id;
});
afterAll(() => h.close());

const DAY = 86_400_000;
const inADay = () => new Date(h.clock.now().getTime() + DAY).toISOString();
const body = (repeat: unknown, extra: Record<string, unknown> = {}) => ({
  content: "recurring",
  publish_at: inADay(),
  targets: [{ account_id: alice }],
  repeat,
  ...extra,
});
const create = (b: unknown, t = token) => h.request("POST", "/v1/posts", { token: t, body: b });
const seriesList = async () => (await h.request("GET", "/v1/series", { token })).body.data as any[];
const postCount = async () => (await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length;

describe("POST /v1/posts with repeat refuses", () => {
  test.each([
    [
      "a part outside the subset",
      { rule: "FREQ=WEEKLY;BYHOUR=9", time_zone: "UTC" },
      {},
      "invalid_repeat_rule",
      "BYHOUR",
    ],
    ["FREQ=YEARLY", { rule: "FREQ=YEARLY", time_zone: "UTC" }, {}, "invalid_repeat_rule", "FREQ=YEARLY"],
    [
      "COUNT with UNTIL",
      { rule: "FREQ=DAILY;COUNT=2;UNTIL=20991231", time_zone: "UTC" },
      {},
      "invalid_repeat_rule",
      "COUNT and UNTIL",
    ],
    [
      "an UNTIL before the start",
      { rule: "FREQ=DAILY;UNTIL=20200101", time_zone: "UTC" },
      {},
      "invalid_repeat_rule",
      "no occurrence",
    ],
    ["a zone that is not IANA", { rule: "FREQ=DAILY", time_zone: "Berlin" }, {}, "invalid_time_zone", "Berlin"],
    [
      "no publish_at",
      { rule: "FREQ=DAILY", time_zone: "UTC" },
      { publish_at: null },
      "publish_at_required",
      "publish_at",
    ],
  ])("%s, storing nothing", async (_name, repeat, extra, code, words) => {
    const before = await postCount();
    const res = await create(body(repeat, extra));
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(words);
    expect(res.body.error.hint).toBeString();
    expect(await postCount()).toBe(before);
    expect(await seriesList()).toHaveLength(0);
  });

  test("a rule that is not a string is the schema's 400", async () => {
    const res = await create(body({ rule: 5, time_zone: "UTC" }));
    expect(res.status).toBe(400);
    expect(await seriesList()).toHaveLength(0);
  });

  test("POST /v1/posts/validate names the repeat problem", async () => {
    const res = await h.request("POST", "/v1/posts/validate", {
      token,
      body: body({ rule: "FREQ=WEEKLY;BYMONTH=1", time_zone: "UTC" }),
    });
    expect(res.status).toBe(200);
    expect(res.body.data.ok).toBe(false);
    expect(res.body.data.problems).toContainEqual(
      expect.objectContaining({ code: "invalid_repeat_rule", field: "repeat.rule" }),
    );
  });
});

describe("a series", () => {
  test("is read with its rule, template, next times and posts; other profiles get 404", async () => {
    const res = await create(
      body(
        { rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=10", time_zone: "Europe/Berlin" },
        { publish_at: "2027-03-22T09:00:00+01:00" },
      ),
    );
    expect(res.status).toBe(201);
    const post = res.body.data;
    const s = (await h.request("GET", `/v1/series/${post.series_id}`, { token })).body.data;
    expect(s).toMatchObject({
      id: post.series_id,
      rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=10",
      time_zone: "Europe/Berlin",
      starts_at: "2027-03-22T08:00:00.000Z",
      status: "active",
      template: { content: "recurring", media: [], targets: [{ account_id: alice }] },
      occurrences_created: 1,
      post_ids: [post.id],
      last_error: null,
    });
    // Local 09:00 before and after the change to summer time.
    expect(s.next_occurrences.slice(0, 3)).toEqual([
      "2027-03-22T08:00:00.000Z",
      "2027-03-29T07:00:00.000Z",
      "2027-04-05T07:00:00.000Z",
    ]);
    expect(s.next_occurrences).toHaveLength(5);
    expect((await h.request("GET", `/v1/series/${post.series_id}`, { token: otherToken })).status).toBe(404);
    expect(
      (await h.request("PATCH", `/v1/series/${post.series_id}`, { token: otherToken, body: { content: "x" } })).status,
    ).toBe(404);
    expect((await h.request("DELETE", `/v1/series/${post.series_id}`, { token: otherToken })).status).toBe(404);
    const listed = (await h.request("GET", `/v1/posts?series_id=${post.series_id}`, { token })).body.data;
    expect(listed.map((p: any) => p.id)).toEqual([post.id]);
    expect((await h.request("GET", "/v1/series?status=active", { token })).body.data.map((x: any) => x.id)).toContain(
      post.series_id,
    );
    expect((await h.request("GET", "/v1/series?status=ended", { token })).body.data).toEqual([]);
  });

  test("an edit is checked as a post edit: too long for Bluesky is a 400 and nothing changes", async () => {
    const post = (await create(body({ rule: "FREQ=DAILY", time_zone: "UTC" }))).body.data;
    const res = await h.request("PATCH", `/v1/series/${post.series_id}`, { token, body: { content: "x".repeat(301) } });
    expect(res.status).toBe(400);
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data.content).toBe("recurring");
    expect((await h.request("GET", `/v1/series/${post.series_id}`, { token })).body.data.template.content).toBe(
      "recurring",
    );
    const bad = await h.request("PATCH", `/v1/series/${post.series_id}`, { token, body: { rule: "FREQ=MINUTELY" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_repeat_rule");
    const empty = await h.request("PATCH", `/v1/series/${post.series_id}`, { token, body: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data.template.content).toBe("recurring");
  });

  test("a new rule moves the waiting occurrence to its next time; a rule with none left ends the series", async () => {
    const start = new Date(h.clock.now().getTime() + DAY);
    const post = (await create(body({ rule: "FREQ=DAILY", time_zone: "UTC" }, { publish_at: start.toISOString() })))
      .body.data;
    const moved = await h.request("PATCH", `/v1/series/${post.series_id}`, {
      token,
      body: { rule: "FREQ=WEEKLY;INTERVAL=2", content: "fortnightly" },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.data.rule).toBe("FREQ=WEEKLY;INTERVAL=2");
    const after = (await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data;
    expect(after).toMatchObject({ status: "scheduled", content: "fortnightly", publish_at: post.publish_at });
    // A window that closed before now: no time left, so the waiting occurrence is cancelled.
    const ended = await h.request("PATCH", `/v1/series/${post.series_id}`, {
      token,
      body: { rule: "FREQ=DAILY;UNTIL=20200131", starts_at: "2020-01-01T09:00:00Z" },
    });
    expect(ended.status).toBe(200);
    expect(ended.body.data).toMatchObject({ status: "ended", next_occurrences: [] });
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data.status).toBe("cancelled");
  });

  test("without a waiting occurrence an edit changes the template, and the next occurrence is made from it, once", async () => {
    const post = (await create(body({ rule: "FREQ=DAILY;COUNT=5", time_zone: "UTC" }))).body.data;
    // Cancelling the waiting occurrence skips it; the job makes the next.
    expect((await h.request("POST", `/v1/posts/${post.id}/cancel`, { token })).status).toBe(200);
    const res = await h.request("PATCH", `/v1/series/${post.series_id}`, { token, body: { content: "changed" } });
    expect(res.status).toBe(200);
    expect(res.body.data.template.content).toBe("changed");
    // Two copies of the engine running the job at once make one occurrence.
    await Promise.all([advanceSeries(h.ctx), advanceSeries(h.ctx), advanceSeries(h.ctx)]);
    const list = (await h.request("GET", `/v1/posts?series_id=${post.series_id}`, { token })).body.data;
    expect(list).toHaveLength(2);
    const next = list.find((p: any) => p.id !== post.id);
    expect(next).toMatchObject({ status: "scheduled", content: "changed", series_id: post.series_id });
    expect(Date.parse(next.publish_at)).toBe(Date.parse(post.publish_at) + DAY);
    await advanceSeries(h.ctx);
    expect((await h.request("GET", `/v1/posts?series_id=${post.series_id}`, { token })).body.data).toHaveLength(2);
  });

  test("a disconnected target account: no occurrence is made, the series says why and stays active", async () => {
    const { token: t, profileId } = await h.profile();
    const bob = (
      await upsertConnectedAccount(h.ctx, {
        profileId,
        platform: "bluesky",
        remoteId: "did:plc:bob",
        username: "bob.test",
        credentials: { did: "did:plc:bob", accessJwt: "a", refreshJwt: "r", handle: "bob.test" },
      })
    ).id;
    const post = (
      await create({ ...body({ rule: "FREQ=DAILY", time_zone: "UTC" }), targets: [{ account_id: bob }] }, t)
    ).body.data;
    await h.request("POST", `/v1/posts/${post.id}/cancel`, { token: t });
    expect((await h.request("DELETE", `/v1/accounts/${bob}`, { token: t })).status).toBe(200);
    await advanceSeries(h.ctx);
    const s = (await h.request("GET", `/v1/series/${post.series_id}`, { token: t })).body.data;
    expect(s).toMatchObject({ status: "active", occurrences_created: 1, post_ids: [post.id] });
    expect(s.last_error).toContain("disconnected");
  });

  test("an Idempotency-Key replay answers the same first occurrence and makes no second series", async () => {
    const b = body({ rule: "FREQ=DAILY", time_zone: "UTC" }, { content: "idem" });
    const headers = { "idempotency-key": `series-${crypto.randomUUID()}` };
    const a = await h.request("POST", "/v1/posts", { token, body: b, headers });
    const again = await h.request("POST", "/v1/posts", { token, body: b, headers });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(a.body.data.id);
    expect(again.body.data.series_id).toBe(a.body.data.series_id);
    expect((await seriesList()).filter((s) => s.template.content === "idem")).toHaveLength(1);
  });
});
