import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server as NetServer } from "node:net";
import { parseRetryAfter } from "../../src/platform/http.ts";
import { createProviderHttp } from "../../src/platform/host/provider-http.ts";
import { createLogger } from "../../src/log.ts";
import { MediaError } from "../../src/platform/sdk.ts";

// A small stand-in platform on loopback: each path answers the way a real API does in that case.
let server: ReturnType<typeof Bun.serve>;
let base: string;
const seen: { method: string; path: string; query: string; type: string | null; body: string; auth: string | null }[] =
  [];

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = await req.text();
      seen.push({
        method: req.method,
        path: url.pathname,
        query: url.search,
        type: req.headers.get("content-type"),
        body,
        auth: req.headers.get("authorization"),
      });
      switch (url.pathname.replace(/^\/api/, "")) {
        case "/ok":
          return Response.json({ id: "p1" }, { status: 201 });
        case "/text":
          return new Response("plain words");
        case "/limited":
          return Response.json(
            { error: "RateLimitExceeded", message: "slow down" },
            { status: 429, headers: { "retry-after": "7" } },
          );
        case "/limited-date":
          return new Response("busy", {
            status: 429,
            headers: { "retry-after": new Date(Date.parse("2030-01-01T00:00:30Z")).toUTCString() },
          });
        case "/down":
          return Response.json({ message: "upstream exploded" }, { status: 503 });
        case "/gateway":
          return new Response("gateway timeout", { status: 504 });
        case "/expired":
          return Response.json({ error: "InvalidToken", message: "Token has expired" }, { status: 401 });
        case "/bad":
          return Response.json({ error: { code: 100, message: "caption is too long" } }, { status: 400 });
        case "/expired-400":
          return Response.json({ error: "ExpiredToken", message: "Token has expired" }, { status: 400 });
        case "/slow":
          await Bun.sleep(2_000);
          return Response.json({ late: true });
        default:
          return new Response("no", { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}/api`;
});

afterAll(() => server.stop(true));

const log = createLogger("silent");
const http = () =>
  createProviderHttp({ baseUrl: base, timeoutMs: 5_000, log, now: () => new Date("2030-01-01T00:00:00Z") });

describe("request building", () => {
  test("JSON body, query parameters and headers reach the platform", async () => {
    seen.length = 0;
    const res = await http().request("POST", "/ok", {
      json: { text: "héllo" },
      query: { a: 1, b: "x y", skip: undefined },
      headers: { authorization: "Bearer t" },
    });
    expect(res).toMatchObject({ ok: true, status: 201, body: { id: "p1" } });
    expect(seen[0]).toMatchObject({
      method: "POST",
      path: "/api/ok",
      query: "?a=1&b=x+y",
      type: "application/json",
      body: '{"text":"héllo"}',
      auth: "Bearer t",
    });
  });

  test("form bodies are url-encoded", async () => {
    seen.length = 0;
    await http().request("POST", "ok", { form: { grant_type: "authorization_code", code: "a&b" } });
    expect(seen[0].type).toBe("application/x-www-form-urlencoded");
    expect(seen[0].body).toBe("grant_type=authorization_code&code=a%26b");
  });

  test("multipart bodies keep their boundary", async () => {
    seen.length = 0;
    const fd = new FormData();
    fd.set("chat_id", "@c");
    fd.set("photo", new Blob([new Uint8Array([1, 2, 3])], { type: "image/png" }), "a.png");
    await http().request("POST", "/ok", { multipart: fd });
    expect(seen[0].type).toStartWith("multipart/form-data; boundary=");
    expect(seen[0].body).toContain('name="chat_id"');
  });

  test("an absolute URL is used as given (upload URLs handed out by the platform)", async () => {
    seen.length = 0;
    const res = await http().request("GET", `http://127.0.0.1:${server.port}/ok`);
    expect(res.ok).toBe(true);
    expect(seen[0].path).toBe("/ok");
  });

  test("a non-JSON body comes back as text", async () => {
    const res = await http().request("GET", "/text");
    expect(res).toMatchObject({ ok: true, body: "plain words" });
  });
});

describe("classification", () => {
  test("429 is retryable with Retry-After in seconds", async () => {
    const res = await http().request("POST", "/limited", { creates: true });
    expect(res.ok).toBe(false);
    if (!res.ok)
      expect(res.outcome).toEqual({ kind: "retryable", reason: "rate limited: slow down", retryAfterMs: 7_000 });
  });

  test("429 with Retry-After as an HTTP date", async () => {
    const res = await http().request("GET", "/limited-date");
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome).toMatchObject({ kind: "retryable", retryAfterMs: 30_000 });
  });

  test("5xx is retryable on a call that creates nothing, and on a creating call the platform makes idempotent", async () => {
    const res = await http().request("POST", "/down");
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome.kind).toBe("retryable");
    expect(res.outcome.reason).toContain("upstream exploded");
    const keyed = await http().request("POST", "/down", { creates: true, idempotent: true });
    if (keyed.ok) throw new Error("expected failure");
    expect(keyed.outcome.kind).toBe("retryable");
  });

  test("5xx on a creating call is unknown: the platform may have made the post before failing", async () => {
    const res = await http().request("POST", "/down", { creates: true });
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome.kind).toBe("unknown");
    expect(res.outcome.reason).toContain("upstream exploded");
  });

  test("504 on the creating call is unknown: the platform may have done it", async () => {
    const res = await http().request("POST", "/gateway", { creates: true });
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome.kind).toBe("unknown");
    const again = await http().request("POST", "/gateway");
    if (again.ok) throw new Error("expected failure");
    expect(again.outcome.kind).toBe("retryable");
  });

  test("401 is auth_expired", async () => {
    const res = await http().request("GET", "/expired");
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome).toEqual({ kind: "auth_expired", reason: "Token has expired" });
  });

  test("other 4xx are permanent with the platform's reason and code", async () => {
    const res = await http().request("POST", "/bad", { creates: true });
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome).toEqual({ kind: "permanent", reason: "caption is too long", code: "100" });
    expect(res.status).toBe(400);
  });

  test("a plugin classifier can recognise its platform's expired-token answer", async () => {
    const h = createProviderHttp({
      baseUrl: base,
      timeoutMs: 5_000,
      log,
      classify: (r) =>
        r.status === 400 && (r.body as { error?: string })?.error === "ExpiredToken"
          ? { kind: "auth_expired", reason: "expired" }
          : undefined,
    });
    const res = await h.request("GET", "/expired-400");
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome.kind).toBe("auth_expired");
    const other = await h.request("POST", "/bad");
    if (other.ok) throw new Error("expected failure");
    expect(other.outcome.kind).toBe("permanent");
  });

  test("a timeout on the creating call is unknown, elsewhere retryable", async () => {
    const created = await http().request("POST", "/slow", { creates: true, timeoutMs: 100 });
    if (created.ok) throw new Error("expected failure");
    expect(created.outcome.kind).toBe("unknown");
    const read = await http().request("GET", "/slow", { timeoutMs: 100 });
    if (read.ok) throw new Error("expected failure");
    expect(read.outcome.kind).toBe("retryable");
  });

  test("connection refused is retryable even on the creating call", async () => {
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const h = createProviderHttp({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000, log });
    const res = await h.request("POST", "/x", { creates: true, json: {} });
    if (res.ok) throw new Error("expected failure");
    expect(res.outcome.kind).toBe("retryable");
  });

  describe("a connection dropped after the request was sent", () => {
    let raw: NetServer;
    let port: number;
    beforeAll(async () => {
      raw = createServer((socket) => socket.on("data", () => socket.destroy())).listen(0, "127.0.0.1");
      await new Promise((r) => raw.once("listening", r));
      port = (raw.address() as { port: number }).port;
    });
    afterAll(() => raw.close());

    test("is unknown on the creating call and retryable otherwise", async () => {
      const h = createProviderHttp({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 2_000, log });
      const created = await h.request("POST", "/x", { creates: true, json: { a: 1 } });
      if (created.ok) throw new Error("expected failure");
      expect(created.outcome.kind).toBe("unknown");
      const upload = await h.request("POST", "/x", { json: { a: 1 } });
      if (upload.ok) throw new Error("expected failure");
      expect(upload.outcome.kind).toBe("retryable");
    });
  });
});

test("a media body that fails while uploading is the media's failure, not a lost connection", async () => {
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(new Uint8Array(10));
      c.error(new MediaError("media is larger than 10 bytes", false));
    },
  });
  const res = await http().request("POST", "/ok", { body, creates: true });
  if (res.ok) throw new Error("expected failure");
  expect(res.outcome).toEqual({ kind: "permanent", reason: "media is larger than 10 bytes", code: "media_refused" });
});

test("parseRetryAfter reads seconds and dates and ignores garbage", () => {
  const now = new Date("2030-01-01T00:00:00Z");
  expect(parseRetryAfter("3", now)).toBe(3_000);
  expect(parseRetryAfter("Tue, 01 Jan 2030 00:01:00 GMT", now)).toBe(60_000);
  expect(parseRetryAfter("soon", now)).toBeUndefined();
  expect(parseRetryAfter(null, now)).toBeUndefined();
});
