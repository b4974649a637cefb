import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ rateLimitPerMinute: 3 });
});
afterAll(() => h.close());

test("over RATE_LIMIT_PER_MINUTE a key gets 429 rate_limited with Retry-After; other keys are not affected", async () => {
  const a = await h.profile();
  const b = await h.profile();
  for (let i = 0; i < 3; i++) expect((await h.request("GET", "/v1/accounts", { token: a.token })).status).toBe(200);
  const limited = await h.request("GET", "/v1/accounts", { token: a.token });
  expect(limited.status).toBe(429);
  expect(limited.body.error.code).toBe("rate_limited");
  expect(limited.body.error.hint).toContain("Retry-After");
  expect(Number(limited.headers.get("retry-after"))).toBe(20); // 3 a minute: one every 20 s
  expect((await h.request("GET", "/v1/accounts", { token: b.token })).status).toBe(200);
});

test("a limited request changes nothing, and the bucket refills with time", async () => {
  const a = await h.profile();
  for (let i = 0; i < 3; i++)
    expect((await h.request("POST", "/v1/drafts", { token: a.token, body: { content: `d${i}` } })).status).toBe(201);
  const limited = await h.request("POST", "/v1/drafts", { token: a.token, body: { content: "one too many" } });
  expect(limited.status).toBe(429);
  h.clock.advance(20_000);
  expect(
    (await h.request("GET", "/v1/drafts", { token: a.token })).body.data
      .map((d: { content: string }) => d.content)
      .sort(),
  ).toEqual(["d0", "d1", "d2"]);
  expect((await h.request("GET", "/v1/drafts", { token: a.token })).status).toBe(429);
});

test("unauthenticated requests are refused before counting (401, not 429)", async () => {
  for (let i = 0; i < 5; i++) expect((await h.request("GET", "/v1/accounts")).status).toBe(401);
});

test("0 turns the limit off", async () => {
  const open = await createHarness({ rateLimitPerMinute: 0 });
  try {
    const k = await open.profile();
    for (let i = 0; i < 20; i++)
      expect((await open.request("GET", "/v1/accounts", { token: k.token })).status).toBe(200);
  } finally {
    await open.close();
  }
});

test("every answer to a key carries RateLimit-Policy and RateLimit (IETF httpapi draft), so clients can pace", async () => {
  const a = await h.profile();
  const first = await h.request("GET", "/v1/accounts", { token: a.token });
  expect(first.headers.get("ratelimit-policy")).toBe('"default";q=3;w=60');
  expect(first.headers.get("ratelimit")).toBe('"default";r=2;t=20');
  // An error answer after authentication carries them too.
  const bad = await h.request("POST", "/v1/drafts", { token: a.token, body: { content: 5 } });
  expect(bad.status).toBe(400);
  expect(bad.headers.get("ratelimit")).toBe('"default";r=1;t=40');
  await h.request("GET", "/v1/accounts", { token: a.token });
  const limited = await h.request("GET", "/v1/accounts", { token: a.token });
  expect(limited.status).toBe(429);
  expect(limited.headers.get("ratelimit")).toMatch(/^"default";r=0;t=60$/);
  expect(limited.headers.get("ratelimit-policy")).toBe('"default";q=3;w=60');
  h.clock.advance(20_000);
  expect((await h.request("GET", "/v1/accounts", { token: a.token })).headers.get("ratelimit")).toBe(
    '"default";r=0;t=60',
  );
});
