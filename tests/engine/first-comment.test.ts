/**
 * What the engine does with a first comment that does not simply go through, over the X emulator (a
 * sandbox profile, the real plugin, the real engine): a refused comment fails while its post stays
 * published; a rate-limited one is tried again later and posted once; one whose outcome is unknown is never
 * posted again; a copy that dies mid-comment leaves it unknown, not reposted. Also the API's rules: a
 * platform without first comments, a thread's later item, and PATCH of a scheduled post.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { reconcileCommentsDue } from "../../src/engine/first-comment-reconcile.ts";
import type { EmulatedPost, Emulator } from "../../src/platform/sdk.ts";
import {
  followAuthorization,
  listeningHarness,
  submitHostedForm,
  type ListeningHarness,
} from "../support/connect-kit.ts";
import { until } from "../support/until.ts";

const registry = createRegistry();
/** A platform whose emulator takes text alone and that has no first comment: its targets refuse one. */
const without = registry
  .list()
  .find(
    (p) =>
      !p.firstComment &&
      registry.hasEmulator(p.platform) &&
      p.capabilities.text &&
      !p.mediaRequirements.required_media &&
      p.platform !== "telegram",
  )!;

let h: ListeningHarness;
let token: string;
let profileId: string;
let emulator: Emulator;
let engine: Engine;
let x: string;

async function connect(platform: string): Promise<string> {
  const res = await h.request("POST", `/v1/accounts/connect/${platform}`, { token });
  expect(res.status).toBe(201);
  const page =
    res.body.data.mode === "oauth_authorization_url"
      ? await followAuthorization(res.body.data.authorization_url)
      : await submitHostedForm(res.body.data.hosted_url);
  expect(page.html).toContain("Account connected");
  const list = await h.request("GET", "/v1/accounts", { token });
  return list.body.data.find((a: { platform: string }) => a.platform === platform).id;
}

beforeAll(async () => {
  // Calls to X give up after a second here, so a held answer times out quickly.
  h = await listeningHarness({ CRIER_TWITTER_TIMEOUT_MS: "1000" });
  ({ token, profileId } = await h.profile({ sandbox: true }));
  emulator = h.ctx.platforms.emulatorFor("twitter", profileId)!;
  x = await connect("twitter");
  engine = createEngine(h.ctx, { random: () => 0.5, backoffBaseMs: 10_000 });
  h.ctx.dispatch = engine;
});
afterAll(async () => {
  await engine.stop();
  await h.stop();
});

const replies = (text: string): EmulatedPost[] => emulator.posts().filter((p) => p.text === text);
const post = async (id: string) => (await h.request("GET", `/v1/posts/${id}`, { token })).body.data;

/** A post with a first comment, published now; the comment's own call (the second POST /2/tweets) fails as `fail` says. */
async function publishWith(text: string, fail?: Parameters<Emulator["failNext"]>[0]) {
  if (fail) emulator.failNext({ on: "/2/tweets", skip: 1, ...fail });
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: { content: `post for ${text}`, targets: [{ account_id: x, first_comment: text }] },
  });
  expect(created.status).toBe(201);
  await engine.runUntilIdle();
  return created.body.data.id as string;
}

describe("a comment that fails", () => {
  test("refused by the platform: the comment fails, the post stays published", async () => {
    const id = await publishWith("refused comment", { kind: "forbidden" });
    const p = await post(id);
    expect(p.status).toBe("published");
    expect(p.targets[0].status).toBe("published");
    expect(p.targets[0].error).toBeNull();
    expect(p.targets[0].first_comment).toMatchObject({ text: "refused comment", status: "failed" });
    expect(p.targets[0].first_comment.error_code).toBeTruthy();
    expect(p.targets[0].first_comment.error).toBeTruthy();
    expect(replies("refused comment")).toHaveLength(0);
  });

  test("rate limited: tried again after the backoff and posted once", async () => {
    const id = await publishWith("limited comment", { kind: "rate_limit", retryAfterSeconds: 30 });
    let p = await post(id);
    expect(p.targets[0].status).toBe("published");
    expect(p.targets[0].first_comment).toMatchObject({ status: "pending", error_code: "retry_scheduled" });
    expect(replies("limited comment")).toHaveLength(0);
    h.clock.advance(60_000);
    await engine.runUntilIdle();
    p = await post(id);
    expect(p.targets[0].first_comment).toMatchObject({ status: "published", error: null, error_code: null });
    expect(replies("limited comment")).toHaveLength(1);
    expect(replies("limited comment")[0].replyTo).toBe(p.targets[0].platform_post_id);
  });

  test("an expired token: refreshed once, then the comment goes out once", async () => {
    const id = await publishWith("comment after refresh", { kind: "auth_expired" });
    const p = await post(id);
    expect(p.targets[0].first_comment).toMatchObject({ status: "published", error_code: null });
    expect(replies("comment after refresh")).toHaveLength(1);
    const accounts = (await h.request("GET", "/v1/accounts", { token })).body.data;
    expect(accounts.find((a: { id: string }) => a.id === x).status).toBe("active");
  });

  test("unknown outcome (a timeout after X made it): stays unknown and is never posted again", async () => {
    const id = await publishWith("timed out comment", { kind: "timeout", delayMs: 2_500 });
    let p = await post(id);
    expect(p.status).toBe("published");
    expect(p.targets[0].first_comment).toMatchObject({ status: "unknown", error_code: "outcome_unknown" });
    // Past the settle delay the reconciler looks: X's plugin cannot look a reply up, so it stays unknown.
    h.clock.advance(3_600_000);
    await engine.runUntilIdle();
    await reconcileCommentsDue(h.ctx);
    await engine.runUntilIdle();
    p = await post(id);
    expect(p.targets[0].first_comment.status).toBe("unknown");
    expect(p.targets[0].first_comment.error).toContain("not posted again");
    await until("the held reply", () => (replies("timed out comment").length === 1 ? true : undefined));
    expect(replies("timed out comment")).toHaveLength(1);
  });
});

test("a copy that dies mid-comment: another copy marks it unknown instead of posting it again; the late answer still counts", async () => {
  const dying = createEngine(h.ctx, { id: "dying-copy", random: () => 0.5, shutdownTimeoutMs: 50 });
  h.ctx.dispatch = dying;
  // X makes the comment, then answers after 800 ms (inside the 1 s timeout): the copy is gone by then.
  emulator.failNext({ on: "/2/tweets", skip: 1, kind: "timeout", delayMs: 800 });
  const created = await h.request("POST", "/v1/posts", {
    token,
    body: { content: "post of a dying copy", targets: [{ account_id: x, first_comment: "orphaned comment" }] },
  });
  const id = created.body.data.id;
  const running = dying.runUntilIdle();
  await until("the comment in flight", async () =>
    (await post(id)).targets[0].first_comment?.status === "processing" ? true : undefined,
  );
  await dying.stop();
  h.ctx.dispatch = engine;
  // The lease runs out; the other copy's tick takes the comment for unknown, and does not post it.
  h.clock.advance(121_000);
  await engine.tick();
  expect((await post(id)).targets[0].first_comment).toMatchObject({ status: "unknown", error_code: "outcome_unknown" });
  await engine.runUntilIdle();
  await running;
  await until("the late answer", async () =>
    (await post(id)).targets[0].first_comment?.status === "published" ? true : undefined,
  );
  expect(replies("orphaned comment")).toHaveLength(1);
  expect(replies("orphaned comment")).toHaveLength(1);
});

describe("what a post with a first comment may be", () => {
  test(`${without.platform} has no first comment: 400 first_comment_unsupported naming the target`, async () => {
    const other = await connect(without.platform);
    const body = { content: "hello", targets: [{ account_id: x }, { account_id: other, first_comment: "hi" }] };
    const res = await h.request("POST", "/v1/posts", { token, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "first_comment_unsupported" });
    expect(res.body.error.message).toContain("targets[1]");
    const v = await h.request("POST", "/v1/posts/validate", { token, body });
    expect(v.body.data.ok).toBe(false);
    expect(v.body.data.targets[1].problems).toEqual([
      expect.objectContaining({ code: "first_comment_unsupported", field: "targets[1].first_comment" }),
    ]);
    expect(v.body.data.targets[0].ok).toBe(true);
  });

  test("on a thread, only the account's first item takes it; the comment replies to that item", async () => {
    const refused = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "one", targets: [{ account_id: x }, { account_id: x, first_comment: "late" }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("first_comment_on_thread_item");
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "thread head",
        targets: [
          { account_id: x, first_comment: "thread comment" },
          { account_id: x, content_override: "thread tail" },
        ],
      },
    });
    expect(created.status).toBe(201);
    await engine.runUntilIdle();
    const p = await post(created.body.data.id);
    expect(p.targets.map((t: { status: string }) => t.status)).toEqual(["published", "published"]);
    expect(p.targets[0].first_comment.status).toBe("published");
    expect(p.targets[1].first_comment).toBeNull();
    expect(replies("thread comment")).toHaveLength(1);
    expect(replies("thread comment")[0].replyTo).toBe(p.targets[0].platform_post_id);
  });

  test("PATCH of a scheduled post changes the comment; without targets it keeps it", async () => {
    const at = new Date(h.clock.now().getTime() + 3_600_000).toISOString();
    const created = await h.request("POST", "/v1/posts", {
      token,
      body: { content: "later", publish_at: at, targets: [{ account_id: x, first_comment: "before" }] },
    });
    expect(created.body.data.targets[0].first_comment).toMatchObject({ text: "before", status: "waiting" });
    const id = created.body.data.id;
    let res = await h.request("PATCH", `/v1/posts/${id}`, { token, body: { content: "later, edited" } });
    expect(res.status).toBe(200);
    expect(res.body.data.targets[0].first_comment).toMatchObject({ text: "before", status: "waiting" });
    res = await h.request("PATCH", `/v1/posts/${id}`, {
      token,
      body: { targets: [{ account_id: x, first_comment: "after" }] },
    });
    expect(res.body.data.targets[0].first_comment).toMatchObject({ text: "after", status: "waiting" });
    res = await h.request("PATCH", `/v1/posts/${id}`, {
      token,
      body: { targets: [{ account_id: x, first_comment: "x".repeat(281) }] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("first_comment_too_long");
    res = await h.request("PATCH", `/v1/posts/${id}`, { token, body: { targets: [{ account_id: x }] } });
    expect(res.body.data.targets[0].first_comment).toBeNull();
  });
});
