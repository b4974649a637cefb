import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createHarness, type Harness } from "../support/harness.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { createKey, revokeKey } from "../../src/modules/keys/service.ts";

let h: Harness;
let operations: { method: string; path: string; scope: string }[];

beforeAll(async () => {
  h = await createHarness();
  const spec = (await h.request("GET", "/openapi.json")).body;
  operations = [];
  for (const [path, item] of Object.entries<any>(spec.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (op["x-scope"]) {
        operations.push({
          method: method.toUpperCase(),
          path: path.replace(/\{[^}]+\}/g, "00000000-0000-4000-8000-000000000000"),
          scope: op["x-scope"],
        });
      }
    }
  }
});
afterAll(() => h.close());

const send = (op: { method: string; path: string }, headers: Record<string, string>) =>
  h.request(op.method, op.path, { headers, body: ["POST", "PATCH", "PUT"].includes(op.method) ? {} : undefined });

test("every /v1 route declares a scope in the OpenAPI description", async () => {
  expect(operations.length).toBeGreaterThanOrEqual(7);
  const spec = (await h.request("GET", "/openapi.json")).body;
  const v1 = Object.entries<any>(spec.paths).filter(([p]) => p.startsWith("/v1/"));
  expect(v1.length).toBeGreaterThan(0);
  for (const [path, item] of v1) {
    for (const [method, op] of Object.entries<any>(item)) {
      // The OAuth callback is opened by a browser coming back from the provider: signed state, no key.
      if (path.includes("/callback/")) continue;
      expect({ route: `${method} ${path}`, scope: op["x-scope"] }).toEqual({
        route: `${method} ${path}`,
        scope: expect.any(String),
      });
    }
  }
});

describe("401 invalid_api_key on every route", () => {
  const cases: [string, () => Promise<Record<string, string>>][] = [
    ["missing key", async () => ({})],
    ["malformed header", async () => ({ authorization: "Token abc" })],
    ["empty bearer", async () => ({ authorization: "Bearer " })],
    ["unknown key", async () => ({ authorization: `Bearer crier_live_${"x".repeat(43)}` })],
    [
      "revoked key",
      async () => {
        const { token, keyId } = await h.profile();
        await revokeKey(h.db, keyId);
        return { authorization: `Bearer ${token}` };
      },
    ],
    [
      "expired key",
      async () => {
        const { profileId } = await h.profile();
        const { token } = await createKey(h.db, {
          name: "short",
          profileId,
          scopes: [...SCOPES],
          expiresAt: new Date(h.clock.now().getTime() + 60_000),
        });
        h.clock.advance(120_000);
        return { authorization: `Bearer ${token}` };
      },
    ],
  ];
  for (const [name, headersFor] of cases) {
    test(name, async () => {
      const headers = await headersFor();
      for (const op of operations) {
        const res = await send(op, headers);
        expect({ op: `${op.method} ${op.path}`, status: res.status, code: res.body?.error?.code }).toEqual({
          op: `${op.method} ${op.path}`,
          status: 401,
          code: "invalid_api_key",
        });
        expect(res.body.error.message.length).toBeGreaterThan(0);
        expect(res.body.error.hint.length).toBeGreaterThan(0);
      }
    });
  }
});

test("a key without the route's scope gets 403 missing_scope naming it, on every route", async () => {
  for (const op of operations) {
    const { token } = await h.profile({ scopes: SCOPES.filter((s) => s !== op.scope) });
    const res = await send(op, { authorization: `Bearer ${token}` });
    expect({ op: `${op.method} ${op.path}`, status: res.status, code: res.body?.error?.code }).toEqual({
      op: `${op.method} ${op.path}`,
      status: 403,
      code: "missing_scope",
    });
    expect(res.body.error.message).toContain(op.scope);
  }
});

test("a key with only the route's scope passes authentication", async () => {
  for (const op of operations) {
    // Sandbox routes answer only sandbox profiles (403 not_a_sandbox otherwise): give them one.
    const sandbox = op.path.startsWith("/v1/sandbox/");
    const { token } = await h.profile({ scopes: [op.scope as never], sandbox });
    const res = await send(op, { authorization: `Bearer ${token}` });
    expect([401, 403]).not.toContain(res.status);
  }
});

test("revoking a key takes effect on the next request", async () => {
  const { token, keyId } = await h.profile();
  expect((await h.request("GET", "/v1/accounts", { token })).status).toBe(200);
  await revokeKey(h.db, keyId);
  expect((await h.request("GET", "/v1/accounts", { token })).status).toBe(401);
});

/** Polls until the request answers `status`, for at most a second (the cross-copy promise). */
async function statusWithinASecond(token: string, status: number) {
  const t0 = performance.now();
  let got = 0;
  while (performance.now() - t0 < 1000) {
    got = (await h.request("GET", "/v1/accounts", { token })).status;
    if (got === status) break;
    await Bun.sleep(20);
  }
  return got;
}

test("a key revoked or expired by a direct database update is refused within a second", async () => {
  // Another copy of Crier (or an operator in psql) may change the key: the api_keys trigger tells every
  // copy to forget its cached lookup.
  const revoked = await h.profile();
  expect((await h.request("GET", "/v1/accounts", { token: revoked.token })).status).toBe(200);
  expect((await h.request("GET", "/v1/accounts", { token: revoked.token })).status).toBe(200);
  await h.db.rows(sql`update api_keys set revoked_at = now() where id = ${revoked.keyId}`);
  expect(await statusWithinASecond(revoked.token, 401)).toBe(401);

  const expired = await h.profile();
  expect((await h.request("GET", "/v1/accounts", { token: expired.token })).status).toBe(200);
  await h.db.rows(
    sql`update api_keys set expires_at = ${new Date(h.clock.now().getTime() - 1000).toISOString()}::timestamptz where id = ${expired.keyId}`,
  );
  expect(await statusWithinASecond(expired.token, 401)).toBe(401);
});

test("a key revoked through another copy's connection is refused here within a second", async () => {
  if (h.db.kind !== "postgres") return; // PGlite is one process: there is no other copy.
  const { openPostgres } = await import("../../src/db/client.ts");
  const other = openPostgres(h.db.url!, 1);
  try {
    const { token, keyId } = await h.profile();
    expect((await h.request("GET", "/v1/accounts", { token })).status).toBe(200);
    await revokeKey(other, keyId);
    expect(await statusWithinASecond(token, 401)).toBe(401);
  } finally {
    await other.close();
  }
});

test("a key whose expiry passes while cached is refused at once", async () => {
  const { profileId } = await h.profile();
  const { token } = await createKey(h.db, {
    name: "short",
    profileId,
    scopes: [...SCOPES],
    expiresAt: new Date(h.clock.now().getTime() + 60_000),
  });
  expect((await h.request("GET", "/v1/accounts", { token })).status).toBe(200);
  h.clock.advance(61_000);
  expect((await h.request("GET", "/v1/accounts", { token })).status).toBe(401);
});
