/**
 * Analytics end to end: a sandbox profile with X and Bluesky accounts connected through the browser
 * flows, posts published by the engine to the in-process emulators, numbers set on the emulators, the
 * engine's collection run, and the API's answers read over app.handle.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../../src/db/schema.ts";
import { collectAnalytics } from "../../../src/engine/analytics.ts";
import { createEngine } from "../../../src/engine/scheduler.ts";
import { providerFor } from "../../../src/platform/host/provider.ts";
import { median, engagementRate, titleOf, versusMedian } from "../../../src/modules/analytics/numbers.ts";
import type { XEmulator } from "../../../plugins/twitter/emulator.ts";
import type { BlueskyEmulator } from "../../../plugins/bluesky/emulator.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../../support/connect-kit.ts";

let h: ListeningHarness;
let token: string;
let profileId: string;
let x: XEmulator;
let bsky: BlueskyEmulator;
let xAccount: string;
let bskyAccount: string;
const HOUR = 3600_000;

async function connect(platform: string): Promise<string> {
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
  expect(res.status).toBe(201);
  const page = res.body.data.authorization_url
    ? await followAuthorization(res.body.data.authorization_url)
    : await submitHostedForm(res.body.data.hosted_url);
  expect(page.html).toContain("Account connected");
  const list = await h.request("GET", "/v1/accounts", { token });
  return list.body.data.find((a: { platform: string }) => a.platform === platform).id;
}

/** Creates a post through the API and lets the engine publish it; returns the post and its targets. */
async function publish(content: string, accountIds: string[]) {
  // A minute apart, so "newest first" has an answer.
  h.clock.advance(60_000);
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: { content, targets: accountIds.map((account_id) => ({ account_id })) },
  });
  expect(created.status).toBe(201);
  const engine = createEngine(h.ctx, { random: () => 0.5 });
  await engine.runUntilIdle();
  await engine.stop();
  const post = (await h.request("GET", `/v1/posts/${created.body.data.id}`, { token })).body.data;
  expect(post.status).toBe("published");
  return post as { id: string; targets: { account_id: string; platform_post_id: string; target_post_id: string }[] };
}

const collect = () => collectAnalytics(h.ctx, { claimedBy: "test" });
const overview = async (qs = "") => {
  const res = await h.request("GET", `/v1/analytics${qs}`, { token });
  expect(res.status).toBe(200);
  return res.body.data;
};
const account = (data: any, id: string) => data.accounts.find((a: { id: string }) => a.id === id);
const entry = (data: any, postId: string) => data.posts.find((p: { post_id: string | null }) => p.post_id === postId);

beforeAll(async () => {
  h = await listeningHarness();
  ({ token, profileId } = await h.profile({ sandbox: true }));
  x = h.ctx.platforms.emulatorFor("twitter", profileId) as XEmulator;
  bsky = h.ctx.platforms.emulatorFor("bluesky", profileId) as BlueskyEmulator;
  xAccount = await connect("twitter");
  bskyAccount = await connect("bluesky");
});
afterAll(() => h.stop());

describe("the arithmetic", () => {
  test("medians: odd, even, fewer than 3", () => {
    expect(median([])).toBeNull();
    expect(median([10, 20])).toBeNull();
    expect(median([300, 100, 200])).toBe(200);
    expect(median([1000, 100, 300, 200])).toBe(250);
  });

  test("engagement rate: null without views, null-numbers count as none, never divides by 0", () => {
    expect(engagementRate({ views: 100, likes: 5, comments: 0, shares: 3, saves: 2 })).toBe(0.1);
    expect(engagementRate({ views: 200, likes: 5, comments: null, shares: null, saves: null })).toBe(0.025);
    expect(engagementRate({ views: null, likes: 5, comments: 1, shares: 1, saves: 1 })).toBeNull();
    expect(engagementRate({ views: 0, likes: 5, comments: 1, shares: 1, saves: 1 })).toBeNull();
    expect(engagementRate({ views: 10, likes: null, comments: null, shares: null, saves: null })).toBeNull();
    expect(versusMedian(300, 200)).toBe(1.5);
    expect(versusMedian(300, null)).toBeNull();
    expect(versusMedian(null, 200)).toBeNull();
  });

  test("titles: first line, at most 90 characters, cut between whole characters", () => {
    expect(titleOf("\n  Hello world  \nsecond line")).toBe("Hello world");
    const long = "é".repeat(50) + "👩‍👩‍👧‍👦".repeat(20);
    const title = titleOf(long);
    expect([...title].length).toBeLessThanOrEqual(90);
    expect(title.endsWith("…")).toBe(true);
    // No family emoji is split: what is left of them is whole.
    const rest = title.slice(50, -1);
    expect(rest.length % "👩‍👩‍👧‍👦".length).toBe(0);
    expect(titleOf("x".repeat(90))).toBe("x".repeat(90));
    expect(titleOf("x".repeat(91))).toBe("x".repeat(89) + "…");
  });
});

describe("overview and per-post numbers over the emulators", () => {
  let p1: Awaited<ReturnType<typeof publish>>;
  let p2: Awaited<ReturnType<typeof publish>>;

  test("before any read: refreshing, numbers absent", async () => {
    p1 = await publish("First post\nwith a second line #crier", [xAccount, bskyAccount]);
    const data = await overview();
    expect(data.refreshing).toBe(true);
    expect(data.posts).toEqual([]);
  });

  test("a copy on two accounts is one entry with two destinations; nulls where a platform has no number", async () => {
    const xId = p1.targets.find((t) => t.account_id === xAccount)!.platform_post_id;
    const bId = p1.targets.find((t) => t.account_id === bskyAccount)!.platform_post_id;
    x.engage(xId, { impressions: 100, likes: 5, reposts: 3, bookmarks: 2 });
    bsky.engage(bId, { likes: 4, reposts: 1 });
    await collect();
    const data = await overview();
    expect(data.refreshing).toBe(false);
    expect(data.range.days).toBe(30);
    const e = entry(data, p1.id);
    expect(e).toMatchObject({
      id: p1.id,
      post_id: p1.id,
      title: "First post",
      caption: "First post\nwith a second line #crier",
      origin: "postonce",
      media_type: "photo",
      media_url: null,
    });
    expect(e.destinations).toHaveLength(2);
    const dx = e.destinations.find((d: { platform: string }) => d.platform === "twitter");
    expect(dx).toMatchObject({
      account_id: xAccount,
      views: 100,
      likes: 5,
      comments: 0,
      shares: 3,
      saves: 2,
      engagement_rate: 0.1,
      views_vs_account_median: null,
    });
    const db = e.destinations.find((d: { platform: string }) => d.platform === "bluesky");
    // Bluesky has no view counts: null, never 0, and no rate without views.
    expect(db).toMatchObject({
      account_id: bskyAccount,
      views: null,
      likes: 4,
      shares: 1,
      engagement_rate: null,
      views_vs_account_median: null,
    });
    expect(account(data, xAccount)).toMatchObject({
      platform: "twitter",
      metrics_status: "ok",
      posts_with_views: 1,
      median_views: null,
    });
    expect(account(data, bskyAccount)).toMatchObject({ posts_with_views: 0, median_views: null });

    const per = await h.request("GET", `/v1/posts/${p1.id}/analytics`, { token });
    expect(per.status).toBe(200);
    expect(per.body.data.id).toBe(p1.id);
    const tx = per.body.data.targets.find((t: { platform: string }) => t.platform === "twitter");
    expect(tx).toMatchObject({
      platform_post_id: xId,
      metrics_status: "ok",
      views: 100,
      likes: 5,
      engagement_rate: 0.1,
    });
    expect(tx.last_updated).toBe(h.clock.now().toISOString());
  });

  test("medians: fewer than 3, then odd, then even; views against the account median", async () => {
    p2 = await publish("Second", [xAccount]);
    x.engage(p2.targets[0].platform_post_id, { impressions: 300 });
    await collect();
    expect(account(await overview(), xAccount)).toMatchObject({ posts_with_views: 2, median_views: null });

    const p3 = await publish("Third", [xAccount]);
    x.engage(p3.targets[0].platform_post_id, { impressions: 200, likes: 10 });
    await collect();
    let data = await overview();
    expect(account(data, xAccount)).toMatchObject({ posts_with_views: 3, median_views: 200 });
    expect(entry(data, p2.id).destinations[0].views_vs_account_median).toBe(1.5);
    expect(entry(data, p3.id).destinations[0]).toMatchObject({
      views: 200,
      likes: 10,
      engagement_rate: 0.05,
      views_vs_account_median: 1,
    });

    const p4 = await publish("Fourth", [xAccount]);
    x.engage(p4.targets[0].platform_post_id, { impressions: 1000 });
    await collect();
    data = await overview();
    expect(account(data, xAccount)).toMatchObject({ posts_with_views: 4, median_views: 250 });
    expect(entry(data, p4.id).destinations[0].views_vs_account_median).toBe(4);
    // Newest first.
    expect(
      data.posts
        .map((p: { post_id: string }) => p.post_id)
        .filter(Boolean)
        .slice(0, 2),
    ).toEqual([p4.id, p3.id]);
  });

  test("daily: every day of the range in the asked time zone, with the views and interactions of that day's copies", async () => {
    const data = await overview("?days=7");
    expect(data.daily.length).toBeGreaterThanOrEqual(7);
    expect(data.daily.length).toBeLessThanOrEqual(8);
    const today = h.clock.now().toISOString().slice(0, 10);
    expect(data.daily.at(-1).date).toBe(today);
    const dates = data.daily.map((d: { date: string }) => d.date);
    expect([...dates].sort()).toEqual(dates);
    // The sums are those of every copy in range: views only from copies that have them (X), interactions
    // from both platforms; days without posts have none (null, not 0).
    const copies = data.posts.flatMap((p: { destinations: any[] }) => p.destinations);
    const sum = (f: (d: any) => number | null) => copies.reduce((a: number, d: any) => a + (f(d) ?? 0), 0);
    const total = (k: string) => data.daily.reduce((a: number, d: any) => a + (d[k] ?? 0), 0);
    expect(total("posts")).toBe(copies.length);
    expect(total("views")).toBe(sum((d) => d.views));
    expect(total("views")).toBe(100 + 300 + 200 + 1000);
    expect(total("engagement")).toBe(sum((d) => (d.likes ?? 0) + (d.comments ?? 0) + (d.shares ?? 0) + (d.saves ?? 0)));
    for (const d of data.daily.filter((d: { posts: number }) => d.posts === 0))
      expect(d).toMatchObject({ views: null, engagement: null });
    // The same instants fall on a later calendar day at UTC+14 than at UTC-11.
    const busyDay = async (zone: string) =>
      (await overview(`?days=7&time_zone=${zone}`)).daily.find((d: { posts: number }) => d.posts > 0).date;
    expect((await busyDay("Pacific/Kiritimati")) > (await busyDay("Pacific/Pago_Pago"))).toBe(true);
    const bad = await h.request("GET", "/v1/analytics?time_zone=Mars/Olympus", { token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({
      code: "invalid_time_zone",
      message: expect.stringContaining("Mars/Olympus"),
    });
  });

  test("a post made on the platform itself is native, with no post_id and no media_url", async () => {
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, xAccount));
    const { plugin, context } = providerFor(h.ctx, row, { sandbox: true });
    const made = await plugin.publish!(context, {
      content: "Posted on X directly",
      media: [],
      options: {},
      idempotencyToken: "native-1",
    });
    expect(made.kind).toBe("published");
    // Service posts come back from the timeline too: they stay service posts.
    h.clock.advance(7 * HOUR);
    await collect();
    const data = await overview();
    const natives = data.posts.filter((p: { origin: string }) => p.origin === "native");
    expect(natives).toHaveLength(1);
    expect(natives[0]).toMatchObject({
      post_id: null,
      media_url: null,
      caption: "Posted on X directly",
      title: "Posted on X directly",
    });
    expect(natives[0].destinations[0]).toMatchObject({ account_id: xAccount, views: 0 });
    expect(data.posts.filter((p: { origin: string }) => p.origin === "postonce")).toHaveLength(4);
  });

  test("status: 5xx is unavailable and keeps the previous numbers with their last_updated", async () => {
    const before = (await h.request("GET", `/v1/posts/${p2.id}/analytics`, { token })).body.data.targets[0];
    h.clock.advance(2 * HOUR);
    x.failNext({ kind: "server_error", on: "/2/tweets" });
    await collect();
    const after = (await h.request("GET", `/v1/posts/${p2.id}/analytics`, { token })).body.data.targets[0];
    expect(after).toMatchObject({ metrics_status: "unavailable", views: 300, last_updated: before.last_updated });
    expect(account(await overview(), xAccount).metrics_status).toBe("unavailable");
  });

  test("status: 403 is limited", async () => {
    h.clock.advance(2 * HOUR);
    x.failNext({ kind: "forbidden", on: "/2/tweets" });
    await collect();
    expect(account(await overview(), xAccount).metrics_status).toBe("limited");
    const t = (await h.request("GET", `/v1/posts/${p2.id}/analytics`, { token })).body.data.targets[0];
    expect(t).toMatchObject({ metrics_status: "limited", views: 300 });
  });

  test("status: 401 that a token refresh does not cure is reconnect; a good read makes it ok again", async () => {
    h.clock.advance(2 * HOUR);
    x.failNext({ kind: "auth_expired", on: "/2/tweets", times: 2 });
    await collect();
    expect(account(await overview(), xAccount).metrics_status).toBe("reconnect");
    h.clock.advance(2 * HOUR);
    await collect();
    expect(account(await overview(), xAccount).metrics_status).toBe("ok");
  });

  test("limit and truncated; days bounds; range start is inclusive", async () => {
    const all = await overview();
    const one = await overview("?limit=1");
    expect(one.posts).toHaveLength(1);
    expect(one.truncated).toBe(true);
    expect(all.truncated).toBe(false);
    for (const bad of [
      "?days=6",
      "?days=366",
      "?limit=0",
      "?limit=101",
      "?platform=myspace",
      "?account_id=nope",
      "?unknown=1",
    ]) {
      const res = await h.request("GET", `/v1/analytics${bad}`, { token });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBeString();
    }
    expect((await overview("?days=7")).range.days).toBe(7);
    expect((await overview("?days=365")).range.days).toBe(365);
    // The first post was published when the test clock stood at its start; put it exactly 7 days back.
    const per = (await h.request("GET", `/v1/posts/${p1.id}/analytics`, { token })).body.data.targets[0];
    const at = new Date(per.published_at).getTime();
    h.clock.set(new Date(at + 7 * 24 * HOUR));
    expect(entry(await overview("?days=7"), p1.id)).toBeDefined();
    h.clock.set(new Date(at + 7 * 24 * HOUR + 1));
    expect(entry(await overview("?days=7"), p1.id)).toBeUndefined();
    expect(entry(await overview("?days=8"), p1.id)).toBeDefined();
  });

  test("filters by account and platform", async () => {
    const onlyB = await overview(`?account_id=${bskyAccount}`);
    expect(onlyB.accounts.map((a: { id: string }) => a.id)).toEqual([bskyAccount]);
    expect(
      onlyB.posts.every((p: any) => p.destinations.every((d: { account_id: string }) => d.account_id === bskyAccount)),
    ).toBe(true);
    const onlyX = await overview("?platform=twitter");
    expect(onlyX.accounts.map((a: { id: string }) => a.id)).toEqual([xAccount]);
  });

  test("refresh: accepted once, then 429 with Retry-After; makes the numbers due", async () => {
    const first = await h.request("POST", "/v1/analytics/refresh", { token });
    expect(first.status).toBe(202);
    expect(first.body.data.refreshing).toBe(true);
    expect((await overview()).refreshing).toBe(true);
    const again = await h.request("POST", "/v1/analytics/refresh", { token });
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe("rate_limited");
    expect(Number(again.headers.get("retry-after"))).toBeGreaterThan(0);
    await collect();
    expect((await overview()).refreshing).toBe(false);
    h.clock.advance(5 * 60_000);
    expect((await h.request("POST", "/v1/analytics/refresh", { token })).status).toBe(202);
  });

  test("scopes and other profiles' ids", async () => {
    const narrow = await h.profile({ sandbox: true, scopes: ["accounts:read"] });
    for (const [method, path] of [
      ["GET", "/v1/analytics"],
      ["GET", `/v1/posts/${p1.id}/analytics`],
      ["POST", "/v1/analytics/refresh"],
    ] as const) {
      const res = await h.request(method, path, { token: narrow.token });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe("missing_scope");
      expect((await h.request(method, path)).status).toBe(401);
    }
    const other = await h.profile({ sandbox: true });
    const foreignPost = await h.request("GET", `/v1/posts/${p1.id}/analytics`, { token: other.token });
    expect(foreignPost.status).toBe(404);
    expect(foreignPost.body.error.code).toBe("not_found");
    const foreignAccount = await h.request("GET", `/v1/analytics?account_id=${xAccount}`, { token: other.token });
    expect(foreignAccount.status).toBe(404);
    const mine = await h.request("GET", "/v1/analytics", { token: other.token });
    expect(mine.body.data).toMatchObject({ accounts: [], posts: [], truncated: false });
    expect((await h.request("GET", `/v1/posts/${crypto.randomUUID()}/analytics`, { token })).status).toBe(404);
    expect((await h.request("GET", "/v1/posts/not-a-uuid/analytics", { token })).status).toBe(404);
    expect(profileId).toBeString();
  });
});
