import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness.ts";
import { createApp } from "../../src/app.ts";
import { createLogger } from "../../src/log.ts";

let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness({ maxBodyBytes: 4096 });
  ({ token } = await h.profile());
});
afterAll(() => h.close());

const expectEnvelope = (body: any, code: string) => {
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(typeof body.error.hint).toBe("string");
};

test("malformed JSON is 400 invalid_json", async () => {
  const res = await h.request("POST", "/v1/drafts", {
    token,
    raw: '{"content": "x",',
    headers: { "content-type": "application/json" },
  });
  expect(res.status).toBe(400);
  expectEnvelope(res.body, "invalid_json");
});

test("a schema failure is 400 validation_error naming the field path", async () => {
  const res = await h.request("POST", "/v1/drafts", { token, body: { media: [{ type: "gif", url: "x" }] } });
  expect(res.status).toBe(400);
  expectEnvelope(res.body, "validation_error");
  expect(res.body.error.message).toContain("body.media.0.type");
});

test("an unknown route is 404 not_found in the envelope", async () => {
  const res = await h.request("GET", "/v1/nope", { token });
  expect(res.status).toBe(404);
  expectEnvelope(res.body, "not_found");
});

test("a body over the limit is 413 payload_too_large, declared or streamed", async () => {
  const big = JSON.stringify({ content: "x".repeat(10_000) });
  const declared = await h.request("POST", "/v1/drafts", {
    token,
    raw: big,
    headers: { "content-type": "application/json" },
  });
  expect(declared.status).toBe(413);
  expectEnvelope(declared.body, "payload_too_large");
  const stream = new ReadableStream({
    start(c) {
      for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(i === 0 ? '{"content":"' : "x".repeat(1000)));
      c.enqueue(new TextEncoder().encode('"}'));
      c.close();
    },
  });
  const res = await h.app.handle(
    new Request("http://localhost/v1/drafts", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    }),
  );
  expect(res.status).toBe(413);
  expectEnvelope(await res.json(), "payload_too_large");
});

test("an unexpected exception is 500 internal_error with a request id and no internals", async () => {
  const logged: string[] = [];
  const ctx = { ...h.ctx, log: createLogger("error", {}, (line) => logged.push(line)) };
  const app = createApp(ctx).get("/boom", () => {
    throw new Error('relation "secret_table" does not exist at SELECT * FROM secret_table');
  });
  const res = await app.handle(new Request("http://localhost/boom", { headers: { "x-request-id": "req-123" } }));
  expect(res.status).toBe(500);
  const body = await res.json();
  expectEnvelope(body, "internal_error");
  expect(JSON.stringify(body)).not.toContain("secret_table");
  expect(body.error.hint).toContain("req-123");
  expect(logged.some((l) => l.includes("secret_table") && l.includes("req-123"))).toBe(true);
});

test("request logs are JSON lines with method, path, status, duration, profile and request id, never the token", async () => {
  const lines: string[] = [];
  const ctx = { ...h.ctx, log: createLogger("info", {}, (line) => lines.push(line)) };
  const app = createApp(ctx);
  const res = await app.handle(
    new Request("http://localhost/v1/accounts", {
      headers: { authorization: `Bearer ${token}`, "x-request-id": "log-1" },
    }),
  );
  expect(res.status).toBe(200);
  await Bun.sleep(5); // afterResponse runs once the response is handed over
  const entry = lines.map((l) => JSON.parse(l)).find((e) => e.msg === "request" && e.request_id === "log-1");
  expect(entry).toMatchObject({ method: "GET", path: "/v1/accounts", status: 200, profile_id: expect.any(String) });
  expect(typeof entry.duration_ms).toBe("number");
  expect(lines.join("\n")).not.toContain(token);
});

test("every response carries a request id", async () => {
  const res = await h.request("GET", "/healthz");
  expect(res.headers.get("x-request-id")).toBeTruthy();
});
