import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count } from "drizzle-orm";
import { createHarness, type Harness } from "../support/harness.ts";
import { drafts } from "../../src/db/schema.ts";

// Errors a new user meets in the first hour: ids that cannot exist, bodies sent as forms, enum values,
// methods a path does not have. Each answer is the envelope with the right status and changes nothing.
let h: Harness;
let token: string;
beforeAll(async () => {
  h = await createHarness();
  ({ token } = await h.profile());
});
afterAll(() => h.close());

const expectEnvelope = (body: any, code: string) => {
  expect(Object.keys(body)).toEqual(["error"]);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toBeString();
  expect(body.error.hint).toBeString();
};
const draftCount = async () => (await h.db.db.select({ n: count() }).from(drafts))[0].n;

// GET /v1/media/{id} keeps its 400 invalid_media_id: the spec names that answer for a malformed media id.
describe("a malformed id in a path is 404 not_found, like an unknown one", () => {
  const routes: [string, string][] = [
    ["DELETE", "/v1/accounts/abc"],
    ["GET", "/v1/posts/123"],
    ["PATCH", "/v1/posts/123"],
    ["DELETE", "/v1/posts/123"],
    ["POST", "/v1/posts/123/cancel"],
    ["POST", "/v1/posts/123/retry"],
    ["POST", "/v1/posts/123/publish"],
    ["GET", "/v1/posts/123/analytics"],
    ["GET", "/v1/posts/00000000-0000-4000-8000-000000000000/targets/nope"],
    ["POST", "/v1/posts/nope/targets/00000000-0000-4000-8000-000000000000/retry"],
    ["GET", "/v1/drafts/x"],
    ["PATCH", "/v1/drafts/x"],
    ["DELETE", "/v1/drafts/x"],
    ["GET", "/v1/workflows/x"],
    ["PATCH", "/v1/workflows/x"],
    ["DELETE", "/v1/workflows/x"],
    ["POST", "/v1/workflows/x/check"],
    ["GET", "/v1/workflows/x/items"],
  ];
  for (const [method, path] of routes) {
    test(`${method} ${path}`, async () => {
      const body = method === "PATCH" ? { expected_updated_at: new Date().toISOString() } : undefined;
      const res = await h.request(method, path, { token, body });
      expect(res.status).toBe(404);
      expectEnvelope(res.body, "not_found");
    });
  }

  test("the message names the record and the id", async () => {
    const res = await h.request("GET", "/v1/posts/123", { token });
    expect(res.body.error.message).toBe("Post '123' not found.");
  });

  test("a malformed id still needs a key: 401 before 404", async () => {
    expect((await h.request("GET", "/v1/posts/123")).status).toBe(401);
  });
});

describe("a JSON route called with another Content-Type is 415 unsupported_media_type", () => {
  test("a form body (what curl -d sends) changes nothing and the hint says what to send", async () => {
    const before = await draftCount();
    const res = await h.request("POST", "/v1/drafts", {
      token,
      raw: '{"content":"hello"}',
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expectEnvelope(res.body, "unsupported_media_type");
    expect(res.body.error.message).toContain("application/x-www-form-urlencoded");
    expect(res.body.error.hint).toContain("Content-Type: application/json");
    expect(await draftCount()).toBe(before);
  });

  test("text/plain and multipart are refused the same way on create and update", async () => {
    for (const [method, path] of [
      ["POST", "/v1/posts"],
      ["PATCH", "/v1/drafts/00000000-0000-4000-8000-000000000000"],
    ]) {
      const res = await h.request(method, path, { token, raw: "content=x", headers: { "content-type": "text/plain" } });
      expect(res.status).toBe(415);
      expectEnvelope(res.body, "unsupported_media_type");
    }
  });

  test("JSON with a charset, and a body-less action with a form type, still work", async () => {
    const res = await h.request("POST", "/v1/drafts", {
      token,
      raw: '{"content":"hi"}',
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expect(res.status).toBe(201);
    const del = await h.request("DELETE", `/v1/drafts/${res.body.data.id}`, {
      token,
      headers: { "content-type": "application/x-www-form-urlencoded", "content-length": "0" },
    });
    expect(del.status).toBe(200);
  });
});

describe("validation messages say the field, what was wrong and what is allowed", () => {
  const cases: [string, string, unknown, RegExp][] = [
    [
      "an enum value lists the allowed values",
      "/v1/drafts?status=nope",
      undefined,
      /^query\.status must be one of inbox, ready, archived$/,
    ],
    [
      "an enum in the body",
      "POST /v1/drafts",
      { media: [{ type: "gif", url: "https://x.example/a.gif" }] },
      /^body\.media\.0\.type must be one of image, video$/,
    ],
    ["a required field", "PATCH", { content: "x" }, /^body\.expected_updated_at is required/],
    ["an unknown property", "POST /v1/drafts", { colour: "red" }, /^body\.colour is not an allowed property$/],
    [
      "a format",
      "POST /v1/drafts",
      { selected_account_ids: ["abc"] },
      /^body\.selected_account_ids\.0 must be a UUID$/,
    ],
    [
      "a minimum",
      "POST /v1/drafts",
      { media: [{ type: "image", url: "https://x.example/a.png", width: -1 }] },
      /^body\.media\.0\.width must be at least 0 \(got -1\)$/,
    ],
    ["a maximum in the query", "/v1/drafts?limit=500", undefined, /^query\.limit must be from 1 to 100 \(got 500\)$/],
    ["a type", "POST /v1/drafts", { content: 5 }, /^body\.content must be a string$/],
  ];
  for (const [name, where, body, want] of cases) {
    test(name, async () => {
      let res;
      if (where === "PATCH") {
        const draft = (await h.request("POST", "/v1/drafts", { token, body: {} })).body.data;
        res = await h.request("PATCH", `/v1/drafts/${draft.id}`, { token, body });
      } else if (where.startsWith("POST ")) res = await h.request("POST", where.slice(5), { token, body });
      else res = await h.request("GET", where, { token });
      expect(res.status).toBe(400);
      expectEnvelope(res.body, "validation_error");
      expect(res.body.error.message).toMatch(want);
      expect(res.body.error.message).not.toContain("Expected union value");
    });
  }
});

describe("a method the path does not have is 405 with an Allow header", () => {
  test("PUT /v1/posts lists GET and POST", async () => {
    const res = await h.request("PUT", "/v1/posts", { token, body: {} });
    expect(res.status).toBe(405);
    expectEnvelope(res.body, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("GET, POST");
  });

  test("paths with ids and actions too; a path no route has stays 404", async () => {
    const id = "00000000-0000-4000-8000-000000000000";
    const put = await h.request("PUT", `/v1/drafts/${id}`, { token, body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("DELETE, GET, PATCH");
    const get = await h.request("GET", `/v1/posts/${id}/cancel`, { token });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const none = await h.request("GET", "/v1/nothing-here", { token });
    expect(none.status).toBe(404);
    expect(none.headers.get("allow")).toBeNull();
  });
});
