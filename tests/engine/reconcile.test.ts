/**
 * Unknown outcomes settled by the reconciler, end to end: a 5xx on the creating call (the emulator either
 * did the work first or not), the engine records outcome_unknown, and after the settle delay the reconciler
 * asks the plugin. Found → published with the platform's id; proven absent on a read-after-write listing
 * (Bluesky) → retried once; otherwise (absent where the listing may lag, or the listing unreadable) the
 * target stays outcome_unknown and its error says what was checked. Never a second post.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createEngine, type Engine } from "../../src/engine/scheduler.ts";
import { reconcileJob } from "../../src/engine/reconcile.ts";
import { createKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import type { Emulator } from "../../src/platform/sdk.ts";
import type { Harness } from "../support/harness.ts";
import { engineHarness } from "../support/engine-kit.ts";
import { oauthRig } from "../plugins/support.ts";
import { fakeMp4 } from "../support/media-fixtures.ts";
import { createXEmulator } from "../../plugins/twitter/emulator.ts";
import { createThreadsEmulator } from "../../plugins/threads/emulator.ts";
import { createYouTubeEmulator } from "../../plugins/youtube/emulator.ts";

const SETTLE_MS = 30_000;
const MP4 = fakeMp4(4096);

interface Subject {
  h: Harness;
  engine: Engine;
  emulator: Emulator;
  token: string;
  accountId: string;
  /** What the failure specs name: the creating call and the listing the reconciler reads. */
  createOp: string;
  listOp: string;
  readAfterWrite: boolean;
  media?: { url: string; type: "video" }[];
  stop(): Promise<void>;
}

/** An OAuth platform connected through its consent redirect, with an engine that runs the reconciler. */
async function oauthSubject(
  emulator: Emulator,
  p: { authorizePath: string; tokenPath: string; createOp: string; listOp: string; video?: boolean },
): Promise<Subject> {
  const rig = await oauthRig(emulator, {
    authorizePath: p.authorizePath,
    tokenPath: p.tokenPath,
    media: () => new Response(MP4, { headers: { "content-type": "video/mp4" } }),
  });
  const [row] = rig.rows;
  const { token } = await createKey(rig.h.db, { name: "reconcile", profileId: row.profileId, scopes: [...SCOPES] });
  const engine = createEngine(rig.h.ctx, {
    random: () => 0.5,
    jobs: [reconcileJob],
    reconcileSettleMs: SETTLE_MS,
    // The video is the server's own upload here, so the engine reads it without the public-address guard.
    ownStorage: {
      openByPublicUrl: async (url) =>
        url.endsWith("/good.mp4")
          ? { contentType: "video/mp4", size: MP4.length, stream: () => new Response(MP4).body! }
          : null,
    },
  });
  rig.h.ctx.dispatch = engine;
  return {
    h: rig.h,
    engine,
    emulator,
    token,
    accountId: row.id,
    createOp: p.createOp,
    listOp: p.listOp,
    readAfterWrite: false,
    ...(p.video && { media: [{ url: `${rig.mediaUrl}/good.mp4`, type: "video" as const }] }),
    async stop() {
      await engine.stop();
      await rig.stop();
    },
  };
}

async function blueskySubject(): Promise<Subject> {
  const h = await engineHarness({ engine: { jobs: [reconcileJob], reconcileSettleMs: SETTLE_MS } });
  const { token, profileId } = await h.profile();
  const accountId = await h.bluesky(profileId, "reconcile.test");
  return {
    h,
    engine: h.engine,
    emulator: h.emulator,
    token,
    accountId,
    createOp: "createRecord",
    listOp: "getAuthorFeed",
    readAfterWrite: true,
    stop: () => h.close(),
  };
}

const subjects: [string, () => Promise<Subject>][] = [
  ["Bluesky", blueskySubject],
  [
    "X",
    () =>
      oauthSubject(createXEmulator(), {
        authorizePath: "/oauth/authorize",
        tokenPath: "/oauth/token",
        createOp: "/2/tweets",
        listOp: "/2/users/",
      }),
  ],
  [
    "Threads",
    () =>
      oauthSubject(createThreadsEmulator(), {
        authorizePath: "/oauth/authorize",
        tokenPath: "/oauth/access_token",
        createOp: "threads_publish",
        listOp: "/me/threads",
      }),
  ],
  [
    "YouTube",
    () =>
      oauthSubject(createYouTubeEmulator(), {
        authorizePath: "/oauth/authorize",
        tokenPath: "/token",
        createOp: "/upload/session",
        listOp: "playlistItems",
        video: true,
      }),
  ],
];

describe.each(subjects)("%s", (_name, make) => {
  let s: Subject;
  beforeAll(async () => {
    s = await make();
  });
  afterAll(() => s.stop());

  const clock = () => s.h.clock;
  const onPlatform = (text: string) => s.emulator.posts().filter((p) => p.text.startsWith(text));
  const target = async (postId: string) =>
    (await s.h.request("GET", `/v1/posts/${postId}`, { token: s.token })).body.data.targets[0];
  async function publishFailing(text: string, failure: { afterWork: boolean; times?: number }) {
    s.emulator.failNext({ kind: "server_error", on: s.createOp, ...failure });
    const res = await s.h.request("POST", "/v1/posts", {
      token: s.token,
      body: { content: text, ...(s.media && { media: s.media }), targets: [{ account_id: s.accountId }] },
    });
    expect(res.status).toBe(201);
    await s.engine.runUntilIdle();
    const t = await target(res.body.data.id);
    expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown" });
    return res.body.data.id as string;
  }
  async function afterSettle() {
    clock().advance(SETTLE_MS + 1000);
    await s.engine.runUntilIdle();
  }

  test("5xx after the post was made: found on the account, published with its id and URL", async () => {
    const text = `found ${s.createOp} ${crypto.randomUUID().slice(0, 8)}`;
    const postId = await publishFailing(text, { afterWork: true });
    expect(onPlatform(text)).toHaveLength(1);
    // Not before the settle delay.
    await s.engine.runUntilIdle();
    expect((await target(postId)).status).toBe("failed");
    await afterSettle();
    const t = await target(postId);
    expect(t).toMatchObject({ status: "published", error: null, error_code: null });
    expect(t.platform_post_id).toBeTruthy();
    expect(t.platform_post_url).toBeTruthy();
    expect(onPlatform(text)).toHaveLength(1);
  });

  test("5xx before anything was made: proven absent → retried once where the listing is read-after-write, else it stays unknown saying what was checked", async () => {
    const text = `absent ${crypto.randomUUID().slice(0, 8)}`;
    const postId = await publishFailing(text, { afterWork: false });
    expect(onPlatform(text)).toHaveLength(0);
    await afterSettle();
    const t = await target(postId);
    if (s.readAfterWrite) {
      expect(t).toMatchObject({ status: "published", attempts: 2 });
      expect(onPlatform(text)).toHaveLength(1);
    } else {
      expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown", attempts: 1 });
      expect(t.error).toContain("Crier checked");
      expect(t.error).toContain("does not prove");
      expect(onPlatform(text)).toHaveLength(0);
    }
    clock().advance(3600_000);
    await s.engine.runUntilIdle();
    expect((await target(postId)).status).toBe(t.status);
    expect(onPlatform(text)).toHaveLength(s.readAfterWrite ? 1 : 0);
  });

  test("the account's posts cannot be read: it stays outcome_unknown and says it could not tell", async () => {
    const text = `cannot tell ${crypto.randomUUID().slice(0, 8)}`;
    const postId = await publishFailing(text, { afterWork: true });
    s.emulator.failNext({ kind: "server_error", on: s.listOp, times: 5 });
    await afterSettle();
    const t = await target(postId);
    expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown", attempts: 1 });
    expect(t.error).toContain("could not tell");
    expect(onPlatform(text)).toHaveLength(1);
  });
});

describe("Bluesky, more cases", () => {
  let s: Subject;
  beforeAll(async () => {
    s = await blueskySubject();
  });
  afterAll(() => s.stop());

  test("the one retry a proven absence allows is spent once: a second unknown stays unknown", async () => {
    const text = `twice ${crypto.randomUUID().slice(0, 8)}`;
    s.emulator.failNext({ kind: "server_error", on: "createRecord", times: 2 });
    const res = await s.h.request("POST", "/v1/posts", {
      token: s.token,
      body: { content: text, targets: [{ account_id: s.accountId }] },
    });
    await s.engine.runUntilIdle();
    for (let i = 0; i < 3; i++) {
      s.h.clock.advance(SETTLE_MS + 1000);
      await s.engine.runUntilIdle();
    }
    const t = (await s.h.request("GET", `/v1/posts/${res.body.data.id}`, { token: s.token })).body.data.targets[0];
    expect(t).toMatchObject({ status: "failed", error_code: "outcome_unknown", attempts: 2 });
    expect(t.error).toContain("not retried again");
    expect(s.emulator.posts().filter((p) => p.text === text)).toHaveLength(0);
  });

  test("a copy that died mid-publish (lease expired): the post it made is found and the target published", async () => {
    const text = `crashed ${crypto.randomUUID().slice(0, 8)}`;
    const res = await s.h.request("POST", "/v1/posts", {
      token: s.token,
      body: { content: text, targets: [{ account_id: s.accountId }] },
    });
    await s.engine.runUntilIdle();
    const made = (await s.h.request("GET", `/v1/posts/${res.body.data.id}`, { token: s.token })).body.data.targets[0];
    expect(made.status).toBe("published");
    // The database as a copy killed after the platform made the post, before it recorded the result.
    const now = s.h.clock.now();
    await s.h.db.rows(sql`
      update post_targets set status = 'processing', platform_post_id = null, platform_post_url = null,
        published_at = null, claimed_by = 'a copy that died', due_at = ${now.toISOString()}::timestamptz,
        lease_until = ${new Date(now.getTime() - 1000).toISOString()}::timestamptz
      where id = ${made.target_post_id}`);
    await s.engine.runUntilIdle();
    const read = async () =>
      (await s.h.request("GET", `/v1/posts/${res.body.data.id}`, { token: s.token })).body.data.targets[0];
    expect(await read()).toMatchObject({ status: "failed", error_code: "outcome_unknown" });
    s.h.clock.advance(SETTLE_MS + 1000);
    await s.engine.runUntilIdle();
    expect(await read()).toMatchObject({ status: "published", platform_post_id: made.platform_post_id, attempts: 1 });
    expect(s.emulator.posts().filter((p) => p.text === text)).toHaveLength(1);
  });
});
