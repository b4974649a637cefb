import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ChildProcess } from "node:child_process";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { createPost } from "../../src/modules/posts/service.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { createBlueskyEmulator, type BlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import { childDatabase, exited, startKillableServe, until } from "../support/killable-serve.ts";

// `crier serve` as a child process is killed with SIGKILL while its publishes are in flight (the
// emulator created the posts but holds its answers), then started again. Every target must end
// terminal, the interrupted ones outcome_unknown, and no post may exist twice on the platform.
// On PostgreSQL the database comes from TEST_DATABASE_URL; otherwise the child uses an embedded
// database in a data dir of its own, prepared here first.

const SECRET = "crash-test-secret-key-long-enough-000000";
const TARGETS = 30;
const ACCOUNTS = 10;

let emulator: BlueskyEmulator;
let served: ServedEmulator;
let childEnv: Record<string, string>;
let token: string;
let cleanup: () => Promise<void> = async () => {};
const children: ChildProcess[] = [];

const startServe = () => startKillableServe(childEnv, children);

beforeAll(async () => {
  emulator = createBlueskyEmulator();
  served = serveEmulator(emulator);
  const shared = await childDatabase("crash", {
    SECRET_KEY: SECRET,
    PUBLISH_LEASE_SECONDS: "5",
    CRIER_BLUESKY_API_URL: served.url,
    CRIER_BLUESKY_TIMEOUT_MS: "120000",
    // Exactly HELD publishes in flight, all of them held: the kill then interrupts only those.
    CRIER_BLUESKY_CONCURRENCY: "4",
  });
  const { ctx } = shared;
  const db = ctx.db;
  childEnv = shared.childEnv;
  cleanup = shared.close;
  const profile = await createProfile(db, "crash");
  token = (await createKey(db, { name: "crash", profileId: profile.id, scopes: [...SCOPES] })).token;
  const accounts = await Promise.all(
    Array.from({ length: ACCOUNTS }, (_, i) => connectBluesky(ctx, profile.id, `crash${i}.test`)),
  );
  for (let i = 0; i < TARGETS; i++) {
    await createPost(ctx, profile.id, { content: `crash ${i}`, targets: [{ account_id: accounts[i % ACCOUNTS] }] });
  }
  await shared.release();
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await served?.stop();
  await cleanup();
});

describe("kill -9 of a serving copy mid-batch", () => {
  test("after a restart every target is terminal, the interrupted ones outcome_unknown, no duplicates", async () => {
    // Every createRecord creates the post and then holds its answer far longer than the test runs.
    const HELD = 4; // the copies' cap of Bluesky publishes at once (CRIER_BLUESKY_CONCURRENCY above)
    emulator.failNext({ kind: "timeout", on: "createRecord", delayMs: 300_000, times: HELD });

    const first = await startServe();
    await until("publishes in flight", () => (emulator.posts().length >= HELD ? true : undefined));
    first.child.kill("SIGKILL");
    await exited(first.child);
    const interrupted = new Set(emulator.posts().map((p) => p.text));
    expect(interrupted.size).toBe(HELD);

    const second = await startServe();
    const list = async () => {
      const res = await fetch(`${second.url}/v1/posts?limit=100`, { headers: { authorization: `Bearer ${token}` } });
      return (await res.json()) as {
        data: {
          content: string;
          status: string;
          targets: { status: string; error_code: string | null; attempts: number }[];
        }[];
      };
    };
    const posts = await until("every target terminal", async () => {
      const { data } = await list();
      return data.length === TARGETS && data.every((p) => ["published", "failed"].includes(p.targets[0].status))
        ? data
        : undefined;
    });
    second.child.kill("SIGTERM");
    await exited(second.child);

    const onPlatform = emulator.posts().map((p) => p.text);
    const duplicates = onPlatform.length - new Set(onPlatform).size;
    const unknown = posts.filter((p) => p.targets[0].error_code === "outcome_unknown");
    console.log(
      `crash: ${TARGETS} targets, ${posts.filter((p) => p.status === "published").length} published, ${unknown.length} outcome_unknown, ${onPlatform.length} posts on the emulator, ${duplicates} duplicates`,
    );
    expect(duplicates).toBe(0);
    // The interrupted publishes end outcome_unknown. So do the targets the copy had claimed ahead of a free
    // slot (at most one batch, twice the cap: src/engine/pool.ts claimBatch): the lease cannot tell them from
    // one whose call began. They were never sent, so they are not on the platform, and the reconciler,
    // which asks Bluesky, finds them absent and tries them once more (tests/engine/reconcile.test.ts).
    const unknownTexts = unknown.map((p) => p.content);
    for (const text of interrupted) expect(unknownTexts).toContain(text);
    const claimedAhead = unknownTexts.filter((text) => !interrupted.has(text));
    expect(claimedAhead.length).toBeLessThanOrEqual(2 * HELD);
    for (const text of claimedAhead) expect(onPlatform).not.toContain(text);
    for (const p of posts) {
      if (unknownTexts.includes(p.content))
        expect(p.targets[0]).toMatchObject({ status: "failed", error_code: "outcome_unknown", attempts: 1 });
      else expect(p.targets[0]).toMatchObject({ status: "published", attempts: 1 });
    }
    expect(onPlatform.length).toBe(TARGETS - claimedAhead.length);
  }, 90_000);
});
