/**
 * Recurring posts through the real engine over emulators, driven by the test clock: a weekly series
 * publishes its occurrences one after another, an edit reaches only the occurrence not yet published,
 * COUNT ends it, DELETE stops it, occurrences keep their local time across a daylight-saving change, and
 * an X occurrence refused as a duplicate fails once and the series goes on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { seriesJob, SERIES_EVERY_MS } from "../../src/engine/series.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { createXEmulator } from "../../plugins/twitter/emulator.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";
import { oauthRig } from "../plugins/support.ts";

const HOUR = 3600_000;
const WEEK = 7 * 24 * HOUR;

describe("a weekly series on Bluesky", () => {
  let h: EngineHarness;
  let token: string;
  let account: string;
  beforeAll(async () => {
    h = await engineHarness({ engine: { jobs: [seriesJob] } });
    const p = await h.profile();
    token = p.token;
    account = await h.bluesky(p.profileId, "weekly.test");
  });
  afterAll(() => h.close());

  const onPlatform = (text: string) => h.emulator.posts().filter((p) => p.text === text);
  const post = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;
  const series = async (id: string) => (await h.request("GET", `/v1/series/${id}`, { token })).body.data;
  const occurrences = async (id: string) =>
    (await h.request("GET", `/v1/posts?series_id=${id}`, { token })).body.data.sort((a: any, b: any) =>
      a.publish_at.localeCompare(b.publish_at),
    );
  /** Moves the clock to just after `at` and lets the engine (publishes, then the series job) run. */
  async function runAt(at: string | Date) {
    h.clock.set(new Date(new Date(at).getTime() + 1000));
    await h.engine.runUntilIdle();
    // The series job runs once per period: the next run sees what the publishes left.
    h.clock.advance(SERIES_EVERY_MS + 1000);
    await h.engine.runUntilIdle();
  }

  test("publishes its occurrences one after another, and an edit reaches only the future ones", async () => {
    const first = new Date(h.clock.now().getTime() + HOUR);
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "weekly v1",
        publish_at: first.toISOString(),
        targets: [{ account_id: account }],
        repeat: { rule: "FREQ=WEEKLY;COUNT=3", time_zone: "UTC" },
      },
    });
    expect(created.status).toBe(201);
    const p1 = created.body.data;
    expect(p1).toMatchObject({
      status: "scheduled",
      publish_at: new Date(first.getTime() - (first.getTime() % 1000)).toISOString(),
    });
    const seriesId = p1.series_id as string;
    expect(seriesId).toBeString();
    const s0 = await series(seriesId);
    expect(s0).toMatchObject({ status: "active", rule: "FREQ=WEEKLY;COUNT=3", time_zone: "UTC", post_ids: [p1.id] });
    expect(s0.next_occurrences).toEqual([
      p1.publish_at,
      ...[1, 2].map((i) => new Date(Date.parse(p1.publish_at) + i * WEEK).toISOString()),
    ]);

    // Nothing before its time; exactly one occurrence waits at a time.
    await h.engine.runUntilIdle();
    expect(onPlatform("weekly v1")).toHaveLength(0);
    expect(await occurrences(seriesId)).toHaveLength(1);

    // The first goes out, then the second is made a week later.
    await runAt(p1.publish_at);
    expect((await post(p1.id)).status).toBe("published");
    expect(onPlatform("weekly v1")).toHaveLength(1);
    let list = await occurrences(seriesId);
    expect(list).toHaveLength(2);
    const p2 = list[1];
    expect(p2).toMatchObject({ status: "scheduled", content: "weekly v1", series_id: seriesId });
    expect(Date.parse(p2.publish_at)).toBe(Date.parse(p1.publish_at) + WEEK);
    expect(p2.targets.map((t: any) => t.account_id)).toEqual([account]);

    // The edit reaches the waiting occurrence and the template; the published one stays as it was.
    const edit = await h.request("PATCH", `/v1/series/${seriesId}`, { token, body: { content: "weekly v2" } });
    expect(edit.status).toBe(200);
    expect(edit.body.data.template.content).toBe("weekly v2");
    expect((await post(p2.id)).content).toBe("weekly v2");
    expect((await post(p1.id)).content).toBe("weekly v1");

    await runAt(p2.publish_at);
    expect(onPlatform("weekly v2")).toHaveLength(1);
    list = await occurrences(seriesId);
    expect(list).toHaveLength(3);
    expect(list[2]).toMatchObject({ status: "scheduled", content: "weekly v2" });

    // COUNT=3: the third is the last; the series ends and nothing more is made.
    await runAt(list[2].publish_at);
    expect(onPlatform("weekly v2")).toHaveLength(2);
    await runAt(new Date(Date.parse(list[2].publish_at) + WEEK));
    const s = await series(seriesId);
    expect(s).toMatchObject({ status: "ended", occurrences_created: 3, next_occurrences: [] });
    expect(s.post_ids).toEqual(list.map((p: any) => p.id));
    expect((await occurrences(seriesId)).map((p: any) => p.status)).toEqual(["published", "published", "published"]);
    expect(onPlatform("weekly v1")).toHaveLength(1);

    // An ended series cannot be edited.
    const late = await h.request("PATCH", `/v1/series/${seriesId}`, { token, body: { content: "v3" } });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("series_not_active");
  });

  test("DELETE stops it: the waiting occurrence is cancelled and nothing more is published", async () => {
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "daily, then stopped",
        publish_at: new Date(h.clock.now().getTime() + HOUR).toISOString(),
        targets: [{ account_id: account }],
        repeat: { rule: "FREQ=DAILY", time_zone: "Europe/Berlin" },
      },
    });
    const p1 = created.body.data;
    await runAt(p1.publish_at);
    expect(onPlatform("daily, then stopped")).toHaveLength(1);
    const [, p2] = await occurrences(p1.series_id);
    expect(p2.status).toBe("scheduled");

    const del = await h.request("DELETE", `/v1/series/${p1.series_id}`, { token });
    expect(del.status).toBe(200);
    expect(del.body.data).toMatchObject({ status: "cancelled", next_occurrences: [] });
    expect((await post(p2.id)).status).toBe("cancelled");
    expect((await post(p1.id)).status).toBe("published");

    await runAt(p2.publish_at);
    await runAt(new Date(Date.parse(p2.publish_at) + 24 * HOUR));
    expect(onPlatform("daily, then stopped")).toHaveLength(1);
    expect(await occurrences(p1.series_id)).toHaveLength(2);
    // Deleting again answers the cancelled series.
    expect((await h.request("DELETE", `/v1/series/${p1.series_id}`, { token })).body.data.status).toBe("cancelled");
  });

  test("across the spring change, 09:00 in Berlin stays 09:00 local", async () => {
    // Monday 22 March 2027, 09:00 CET; Europe changes to summer time on 28 March.
    h.clock.set(new Date("2027-03-20T12:00:00Z"));
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "monday 9 o'clock",
        publish_at: "2027-03-22T09:00:00+01:00",
        targets: [{ account_id: account }],
        repeat: { rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=2", time_zone: "Europe/Berlin" },
      },
    });
    expect(created.status).toBe(201);
    const p1 = created.body.data;
    expect(p1.publish_at).toBe("2027-03-22T08:00:00.000Z");
    await runAt(p1.publish_at);
    const [, p2] = await occurrences(p1.series_id);
    expect(p2.publish_at).toBe("2027-03-29T07:00:00.000Z"); // 09:00 CEST
    await runAt(p2.publish_at);
    expect(onPlatform("monday 9 o'clock")).toHaveLength(2);
    expect((await series(p1.series_id)).status).toBe("ended");
  });
});

describe("on X, the same text again", () => {
  test("the duplicate occurrence fails once with duplicate_content, is not retried, and the series goes on", async () => {
    const emulator = createXEmulator();
    const rig = await oauthRig(emulator, {
      authorizePath: "/oauth/authorize",
      tokenPath: "/oauth/token",
      media: () => new Response(""),
    });
    const engine = createEngine(rig.h.ctx, { random: () => 0.5, jobs: [seriesJob] });
    rig.h.ctx.dispatch = engine;
    try {
      const { token } = rig;
      const account = rig.rows[0].id;
      const clock = rig.h.clock;
      const created = await rig.h.request("POST", "/v1/posts", {
        token,
        body: {
          content: "same words every day",
          publish_at: new Date(clock.now().getTime() + HOUR).toISOString(),
          targets: [{ account_id: account }],
          repeat: { rule: "FREQ=DAILY;COUNT=3", time_zone: "UTC" },
        },
      });
      expect(created.status).toBe(201);
      const seriesId = created.body.data.series_id;
      const list = async () =>
        (await rig.h.request("GET", `/v1/posts?series_id=${seriesId}`, { token })).body.data.sort((a: any, b: any) =>
          a.publish_at.localeCompare(b.publish_at),
        );
      const runAt = async (at: string) => {
        clock.set(new Date(Date.parse(at) + 1000));
        await engine.runUntilIdle();
        clock.advance(SERIES_EVERY_MS + 1000);
        await engine.runUntilIdle();
      };
      await runAt(created.body.data.publish_at);
      let posts = await list();
      expect(posts[0].status).toBe("published");
      await runAt(posts[1].publish_at);
      posts = await list();
      expect(posts[1].status).toBe("failed");
      expect(posts[1].targets[0]).toMatchObject({ status: "failed", error_code: "duplicate_content", attempts: 1 });
      expect(posts[1].targets[0].error).toContain("duplicate");
      // The series went on: the third is waiting, and the failed one stays failed however long we wait.
      expect(posts).toHaveLength(3);
      expect(posts[2].status).toBe("scheduled");
      clock.advance(6 * HOUR);
      await engine.runUntilIdle();
      expect((await list())[1].targets[0]).toMatchObject({ status: "failed", attempts: 1 });
      expect(emulator.posts().filter((p) => p.text === "same words every day")).toHaveLength(1);
    } finally {
      await engine.stop();
      await rig.stop();
    }
  });
});
