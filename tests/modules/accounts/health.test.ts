/**
 * Account health over the API: GET /v1/accounts/{id}/check (the `crier accounts check` facts for one
 * account, read from the platform's emulator) and GET /v1/accounts/at-risk (accounts whose scheduled
 * posts will not go out unless they are connected again), plus credentials_expire_at on each account.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { accounts } from "../../../src/db/schema.ts";
import { workflowHarness, type WorkflowHarness } from "../../support/workflow-kit.ts";

let h: WorkflowHarness;
let x = "";
let bsky = "";
const get = (path: string, token = h.token) => h.request("GET", path, { token });

beforeAll(async () => {
  h = await workflowHarness();
  x = await h.connect("twitter");
  bsky = await h.connect("bluesky", { handle: "health.test" });
});
afterAll(() => h.stop());

describe("account health", () => {
  test("an account answers when its credentials end, read from the database", async () => {
    const list = (await get("/v1/accounts")).body.data as any[];
    const tw = list.find((a) => a.id === x);
    const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, x));
    expect(tw.credentials_expire_at).toBe(row.credentialsExpireAt ? row.credentialsExpireAt.toISOString() : null);
    expect(list.find((a) => a.id === bsky)).toHaveProperty("credentials_expire_at");
  });

  test("GET /v1/accounts/{id}/check reports the token, its expiry and the scopes from the platform", async () => {
    const r = await get(`/v1/accounts/${x}/check`);
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ account_id: x, platform: "twitter", token: "valid", can_publish: true });
    expect(r.body.data.problems).toEqual([]);
    expect(r.body.data.scopes.granted).toContain("tweet.write");
    expect(r.body.data.scopes.missing).toEqual({});
    expect(Date.parse(r.body.data.expires_at)).toBeGreaterThan(h.clock.now().getTime());
    expect(Date.parse(r.body.data.checked_at)).toBe(h.clock.now().getTime());
  });

  test("an account that needs connecting again says so without calling the platform", async () => {
    await h.db.db.update(accounts).set({ status: "auth_required" }).where(eq(accounts.id, bsky));
    try {
      const r = await get(`/v1/accounts/${bsky}/check`);
      expect(r.body.data).toMatchObject({ token: "refused", can_publish: false });
      expect(r.body.data.problems[0]).toContain("connected again");
    } finally {
      await h.db.db.update(accounts).set({ status: "active" }).where(eq(accounts.id, bsky));
    }
  });

  test("another profile's account is 404, a malformed id as elsewhere, and a key without accounts:read is refused", async () => {
    const other = await h.profile();
    expect((await get(`/v1/accounts/${x}/check`, other.token)).status).toBe(404);
    // A malformed id is answered as the other account routes answer it, in the error envelope.
    const bad = await get("/v1/accounts/not-a-uuid/check");
    const del = await h.request("DELETE", "/v1/accounts/not-a-uuid", { token: h.token });
    expect(bad.status).toBe(del.status);
    expect(bad.body.error.code).toBe(del.body.error.code);
    const writer = await h.profile({ scopes: ["posts:write"] });
    expect((await get(`/v1/accounts/${x}/check`, writer.token)).status).toBe(403);
    expect((await get("/v1/accounts/at-risk", writer.token)).status).toBe(403);
  });

  test("at-risk lists an account whose credentials end before its first scheduled post, and an auth_required one", async () => {
    expect((await get("/v1/accounts/at-risk")).body.data).toEqual([]);
    const due = new Date(h.clock.now().getTime() + 10 * 86_400_000);
    const later = new Date(due.getTime() + 86_400_000);
    for (const [account, at] of [
      [x, due],
      [x, later],
      [bsky, later],
    ] as const) {
      const r = await h.request("POST", "/v1/posts", {
        token: h.token,
        body: { content: "Spring sale", publish_at: at.toISOString(), targets: [{ account_id: account }] },
      });
      expect(r.status).toBe(201);
    }
    // Credentials that outlive the posts: nothing to warn about.
    const far = new Date(later.getTime() + 86_400_000);
    await h.db.db.update(accounts).set({ credentialsExpireAt: far }).where(eq(accounts.id, x));
    expect((await get("/v1/accounts/at-risk")).body.data).toEqual([]);
    // Ending three days before the first post is due: listed with that post's time.
    const ends = new Date(due.getTime() - 3 * 86_400_000);
    await h.db.db.update(accounts).set({ credentialsExpireAt: ends }).where(eq(accounts.id, x));
    await h.db.db.update(accounts).set({ status: "auth_required" }).where(eq(accounts.id, bsky));
    const risk = (await get("/v1/accounts/at-risk")).body.data;
    expect(risk).toEqual([
      {
        account_id: x,
        platform: "twitter",
        username: expect.any(String),
        status: "active",
        credentials_expire_at: ends.toISOString(),
        first_scheduled_at: due.toISOString(),
        scheduled_posts: 2,
        reason: "expires_before_due",
      },
      {
        account_id: bsky,
        platform: "bluesky",
        username: "health.test",
        status: "auth_required",
        credentials_expire_at: null,
        first_scheduled_at: later.toISOString(),
        scheduled_posts: 1,
        reason: "auth_required",
      },
    ]);
    // Another profile sees none of it.
    expect((await get("/v1/accounts/at-risk", (await h.profile()).token)).body.data).toEqual([]);
  });
});
