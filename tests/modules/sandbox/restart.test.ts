/**
 * A sandbox survives restarts and is the same on every copy: emulator state (accounts, tokens, posts, id
 * counters) lives in the database. Accounts connected through one copy publish through a copy started
 * afterwards with fresh emulators, and through several copies answering in turn.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey, createProfile } from "../../../src/modules/keys/service.ts";
import { SCOPES } from "../../../src/http/scopes.ts";
import { connectSandbox, sandboxCluster, type Copy, type SandboxCluster } from "../../support/sandbox-kit.ts";

const PLATFORMS = ["bluesky", "telegram", "twitter", "threads", "facebook", "nostr", "farcaster", "linkedin"];
/** One account per platform, and LinkedIn's second: the company page the sandbox member administers. */
const ACCOUNTS = PLATFORMS.length + 1;

let cluster: SandboxCluster;
let firstCopy: Copy;
let secondCopy: Copy;
let token: string;
let accountIds: string[];

async function publishEverywhere(content: string) {
  const res = await cluster.request("POST", "/v1/posts", {
    token,
    body: { content, targets: accountIds.map((account_id) => ({ account_id })) },
  });
  expect(res.status).toBe(201);
  await cluster.settle();
  const post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token });
  return post.body.data as {
    status: string;
    targets: { platform: string; status: string; error: string | null; platform_post_id: string }[];
  };
}

function failures(post: Awaited<ReturnType<typeof publishEverywhere>>) {
  return post.targets.filter((t) => t.status !== "published").map((t) => `${t.platform}: ${t.status} ${t.error}`);
}

beforeAll(async () => {
  cluster = await sandboxCluster();
  firstCopy = await cluster.start();
  const profile = await createProfile(cluster.db, "sandbox", true);
  ({ token } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] }));
  for (const p of PLATFORMS) await connectSandbox(cluster, token, p);
  const list = await cluster.request("GET", "/v1/accounts?limit=100", { token });
  accountIds = list.body.data.map((a: { id: string }) => a.id);
  expect(accountIds).toHaveLength(ACCOUNTS);
}, 60_000);

afterAll(() => cluster.stop());

describe("sandbox state in the database", () => {
  const ids = new Map<string, string[]>();
  const record = (post: Awaited<ReturnType<typeof publishEverywhere>>) => {
    for (const t of post.targets) ids.set(t.platform, [...(ids.get(t.platform) ?? []), t.platform_post_id]);
  };

  test("publishes to every connected sandbox account", async () => {
    const post = await publishEverywhere("before the restart");
    expect(failures(post)).toEqual([]);
    record(post);
  }, 60_000);

  test("after a restart (a new copy with fresh emulators) the accounts stay active and publish again", async () => {
    // The restart: the old copy goes away; only the new one, whose emulators never saw the accounts, answers.
    secondCopy = await cluster.start();
    await cluster.stopCopy(firstCopy);
    const post = await publishEverywhere("after the restart");
    expect(failures(post)).toEqual([]);
    record(post);
    const list = await cluster.request("GET", "/v1/accounts?limit=100", { token });
    expect(list.body.data.map((a: { status: string }) => a.status)).toEqual(Array(ACCOUNTS).fill("active"));
    // Ids the emulators hand out continue where they were: no platform reused one (Telegram's message ids).
    for (const [platform, seen] of ids)
      expect({ platform, unique: new Set(seen).size }).toEqual({ platform, unique: platform === "linkedin" ? 4 : 2 });
  }, 60_000);

  test("a copy that just started connects new sandbox accounts with the sandbox's saved values (Nostr's bunker)", async () => {
    await cluster.start();
    const profile = await createProfile(cluster.db, "another", true);
    const { token: another } = await createKey(cluster.db, { name: "k", profileId: profile.id, scopes: [...SCOPES] });
    // Only the new copy answers: its Nostr emulator has not been called yet.
    await cluster.stopCopy(secondCopy);
    await connectSandbox(cluster, another, "nostr");
    const [account] = (await cluster.request("GET", "/v1/accounts", { token: another })).body.data;
    const res = await cluster.request("POST", "/v1/posts", {
      token: another,
      body: { content: "from a fresh copy", targets: [{ account_id: account.id }] },
    });
    await cluster.settle();
    const post = await cluster.request("GET", `/v1/posts/${res.body.data.id}`, { token: another });
    expect(post.body.data.status).toBe("published");
  }, 60_000);

  test("two copies answering in turn share one sandbox", async () => {
    await cluster.start();
    // Posts created at once land on both copies, whose emulators then hand out ids concurrently.
    const posts = await Promise.all([1, 2, 3].map((n) => publishEverywhere(`two copies ${n}`)));
    for (const post of posts) {
      expect(failures(post)).toEqual([]);
      record(post);
    }
    for (const [platform, seen] of ids)
      expect({ platform, unique: new Set(seen).size }).toEqual({ platform, unique: platform === "linkedin" ? 10 : 5 });
  }, 120_000);
});
