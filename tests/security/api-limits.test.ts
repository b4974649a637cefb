/**
 * Security issue 26, item 7 (API side): invalid keys and /mcp are rate limited per client address,
 * POST /v1/analytics/refresh needs a write scope, and creating profiles from the dashboard is a per-user
 * right an operator grants.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { adminCommands } from "../../src/cli/commands.ts";
import { serveApp } from "../../src/http/serve.ts";
import { MAX_AUTH_FAILURES_PER_MINUTE } from "../../src/http/rate-limit.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const PASSWORD = "correct horse battery staple";

let h: Harness;
let server: ReturnType<typeof serveApp>;
let base = "";

beforeAll(async () => {
  h = await createHarness({ trustedProxies: ["127.0.0.1"], rateLimitPerMinute: 30 });
  server = serveApp(h.app, { hostname: "127.0.0.1", port: 0, config: h.ctx.config, log: h.ctx.log });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.stop(true);
  await h.close();
});

let nextAddress = 1;
const freshAddress = () => `203.0.113.${nextAddress++}`;

const call = (path: string, opts: { key?: string; from: string; method?: string; body?: unknown }) =>
  fetch(`${base}${path}`, {
    method: opts.method ?? "GET",
    headers: {
      "x-forwarded-for": opts.from,
      ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
      ...(opts.body ? { "content-type": "application/json", accept: "application/json, text/event-stream" } : {}),
    },
    body: opts.body ? JSON.stringify(opts.body) : undefined,
  });

const mcpList = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };

describe("invalid keys are limited per client address", () => {
  test(`after ${MAX_AUTH_FAILURES_PER_MINUTE} invalid keys in a minute, that address gets 429 with Retry-After`, async () => {
    const from = freshAddress();
    for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE; i++)
      expect((await call("/v1/posts", { key: `crier_wrong_${i}`, from })).status).toBe(401);
    const limited = await call("/v1/posts", { key: "crier_wrong_last", from });
    expect(limited.status).toBe(429);
    const body = (await limited.json()) as any;
    expect(body.error.code).toBe("rate_limited");
    expect(body.error.hint).toBeString();
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // /mcp shares the count: the same address is refused there too.
    expect((await call("/mcp", { key: "crier_wrong", from, method: "POST", body: mcpList })).status).toBe(429);
    // Another address is not held back.
    expect((await call("/v1/posts", { key: "crier_wrong", from: freshAddress() })).status).toBe(401);
    // A valid key from another address counts only against its own limit.
    const { token } = await h.profile();
    expect((await call("/v1/posts", { key: token, from: freshAddress() })).status).toBe(200);
  });

  test("a burst of parallel invalid keys is held to the limit too", async () => {
    const from = freshAddress();
    const responses = await Promise.all(
      Array.from({ length: MAX_AUTH_FAILURES_PER_MINUTE + 40 }, (_, i) =>
        call("/v1/accounts", { key: `bad_${i}`, from }),
      ),
    );
    expect(responses.filter((r) => r.status === 401)).toHaveLength(MAX_AUTH_FAILURES_PER_MINUTE);
    expect(responses.filter((r) => r.status === 429)).toHaveLength(40);
  });

  test("/mcp: invalid keys count per address, and a valid key is held to RATE_LIMIT_PER_MINUTE", async () => {
    const from = freshAddress();
    for (let i = 0; i < MAX_AUTH_FAILURES_PER_MINUTE; i++)
      expect((await call("/mcp", { key: `nope_${i}`, from, method: "POST", body: mcpList })).status).toBe(401);
    expect((await call("/mcp", { from, method: "POST", body: mcpList })).status).toBe(429);

    const { token } = await h.profile();
    const answers = [];
    for (let i = 0; i < 31; i++)
      answers.push((await call("/mcp", { key: token, from: freshAddress(), method: "POST", body: mcpList })).status);
    expect(answers.slice(0, 30).every((s) => s === 200)).toBe(true);
    expect(answers[30]).toBe(429);
  });
});

describe("POST /v1/analytics/refresh", () => {
  test("needs posts:write: a read-only key is refused with missing_scope", async () => {
    const reader = await h.profile({ scopes: ["posts:read"] });
    const refused = await h.request("POST", "/v1/analytics/refresh", { token: reader.token });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("missing_scope");
    const writer = await h.profile({ scopes: ["posts:write"] });
    expect((await h.request("POST", "/v1/analytics/refresh", { token: writer.token })).status).toBe(202);
    const spec = (await h.request("GET", "/openapi.json")).body;
    expect(spec.paths["/v1/analytics/refresh"].post["x-scope"]).toBe("posts:write");
  });
});

describe("creating profiles from the dashboard", () => {
  async function session(email: string) {
    const { profileId } = await h.profile();
    const link = (await adminCommands["users.create"](h.ctx, { email, profileId })).link;
    const res = await h.request("POST", "/auth/links/redeem", {
      body: { token: link.split("#")[1], password: PASSWORD },
    });
    expect(res.status).toBe(200);
    const cookie = /crier_session=[^;]+/.exec(res.headers.getSetCookie().join("\n"))![0];
    return { cookie, csrf: res.body.data.csrf_token as string, body: res.body };
  }
  const addProfile = (s: { cookie: string; csrf: string }) =>
    h.request("POST", "/auth/profiles", {
      headers: { cookie: s.cookie, "x-csrf-token": s.csrf },
      body: { name: "Extra" },
    });

  test("is refused by default with 403 and a clear message; the session says so", async () => {
    const s = await session("plain@example.com");
    expect(s.body.data.user.can_create_profiles).toBe(false);
    const before = (await adminCommands["profiles.list"](h.ctx)).length;
    const refused = await addProfile(s);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("profile_creation_forbidden");
    expect(refused.body.error.hint).toContain("--can-create-profiles");
    expect((await adminCommands["profiles.list"](h.ctx)).length).toBe(before);
  });

  test("an operator grants it (and takes it back) per user", async () => {
    const s = await session("trusted@example.com");
    const granted = await adminCommands["users.set"](h.ctx, { email: "trusted@example.com", canCreateProfiles: true });
    expect(granted.can_create_profiles).toBe(true);
    expect(
      (await adminCommands["users.list"](h.ctx)).find((u) => u.email === "trusted@example.com")?.can_create_profiles,
    ).toBe(true);
    const made = await addProfile(s);
    expect(made.status).toBe(201);
    expect(made.body.data.profile.name).toBe("Extra");
    expect(made.body.data.user.can_create_profiles).toBe(true);

    await adminCommands["users.set"](h.ctx, { email: "trusted@example.com", canCreateProfiles: false });
    expect((await addProfile(s)).status).toBe(403);
  });

  test("the preferences page offers the form only to users with the right", async () => {
    const source = await Bun.file(new URL("../../src/web/pages/preferences.tsx", import.meta.url)).text();
    expect(source).toContain("can_create_profiles");
  });
});
