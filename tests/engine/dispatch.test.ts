import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts, postTargets } from "../../src/db/schema.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

// The engine publishing through the real Bluesky plugin to its emulator over HTTP on 127.0.0.1.
// Time moves only with the TestClock; the engine is driven tick by tick (runUntilIdle).

let h: EngineHarness;
let token: string;
let profileId: string;

beforeAll(async () => {
  // A short provider timeout so that a held response is a timeout within the test (still far above
  // what a call takes on a loaded machine).
  h = await engineHarness({
    env: { CRIER_BLUESKY_TIMEOUT_MS: "2000" },
    engine: { maxAttempts: 3, backoffBaseMs: 10_000 },
  });
  ({ token, profileId } = await h.profile());
});
afterAll(() => h.close());

const create = async (body: unknown) => {
  const res = await h.request("POST", "/v1/posts", { token, body });
  expect(res.status).toBe(201);
  return res.body.data;
};
const read = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;
const postsFor = (handle: string, before: number) =>
  h.emulator
    .posts()
    .slice(before)
    .filter((p) => p.text.includes(handle));
const later = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();

describe("publishing", () => {
  test("publish now: the target ends published with the platform's id and URL, one post on the platform", async () => {
    const acct = await h.bluesky(profileId, "now.test");
    const before = h.emulator.posts().length;
    const post = await create({ content: "hello from crier now.test", targets: [{ account_id: acct }] });
    expect(post.status).toBe("queued");
    await h.engine.runUntilIdle();
    const done = await read(post.id);
    expect(done.status).toBe("published");
    const t = done.targets[0];
    expect(t.status).toBe("published");
    expect(t.platform_post_id).toMatch(/^at:\/\//);
    expect(t.platform_post_url).toContain("now.test");
    expect(t.published_at).toBe(h.clock.now().toISOString());
    expect(t.attempts).toBe(1);
    const onPlatform = postsFor("now.test", before);
    expect(onPlatform).toHaveLength(1);
    expect(onPlatform[0].text).toBe("hello from crier now.test");
  });

  test("scheduled: nothing goes out before publish_at, then exactly one post", async () => {
    const acct = await h.bluesky(profileId, "later.test");
    const before = h.emulator.posts().length;
    const post = await create({
      content: "later.test scheduled",
      publish_at: later(3600_000),
      targets: [{ account_id: acct }],
    });
    await h.engine.runUntilIdle();
    expect((await read(post.id)).status).toBe("scheduled");
    h.clock.advance(3600_000 - 1000);
    await h.engine.runUntilIdle();
    expect(postsFor("later.test", before)).toHaveLength(0);
    h.clock.advance(1000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).status).toBe("published");
    expect(postsFor("later.test", before)).toHaveLength(1);
  });

  test("POST /publish on a scheduled post answers processing, then it is published", async () => {
    const acct = await h.bluesky(profileId, "early.test");
    const post = await create({ content: "early.test", publish_at: later(86400_000), targets: [{ account_id: acct }] });
    const res = await h.request("POST", `/v1/posts/${post.id}/publish`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("processing");
    expect(res.body.data.targets[0].status).toBe("processing");
    await h.engine.runUntilIdle();
    expect((await read(post.id)).status).toBe("published");
  });

  test("content_override and several accounts: each gets its own text", async () => {
    const a = await h.bluesky(profileId, "multi-a.test");
    const b = await h.bluesky(profileId, "multi-b.test");
    const before = h.emulator.posts().length;
    const post = await create({
      content: "shared multi-a.test",
      targets: [{ account_id: a }, { account_id: b, content_override: "own text multi-b.test" }],
    });
    await h.engine.runUntilIdle();
    expect((await read(post.id)).status).toBe("published");
    const texts = h.emulator
      .posts()
      .slice(before)
      .map((p) => p.text)
      .sort();
    expect(texts).toEqual(["own text multi-b.test", "shared multi-a.test"]);
  });

  test("a thread publishes in order, each item replying to the one before", async () => {
    const acct = await h.bluesky(profileId, "thread.test");
    const before = h.emulator.posts().length;
    const post = await create({
      content: "1/3 thread.test",
      targets: [
        { account_id: acct },
        { account_id: acct, content_override: "2/3 thread.test" },
        { account_id: acct, content_override: "3/3 thread.test" },
      ],
    });
    await h.engine.runUntilIdle();
    const done = await read(post.id);
    expect(done.targets.map((t: any) => t.status)).toEqual(["published", "published", "published"]);
    const onPlatform = postsFor("thread.test", before);
    expect(onPlatform.map((p) => p.text)).toEqual(["1/3 thread.test", "2/3 thread.test", "3/3 thread.test"]);
    const ids = done.targets.map((t: any) => t.platform_post_id);
    expect(onPlatform[1].replyTo).toBe(ids[0]);
    expect(onPlatform[2].replyTo).toBe(ids[1]);
  });
});

describe("failures", () => {
  test("429 with a wait: back to scheduled for at least that long, then exactly one post", async () => {
    const acct = await h.bluesky(profileId, "limited.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "rate_limit", on: "createRecord", retryAfterSeconds: 120 });
    const post = await create({ content: "limited.test", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    const waiting = (await read(post.id)).targets[0];
    expect(waiting).toMatchObject({ status: "scheduled", error_code: "retry_scheduled", attempts: 1 });
    expect(new Date(waiting.scheduled_time).getTime()).toBeLessThanOrEqual(h.clock.now().getTime());
    expect(postsFor("limited.test", before)).toHaveLength(0);
    h.clock.advance(100_000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0].status).toBe("scheduled");
    h.clock.advance(25_000);
    await h.engine.runUntilIdle();
    const done = (await read(post.id)).targets[0];
    expect(done).toMatchObject({ status: "published", error: null, error_code: null, attempts: 2 });
    expect(postsFor("limited.test", before)).toHaveLength(1);
  });

  // A 5xx on the creating call is an unknown outcome now (tests/engine/reconcile.test.ts); a 429 that names
  // no wait is the retryable failure where nothing was created, and backs off exponentially.
  test("retryable twice (429 naming no wait): exponential backoff, then published once", async () => {
    const acct = await h.bluesky(profileId, "flaky.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "rate_limit", on: "createRecord", retryAfterSeconds: 0, times: 2 });
    const post = await create({ content: "flaky.test", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "scheduled", attempts: 1 });
    h.clock.advance(10_000); // first backoff: 0.75 × 10 s with the harness's fixed jitter
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "scheduled", attempts: 2 });
    h.clock.advance(10_000); // second backoff: 0.75 × 20 s, not yet due
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0].status).toBe("scheduled");
    h.clock.advance(10_000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "published", attempts: 3 });
    expect(postsFor("flaky.test", before)).toHaveLength(1);
  });

  test("retries run out: failed retries_exhausted with nothing on the platform", async () => {
    const acct = await h.bluesky(profileId, "down.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "rate_limit", on: "createRecord", retryAfterSeconds: 0, times: 3 });
    const post = await create({ content: "down.test", targets: [{ account_id: acct }] });
    for (let i = 0; i < 4; i++) {
      await h.engine.runUntilIdle();
      h.clock.advance(60_000);
    }
    const t = (await read(post.id)).targets[0];
    expect(t).toMatchObject({ status: "failed", error_code: "retries_exhausted", attempts: 3 });
    expect(t.error).toContain("Gave up after 3 attempts");
    expect(postsFor("down.test", before)).toHaveLength(0);
  });

  test("timeout after the creating call: outcome_unknown, one post on the platform, never tried again", async () => {
    const acct = await h.bluesky(profileId, "slow.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "timeout", on: "createRecord", delayMs: 10_000 });
    const post = await create({ content: "slow.test", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    const t = (await read(post.id)).targets[0];
    expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown", attempts: 1 });
    expect((await read(post.id)).status).toBe("failed");
    for (let i = 0; i < 3; i++) {
      h.clock.advance(3600_000);
      await h.engine.runUntilIdle();
    }
    expect((await read(post.id)).targets[0].attempts).toBe(1);
    expect(postsFor("slow.test", before)).toHaveLength(1);
  });

  test("expired token: one refresh through the plugin, then published", async () => {
    const acct = await h.bluesky(profileId, "stale.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "auth_expired", on: "createRecord" });
    const post = await create({ content: "stale.test", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "published", attempts: 1 });
    expect(postsFor("stale.test", before)).toHaveLength(1);
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, acct));
    expect(row.status).toBe("active");
  });

  test("refresh refused: the account becomes auth_required and the target fails with a reconnect hint", async () => {
    const acct = await h.bluesky(profileId, "revoked.test");
    h.emulator.failNext({ kind: "auth_expired", on: "createRecord" });
    h.emulator.failNext({ kind: "auth_expired", on: "refreshSession" });
    const post = await create({ content: "revoked.test", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    const t = (await read(post.id)).targets[0];
    expect(t).toMatchObject({ status: "failed", error_code: "auth_required" });
    expect(t.error).toContain("Reconnect");
    const listed = (await h.request("GET", "/v1/accounts", { token })).body.data.find((a: any) => a.id === acct);
    expect(listed.status).toBe("auth_required");
    // Further due targets of that account fail without calling the platform.
    const before = h.emulator.posts().length;
    const next = await create({ content: "revoked.test again", targets: [{ account_id: acct }] });
    await h.engine.runUntilIdle();
    expect((await read(next.id)).targets[0]).toMatchObject({
      status: "failed",
      error_code: "auth_required",
      attempts: 0,
    });
    expect(h.emulator.posts().length).toBe(before);
  });

  test("refresh that cannot reach the platform: retried later, the account stays active, then published once", async () => {
    const acct = await h.bluesky(profileId, "flaky-refresh.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "auth_expired", on: "createRecord" });
    h.emulator.failNext({ kind: "server_error", on: "refreshSession" });
    const post = await create({ content: "flaky-refresh.test", targets: [{ account_id: acct }] });
    await h.engine.tick();
    await h.engine.runUntilIdle();
    const waiting = (await read(post.id)).targets[0];
    expect(waiting).toMatchObject({ status: "scheduled", error_code: "retry_scheduled" });
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, acct));
    expect(row.status).toBe("active");
    h.clock.advance(60 * 60_000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({ status: "published" });
    expect(postsFor("flaky-refresh.test", before)).toHaveLength(1);
  });

  test("account disconnected before the due time: the target fails, nothing is sent", async () => {
    const acct = await h.bluesky(profileId, "leaving.test");
    const post = await create({ content: "leaving.test", publish_at: later(60_000), targets: [{ account_id: acct }] });
    await h.request("DELETE", `/v1/accounts/${acct}`, { token });
    const before = h.emulator.posts().length;
    h.clock.advance(60_000);
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0]).toMatchObject({
      status: "failed",
      error_code: "account_disconnected",
      attempts: 0,
    });
    expect(h.emulator.posts().length).toBe(before);
  });

  test("a thread waits for its parent's retry; a reply whose parent will never go out is skipped", async () => {
    const acct = await h.bluesky(profileId, "retry-thread.test");
    const before0 = h.emulator.posts().length;
    h.emulator.failNext({ kind: "rate_limit", on: "createRecord", retryAfterSeconds: 30 });
    const post = await create({
      content: "a retry-thread.test",
      targets: [{ account_id: acct }, { account_id: acct, content_override: "b retry-thread.test" }],
    });
    await h.engine.runUntilIdle();
    let done = await read(post.id);
    // The parent is backing off; the reply must not overtake it.
    expect(done.targets.map((t: any) => t.status)).toEqual(["scheduled", "pending"]);
    expect(postsFor("retry-thread.test", before0)).toHaveLength(0);
    h.clock.advance(60_000);
    await h.engine.runUntilIdle();
    done = await read(post.id);
    expect(done.targets.map((t: any) => t.status)).toEqual(["published", "published"]);
    const sent = postsFor("retry-thread.test", before0);
    expect(sent.map((p) => p.text)).toEqual(["a retry-thread.test", "b retry-thread.test"]);
    expect(sent[1].replyTo).toBe(done.targets[0].platform_post_id);

    const acct2 = await h.bluesky(profileId, "orphan.test");
    const before = h.emulator.posts().length;
    const p2 = await create({
      content: "a orphan.test",
      publish_at: later(60_000),
      targets: [{ account_id: acct2 }, { account_id: acct2, content_override: "b orphan.test" }],
    });
    await h.request("POST", `/v1/posts/${p2.id}/targets/${p2.targets[0].target_post_id}/cancel`, { token });
    h.clock.advance(60_000);
    await h.engine.runUntilIdle();
    const orphan = (await read(p2.id)).targets[1];
    expect(orphan).toMatchObject({ status: "skipped", error_code: "thread_parent_not_published" });
    expect(h.emulator.posts().length).toBe(before);
  });
});

describe("leases", () => {
  test("a target left processing by a copy that died ends outcome_unknown, never published again", async () => {
    const acct = await h.bluesky(profileId, "orphaned.test");
    const post = await create({
      content: "orphaned.test",
      publish_at: later(3600_000),
      targets: [{ account_id: acct }],
    });
    // As a copy that crashed right after claiming would leave it.
    await h.db.db
      .update(postTargets)
      .set({
        status: "processing",
        attempts: 1,
        claimedBy: "dead-copy",
        leaseUntil: new Date(h.clock.now().getTime() + 1000),
      })
      .where(eq(postTargets.postId, post.id));
    const before = h.emulator.posts().length;
    await h.engine.runUntilIdle();
    expect((await read(post.id)).targets[0].status).toBe("processing");
    const busy = await h.request("DELETE", `/v1/posts/${post.id}`, { token });
    expect(busy.status).toBe(409);
    h.clock.advance(2000);
    await h.engine.runUntilIdle();
    const t = (await read(post.id)).targets[0];
    expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown" });
    h.clock.advance(3600_000);
    await h.engine.runUntilIdle();
    expect(h.emulator.posts().length).toBe(before);
  });

  test("stop() waits for the publish in flight and records it", async () => {
    const acct = await h.bluesky(profileId, "shutdown.test");
    const before = h.emulator.posts().length;
    h.emulator.failNext({ kind: "timeout", on: "createRecord", delayMs: 200 });
    // Scheduled, so that the harness's own engine (kicked by a publish-now create) leaves it alone.
    const post = await create({ content: "shutdown.test", publish_at: later(1000), targets: [{ account_id: acct }] });
    h.clock.advance(1000);
    const { createEngine } = await import("../../src/engine/scheduler.ts");
    const other = createEngine(h.ctx, { id: "stopping-copy" });
    await other.tick();
    expect(other.inFlight()).toBe(1);
    await other.stop();
    expect(other.inFlight()).toBe(0);
    expect((await read(post.id)).targets[0].status).toBe("published");
    expect(postsFor("shutdown.test", before)).toHaveLength(1);
    // A stopped engine claims nothing.
    const p2 = await create({ content: "shutdown.test 2", publish_at: later(1000), targets: [{ account_id: acct }] });
    h.clock.advance(1000);
    await other.tick();
    expect((await read(p2.id)).targets[0].status).toBe("scheduled");
  });
});
