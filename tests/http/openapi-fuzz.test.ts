/**
 * A seeded fuzz over every operation of /openapi.json: requests built from each operation's own
 * schemas, with hostile values mixed in (wrong types, NUL, impossible dates, extra fields, foreign and
 * random ids). Whatever comes in: no 5xx, every error in the envelope, no answer slower than 2 s.
 * Fixed seed and bounded runs, so a failure replays and the suite stays well under a minute.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { createHarness, type Harness } from "../support/harness.ts";
import { upsertConnectedAccount } from "../../src/modules/accounts/service.ts";
import { arbitrary, operations, queryArbitrary, type Operation } from "../support/openapi-schema.ts";

const SEED = 20_261_010;
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 60);
const SLOWEST_MS = 2000;

let h: Harness;
let spec: any;
let token: string;
/** Real ids of the caller's records, so fuzzed requests reach past the 404 into the handlers. */
const real: string[] = [];

beforeAll(async () => {
  // No rate limit: the fuzz sends thousands of requests with one key.
  h = await createHarness({ rateLimitPerMinute: 0 });
  // Operations that call the platform (GET /v1/accounts/{id}/check) reach a closed local port, never the internet.
  h.ctx.config.env = { ...h.ctx.config.env, CRIER_BLUESKY_API_URL: "http://127.0.0.1:1" };
  let profileId: string;
  ({ token, profileId } = await h.profile());
  for (const remoteId of ["did:plc:fuzz-a", "did:plc:fuzz-b"]) {
    const row = await upsertConnectedAccount(h.ctx, {
      profileId,
      platform: "bluesky",
      remoteId,
      username: `${remoteId}.test`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId },
    });
    real.push(row.id);
  }
  const post = await h.request("POST", "/v1/posts", {
    token,
    body: { content: "fuzz", publish_at: "2099-01-01T00:00:00Z", targets: [{ account_id: real[0] }] },
  });
  real.push(post.body.data.id, post.body.data.targets[0].target_post_id);
  const draft = await h.request("POST", "/v1/drafts", { token, body: { content: "fuzz" } });
  real.push(draft.body.data.id);
  spec = (await h.request("GET", "/openapi.json")).body;
});
afterAll(() => h.close());

const pathValue = fc.oneof(
  fc.constant(null).map(() => real[0]),
  fc.constantFrom(...Array.from({ length: 5 }, (_, i) => i)).map((i) => real[i % real.length]),
  fc.uuid(),
  fc.constantFrom("bluesky", "telegram", "__proto__", "constructor", "abc", "%00", "med_x", "123"),
  fc.string({ maxLength: 20 }).map((s) => encodeURIComponent(s) || "x"),
);

function requestArbitrary(op: Operation) {
  return fc.record({
    params: fc.tuple(...op.pathParams.map(() => pathValue)),
    query: queryArbitrary(spec, op),
    body: op.body ? arbitrary(spec, op.body) : fc.constant(undefined),
    auth: fc.constantFrom("key", "key", "key", "none", "bad"),
    rawBody: fc.option(fc.constantFrom('{"content":', "not json", "[]", "null", '{"a":'.repeat(100)), {
      freq: 8,
      nil: undefined,
    }),
  });
}

test("no operation answers 5xx, an error outside the envelope, or slower than 2 s", async () => {
  const ops = operations(spec);
  expect(ops.length).toBeGreaterThan(30);
  const failures: string[] = [];
  let requests = 0;
  const statuses = new Map<number, number>();
  for (const [i, op] of ops.entries()) {
    await fc.assert(
      fc.asyncProperty(requestArbitrary(op), async (r) => {
        let path = op.path;
        op.pathParams.forEach((p, j) => {
          path = path.replace(`{${p}}`, String(r.params[j]));
        });
        path += r.query;
        const headers: Record<string, string> = {};
        if (r.auth === "key") headers.authorization = `Bearer ${token}`;
        if (r.auth === "bad") headers.authorization = "Bearer crier_not_a_key";
        const raw = r.rawBody !== undefined ? r.rawBody : r.body !== undefined ? JSON.stringify(r.body) : undefined;
        if (raw !== undefined && op.method !== "PUT") headers["content-type"] = "application/json";
        const t0 = performance.now();
        const res = await h.app.handle(
          new Request(`http://localhost${path}`, {
            method: op.method,
            headers,
            body: op.method === "GET" || op.method === "HEAD" ? undefined : raw,
          }),
        );
        const text = await res.text();
        const ms = performance.now() - t0;
        requests++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        // Pages a browser opens (OAuth callback, hosted connect form) answer errors as pages; the API never does.
        const browserPage = !op.scope;
        const label = `${op.method} ${path} ${raw?.slice(0, 200) ?? ""} → ${res.status} ${text.slice(0, 200)}`;
        if (res.status >= 500) failures.push(`5xx: ${label}`);
        if (ms > SLOWEST_MS) failures.push(`${Math.round(ms)} ms: ${label}`);
        // A HEAD answer has no body by definition: its status is all there is to check.
        if (op.method === "HEAD") return;
        if (res.status >= 400 && res.headers.get("content-type")?.includes("application/json")) {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const keys = body && typeof body === "object" ? Object.keys(body) : [];
          const ok =
            keys.length === 1 &&
            keys[0] === "error" &&
            typeof body.error.code === "string" &&
            typeof body.error.message === "string";
          if (!ok) failures.push(`not the envelope: ${label}`);
        } else if (res.status >= 400 && !(browserPage && res.headers.get("content-type")?.startsWith("text/html"))) {
          failures.push(`error without a JSON body: ${label}`);
        }
      }),
      { seed: SEED + i, numRuns: RUNS_PER_OPERATION, endOnFailure: true },
    );
  }
  expect([...new Set(failures.map((f) => f.slice(0, 300)))].slice(0, 30)).toEqual([]);
  expect(requests).toBe(ops.length * RUNS_PER_OPERATION);
  console.log(`fuzz: ${requests} requests over ${ops.length} operations`, Object.fromEntries(statuses));
  // The fuzz must reach the handlers, not only bounce off authentication and validation.
  expect([200, 201].some((s) => (statuses.get(s) ?? 0) > 20)).toBe(true);
}, 120_000);
