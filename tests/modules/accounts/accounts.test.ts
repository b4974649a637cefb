import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createHarness, type Harness } from "../../support/harness.ts";
import { accounts } from "../../../src/db/schema.ts";
import { decryptJson } from "../../../src/db/crypto.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const connect = (profileId: string, remoteId = "did:plc:alice", username = "alice.bsky.social") =>
  upsertConnectedAccount(h.ctx, {
    profileId,
    platform: "bluesky",
    remoteId,
    username,
    credentials: { accessJwt: "secret-token" },
  });

test("GET /v1/accounts lists every account of the profile in the Account shape", async () => {
  const p = await h.profile();
  const a = await connect(p.profileId);
  h.clock.advance(1000); // listed oldest first
  const b = await upsertConnectedAccount(h.ctx, {
    profileId: p.profileId,
    platform: "telegram",
    remoteId: "-100123",
    username: "@news",
    credentials: {},
  });
  const res = await h.request("GET", "/v1/accounts", { token: p.token });
  expect(res.status).toBe(200);
  expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([a.id, b.id]);
  const first = res.body.data[0];
  expect(Object.keys(first).sort()).toEqual([
    "avatar_url",
    "capabilities",
    "created_at",
    "credentials_expire_at",
    "id",
    "media_requirements",
    "platform",
    "status",
    "updated_at",
    "username",
  ]);
  expect(first).toMatchObject({
    platform: "bluesky",
    username: "alice.bsky.social",
    status: "active",
    avatar_url: null,
  });
});

test("GET /v1/accounts keeps the order accounts were first connected: a reconnect keeps its place", async () => {
  const p = await h.profile();
  const first = await connect(p.profileId, "did:plc:first", "first.bsky.social");
  h.clock.advance(1000);
  const second = await connect(p.profileId, "did:plc:second", "second.bsky.social");
  h.clock.advance(1000);
  await h.request("DELETE", `/v1/accounts/${first.id}`, { token: p.token });
  h.clock.advance(1000);
  // Reconnecting changes the older account (status, credentials, updated_at) but not where it is listed.
  await connect(p.profileId, "did:plc:first", "first.bsky.social");
  const res = await h.request("GET", "/v1/accounts", { token: p.token });
  expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([first.id, second.id]);
  expect(res.body.data[0].updated_at > res.body.data[1].updated_at).toBe(true);
});

test("credentials are stored encrypted, never in clear", async () => {
  const p = await h.profile();
  const row = await connect(p.profileId);
  expect(row.credentials).not.toContain("secret-token");
  expect(decryptJson(h.ctx.config.secretKey, row.credentials!)).toEqual({ accessJwt: "secret-token" });
});

test("DELETE disconnects: status disconnected, credentials cleared, record and history kept", async () => {
  const p = await h.profile();
  const a = await connect(p.profileId);
  const res = await h.request("DELETE", `/v1/accounts/${a.id}`, { token: p.token });
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ id: a.id, deleted: false, disconnected: true });
  expect(res.body.data).toHaveProperty("provider_revocation_required");
  expect(res.body.data).toHaveProperty("provider_revocation_url");
  expect(typeof res.body.data.message).toBe("string");
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, a.id));
  expect(row.status).toBe("disconnected");
  expect(row.credentials).toBeNull();
  const list = await h.request("GET", "/v1/accounts", { token: p.token });
  expect(list.body.data.find((x: { id: string }) => x.id === a.id).status).toBe("disconnected");
});

test("reconnecting the same remote account restores it instead of duplicating it", async () => {
  const p = await h.profile();
  const a = await connect(p.profileId);
  await h.request("DELETE", `/v1/accounts/${a.id}`, { token: p.token });
  const again = await connect(p.profileId, "did:plc:alice", "alice.new");
  expect(again.id).toBe(a.id);
  expect(again.status).toBe("active");
  const list = await h.request("GET", "/v1/accounts", { token: p.token });
  expect(list.body.data).toHaveLength(1);
  expect(list.body.data[0]).toMatchObject({ id: a.id, status: "active", username: "alice.new" });
});

test("another profile gets 404 for this account and never sees it", async () => {
  const p = await h.profile();
  const a = await connect(p.profileId);
  const other = await h.profile();
  const del = await h.request("DELETE", `/v1/accounts/${a.id}`, { token: other.token });
  expect(del.status).toBe(404);
  expect(del.body.error.code).toBe("not_found");
  expect((await h.request("GET", "/v1/accounts", { token: other.token })).body.data).toEqual([]);
  const [row] = await h.db.db.select().from(accounts).where(eq(accounts.id, a.id));
  expect(row.status).toBe("active");
});

test("unknown or malformed account ids", async () => {
  const p = await h.profile();
  const unknown = await h.request("DELETE", "/v1/accounts/7b0e7c36-1111-4a7e-9a1b-5d6c7e8f9a0b", { token: p.token });
  expect(unknown.status).toBe(404);
  // A malformed id is not found like an unknown one (issue 11), not a validation error.
  const malformed = await h.request("DELETE", "/v1/accounts/42", { token: p.token });
  expect(malformed.status).toBe(404);
  expect(malformed.body.error.code).toBe("not_found");
});
