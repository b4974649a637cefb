/**
 * The collection against every platform that declares accountStats (followers read at connect), the
 * fan-out of Snapchat placements in the per-post numbers, and the scheduler's hook.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { analyticsJob, collectAnalytics } from "../../src/engine/analytics.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { makeVideo } from "../support/media-files.ts";
import { until } from "../support/until.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";

const withFollowers = createRegistry()
  .list()
  .filter((p) => p.accountStats)
  .map((p) => p.platform);
let h: ListeningHarness;
let token: string;
let profileId: string;

beforeAll(async () => {
  h = await listeningHarness();
  ({ token, profileId } = await h.profile({ sandbox: true }));
});
afterAll(() => h.stop());

async function connect(platform: string): Promise<string> {
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
  expect(res.status).toBe(201);
  const page = res.body.data.authorization_url
    ? await followAuthorization(res.body.data.authorization_url)
    : await submitHostedForm(res.body.data.hosted_url);
  expect(page.html).toContain("Account connected");
  const list = await h.request("GET", "/v1/accounts", { token });
  const mine = list.body.data.filter((a: { platform: string }) => a.platform === platform);
  // A LinkedIn connect also stores the member's company page; the page has the follower count.
  return (mine.find((a: { username: string }) => a.username !== "Sandbox Member") ?? mine[0]).id;
}

test("the platforms whose APIs give an audience count declare accountStats", () => {
  expect(withFollowers).toEqual([
    "bluesky",
    "facebook",
    "farcaster",
    "instagram",
    // A company page's follower count (a member's is unknown).
    "linkedin",
    "pinterest",
    "reddit",
    "telegram",
    "threads",
    "tiktok",
    "twitter",
    "vimeo",
    "youtube",
    // Crier's extensions, after the fifteen: Mastodon followers, a Google location's followers, a Discord
    // server's approximate members, a Slack channel's members.
    "mastodon",
    "google_business",
    "discord",
    "slack",
  ]);
});

test.each(withFollowers.map((p, i) => [p, 1200 + i] as const))(
  "%s: followers are read right after connecting",
  async (platform, count) => {
    const accountId = await connect(platform);
    h.ctx.platforms.emulatorFor(platform, profileId)!.setFollowers!(count);
    await collectAnalytics(h.ctx, { claimedBy: "test" });
    const res = await h.request("GET", `/v1/analytics?account_id=${accountId}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.accounts[0]).toMatchObject({
      id: accountId,
      platform,
      followers: count,
      followers_observed_at: h.clock.now().toISOString(),
      metrics_status: "ok",
    });
  },
);

test("followers are read again weekly, not before", async () => {
  h.ctx.platforms.emulatorFor("twitter", profileId)!.setFollowers!(5000);
  h.clock.advance(6 * 24 * 3600_000);
  await collectAnalytics(h.ctx, { claimedBy: "test" });
  const x = () => h.request("GET", "/v1/analytics?platform=twitter", { token });
  expect((await x()).body.data.accounts[0].followers).not.toBe(5000);
  h.clock.advance(24 * 3600_000);
  await collectAnalytics(h.ctx, { claimedBy: "test" });
  expect((await x()).body.data.accounts[0].followers).toBe(5000);
});

test("fan-out targets: one entry per Snapchat placement; no numbers from a platform without metrics", async () => {
  const accountId = await connect("snapchat");
  const ticket = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "clip.mp4", content_type: "video/mp4" },
  });
  await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "video/mp4" },
    // Snapchat takes 5 to 60 s at 540×960 or more, which Crier checks from the file.
    body: makeVideo({ width: 540, height: 960, seconds: 6, fps: 30 }),
  });
  const media = await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token });
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "clip",
      media: [{ url: media.body.data.public_url, type: "video" }],
      targets: [{ account_id: accountId, platform_options: { placements: ["spotlight", "public_story"] } }],
    },
  });
  expect(created.status).toBe(201);
  const engine = createEngine(h.ctx, { random: () => 0.5 });
  await engine.runUntilIdle();
  await engine.stop();
  await collectAnalytics(h.ctx, { claimedBy: "test" });
  const res = await h.request("GET", `/v1/posts/${created.body.data.id}/analytics`, { token });
  expect(res.status).toBe(200);
  expect(res.body.data.media_url).toBe(media.body.data.public_url);
  const targets = res.body.data.targets;
  expect(targets.map((t: { target_variant: string }) => t.target_variant).sort()).toEqual([
    "public_story",
    "spotlight",
  ]);
  for (const t of targets) {
    expect(t).toMatchObject({
      account_id: accountId,
      platform: "snapchat",
      metrics_status: "ok",
      views: null,
      likes: null,
      comments: null,
      shares: null,
      saves: null,
      engagement_rate: null,
      last_updated: null,
    });
    expect(t.platform_post_id).toBeString();
    expect(t.published_at).toBeString();
  }
  const overview = (await h.request("GET", `/v1/analytics?account_id=${accountId}`, { token })).body.data;
  expect(overview.posts).toHaveLength(1);
  expect(overview.posts[0]).toMatchObject({
    post_id: created.body.data.id,
    origin: "postonce",
    media_type: "video",
    media_url: media.body.data.public_url,
  });
  expect(overview.posts[0].destinations).toHaveLength(2);
});

test("the engine's tick runs the collection when analytics is on", async () => {
  const accountId = (await h.request("GET", "/v1/accounts", { token })).body.data.find(
    (a: { platform: string }) => a.platform === "youtube",
  ).id;
  h.ctx.platforms.emulatorFor("youtube", profileId)!.setFollowers!(4242);
  // A week on, the followers are due again.
  h.clock.advance(8 * 24 * 3600_000);
  const engine = createEngine(h.ctx, { random: () => 0.5, jobs: [analyticsJob] });
  await engine.tick();
  await engine.stop();
  const res = await h.request("GET", `/v1/analytics?account_id=${accountId}`, { token });
  expect(res.body.data.accounts[0].followers).toBe(4242);
});

test("a video of Crier's own media without a thumbnail reports its poster frame as thumbnail_url", async () => {
  const accountId = await connect("youtube");
  const ticket = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "clip.mp4", content_type: "video/mp4" },
  });
  await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "video/mp4" },
    body: makeVideo({ width: 640, height: 360, seconds: 2 }),
  });
  const media = await until("the video's poster frame", async () => {
    const got = (await h.request("GET", `/v1/media/${ticket.body.data.media_id}`, { token })).body.data;
    return got?.poster_url ? (got as { public_url: string; poster_url: string }) : undefined;
  });
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "poster",
      media: [{ url: media.public_url, type: "video" }],
      targets: [{ account_id: accountId }],
    },
  });
  expect(created.status).toBe(201);
  const engine = createEngine(h.ctx, { random: () => 0.5, submitPollMs: 1000 });
  for (let i = 0; i < 6; i++) {
    await engine.runUntilIdle();
    h.clock.advance(1000);
  }
  await engine.stop();
  await collectAnalytics(h.ctx, { claimedBy: "test" });
  const overview = (await h.request("GET", `/v1/analytics?account_id=${accountId}`, { token })).body.data;
  const entry = overview.posts.find((p: { post_id: string }) => p.post_id === created.body.data.id);
  expect(entry).toMatchObject({ media_type: "video", media_url: media.public_url, thumbnail_url: media.poster_url });
  const poster = await fetch(entry.thumbnail_url);
  expect(poster.headers.get("content-type")).toStartWith("image/jpeg");
});

test("a round reads an account's posts together: one Bluesky getPosts call per 25 of its posts", async () => {
  const mine = [{ id: await connect("bluesky") }, { id: await connect("twitter") }];
  // Each post on both accounts: their items are made interleaved, a Bluesky one beside an X one.
  for (let i = 0; i < 20; i++) {
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: { content: `count ${i}`, targets: mine.map((a: { id: string }) => ({ account_id: a.id })) },
    });
    expect(created.status).toBe(201);
  }
  const engine = createEngine(h.ctx, { random: () => 0.5 });
  await engine.runUntilIdle();
  await engine.stop();
  const bluesky = h.ctx.platforms.emulatorFor("bluesky", profileId)!;
  const handle = bluesky.handle;
  let calls = 0;
  bluesky.handle = (req, path) => {
    if (path.endsWith("app.bsky.feed.getPosts")) calls++;
    return handle.call(bluesky, req, path);
  };
  try {
    // Rounds of 20 items: taken in any order, each round would hold some of both accounts' posts.
    await collectAnalytics(h.ctx, { claimedBy: "test", batch: 20 });
  } finally {
    bluesky.handle = handle;
  }
  const res = await h.request("GET", `/v1/analytics?platform=bluesky`, { token });
  expect(res.body.data.posts.filter((p: { title: string }) => p.title.startsWith("count "))).toHaveLength(20);
  expect(calls).toBe(1);
});
