/**
 * Isolation and scope matrix generated from the app's route table and OpenAPI description: every /v1
 * route with another profile's ids → 404, with a key missing its scope → 403, with a revoked key → 401.
 * A route added tomorrow is in the matrix tomorrow; a path parameter nobody has a fixture for fails.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { createKey, revokeKey } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { minimal, operations, type Operation } from "../support/openapi-schema.ts";

let h: Harness;
let spec: any;
let ops: Operation[];
let owner: { profileId: string; token: string };
let stranger: { token: string };
let strangerSandbox: { token: string };
/** The owner's record ids by path parameter, as the route's path names the record. */
const ids: Record<string, string> = {};

const connect = async (profileId: string, remoteId: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId,
      platform: "bluesky",
      remoteId,
      username: `${remoteId}.test`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId },
    })
  ).id;

beforeAll(async () => {
  h = await createHarness({ webhookAllowPrivate: true });
  owner = await h.profile({ name: "owner" });
  stranger = await h.profile({ name: "stranger" });
  strangerSandbox = await h.profile({ name: "stranger sandbox", sandbox: true });
  const token = owner.token;
  const accountA = await connect(owner.profileId, "did:plc:owner-a");
  const accountB = await connect(owner.profileId, "did:plc:owner-b");
  const post = await h.request("POST", "/v1/posts", {
    token,
    body: { content: "owned", publish_at: "2099-01-01T00:00:00Z", targets: [{ account_id: accountA }] },
  });
  expect(post.status).toBe(201);
  const series = await h.request("POST", "/v1/posts", {
    token,
    body: {
      content: "owned series",
      publish_at: "2099-01-05T09:00:00Z",
      targets: [{ account_id: accountA }],
      repeat: { rule: "FREQ=WEEKLY;COUNT=2", time_zone: "UTC" },
    },
  });
  expect(series.status).toBe(201);
  const draft = await h.request("POST", "/v1/drafts", { token, body: { content: "owned draft" } });
  expect(draft.status).toBe(201);
  const workflow = await h.request("POST", "/v1/workflows", {
    token,
    body: { name: "owned", source_account_id: accountA, target_account_ids: [accountB], is_active: false },
  });
  expect(workflow.status).toBe(201);
  const upload = await h.request("POST", "/v1/media/uploads", {
    token,
    body: { filename: "a.png", content_type: "image/png" },
  });
  expect(upload.status).toBe(201);
  // A receiver nobody listens on: the test delivery fails at once, and is still a delivery record.
  const webhook = await h.request("POST", "/v1/webhooks", {
    token,
    body: { url: "http://127.0.0.1:9/hook", events: ["*"] },
  });
  expect(webhook.status).toBe(201);
  const delivery = await h.request("POST", `/v1/webhooks/${webhook.body.data.id}/test`, { token });
  expect(delivery.status).toBe(200);
  Object.assign(ids, {
    "/v1/accounts/{id}": accountA,
    "/v1/posts/{id}": post.body.data.id,
    "/v1/posts/{id}/targets/{targetId}": post.body.data.targets[0].target_post_id,
    "/v1/drafts/{id}": draft.body.data.id,
    "/v1/series/{id}": series.body.data.series_id,
    "/v1/workflows/{id}": workflow.body.data.id,
    "/v1/media/{id}": upload.body.data.media_id,
    "/v1/webhooks/{id}": webhook.body.data.id,
    "/v1/webhooks/{id}/deliveries/{deliveryId}": delivery.body.data.id,
  });
  spec = (await h.request("GET", "/openapi.json")).body;
  ops = operations(spec).filter((o) => o.path.startsWith("/v1/") && o.scope);
});
afterAll(() => h.close());

/** The owner's id for each {param} of the path: the record the segment before it names. */
function ownedPath(op: Operation): string | undefined {
  let path = op.path;
  for (const param of op.pathParams) {
    const prefix = op.path.slice(0, op.path.indexOf(`{${param}}`) + param.length + 2);
    const id = ids[prefix];
    if (!id) return undefined;
    path = path.replace(`{${param}}`, id);
  }
  return path;
}

/** A body the route's schema accepts, so the answer says what the route decides, not what validation does. */
const bodyOf = (op: Operation) => (op.body ? minimal(spec, op.body) : undefined);

const call = (op: Operation, path: string, token: string) => h.request(op.method, path, { token, body: bodyOf(op) });

const expectError = (res: { status: number; body: any }, status: number, code: string, label: string) => {
  expect({ route: label, status: res.status, code: res.body?.error?.code }).toEqual({ route: label, status, code });
  expect(typeof res.body.error.message).toBe("string");
};

test("the matrix covers the routes: every /v1 operation with a scope, and a fixture for each record path", () => {
  expect(ops.length).toBeGreaterThan(25);
  // The route table and the description agree: every route that takes a key is described with its scope.
  const scoped = (h.app.routes as { path: string; method: string; hooks?: any }[]).filter(
    (r) => r.hooks?.detail?.["x-scope"],
  );
  expect(ops.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
    scoped.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`).sort(),
  );
  for (const op of ops.filter((o) => o.pathParams.some((p) => p !== "platform"))) {
    expect({ route: `${op.method} ${op.path}`, covered: ownedPath(op) !== undefined }).toEqual({
      route: `${op.method} ${op.path}`,
      covered: true,
    });
  }
});

test("every route with another profile's ids is 404 not_found, and changes nothing", async () => {
  for (const op of ops) {
    if (!op.pathParams.some((p) => p !== "platform")) continue;
    const path = ownedPath(op)!;
    const res = await call(op, path, stranger.token);
    expectError(res, 404, "not_found", `${op.method} ${op.path}`);
  }
  // The owner still has every record.
  for (const [route, id] of Object.entries(ids)) {
    if (!ops.some((o) => o.method === "GET" && o.path === route) || route.includes("targets")) continue;
    const res = await h.request("GET", route.replace("{id}", id), { token: owner.token });
    // A media ticket not uploaded yet is 409 to its owner; what matters is that it is still there.
    expect({ route, found: res.status !== 404 }).toEqual({ route, found: true });
  }
  const accounts = await h.request("GET", "/v1/accounts", { token: owner.token });
  expect(accounts.body.data.find((a: { id: string }) => a.id === ids["/v1/accounts/{id}"])?.status).toBe("active");
});

test("every list route shows another profile none of the owner's records", async () => {
  for (const op of ops) {
    if (op.method !== "GET" || op.pathParams.length) continue;
    // Sandbox routes answer only sandbox profiles: the stranger asks from a sandbox profile of its own.
    const token = op.path.startsWith("/v1/sandbox/") ? strangerSandbox.token : stranger.token;
    const res = await call(op, op.path, token);
    expect({ route: op.path, status: res.status }).toEqual({ route: op.path, status: 200 });
    const text = JSON.stringify(res.body);
    for (const id of Object.values(ids))
      expect({ route: op.path, leaks: text.includes(id) }).toEqual({ route: op.path, leaks: false });
  }
});

test("every route with a key missing its scope is 403 missing_scope", async () => {
  const keys = new Map<string, string>();
  for (const scope of SCOPES) {
    const { token } = await createKey(h.db, {
      name: `without ${scope}`,
      profileId: owner.profileId,
      scopes: SCOPES.filter((s) => s !== scope),
    });
    keys.set(scope, token);
  }
  for (const op of ops) {
    const token = keys.get(op.scope!);
    expect({ route: `${op.method} ${op.path}`, knownScope: !!token }).toEqual({
      route: `${op.method} ${op.path}`,
      knownScope: true,
    });
    const res = await call(op, ownedPath(op) ?? op.path.replace("{platform}", "bluesky"), token!);
    expectError(res, 403, "missing_scope", `${op.method} ${op.path}`);
  }
});

test("every route with a revoked key, or none, is 401 invalid_api_key", async () => {
  const { key, token } = await createKey(h.db, { name: "revoked", profileId: owner.profileId, scopes: [...SCOPES] });
  await revokeKey(h.db, key.id);
  for (const op of ops) {
    const path = ownedPath(op) ?? op.path.replace("{platform}", "bluesky");
    expectError(await call(op, path, token), 401, "invalid_api_key", `${op.method} ${op.path}`);
    const anonymous = await h.request(op.method, path, { body: bodyOf(op) });
    expectError(anonymous, 401, "invalid_api_key", `${op.method} ${op.path} (no key)`);
  }
});
