/**
 * An S3 store that refuses writes: a small proxy in front of a real s3rver answers PUTs itself while told
 * to, as a store out of room (507 with an S3 error body) or out of service (503). Crier answers 507
 * insufficient_storage for the first and 503 storage_unavailable for the second, and records nothing as
 * uploaded either way; once the store takes writes again the same ticket completes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { createHarness, type Harness } from "../../support/harness.ts";
import { startS3 } from "../../support/s3.ts";
import { makePng } from "../../support/media-fixtures.ts";

type Refusal = "none" | "full" | "down" | "copies-full";

let s3: Awaited<ReturnType<typeof startS3>>;
let proxy: ReturnType<typeof Bun.serve>;
let refusing: Refusal = "none";
let h: Harness;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let owner: { token: string; profileId: string };

const s3Error = (status: number, code: string, message: string) =>
  new Response(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
    { status, headers: { "content-type": "application/xml" } },
  );

/** What the proxy answers itself instead of the store, or null to pass the request on. */
function refusalFor(req: Request): Response | null {
  if (req.method !== "PUT") return null;
  const copy = req.headers.has("x-amz-copy-source");
  if (refusing === "full" || (refusing === "copies-full" && copy))
    return s3Error(507, "InsufficientStorage", "The store has no room for this object.");
  if (refusing === "down") return s3Error(503, "ServiceUnavailable", "Please reduce your request rate.");
  return null;
}

beforeAll(async () => {
  s3 = await startS3();
  const upstream = new URL(s3.endpoint);
  proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const refused = refusalFor(req);
      if (refused) {
        await req.arrayBuffer();
        return refused;
      }
      // Passed on untouched (Host included), so the store checks the signature made for the proxy's address.
      const url = new URL(req.url);
      url.host = upstream.host;
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const res = await fetch(url, { method: req.method, headers: req.headers, body, redirect: "manual" });
      return new Response(res.body, { status: res.status, headers: res.headers });
    },
  });
  h = await createHarness({ s3: { ...s3.config, endpoint: `http://127.0.0.1:${proxy.port}` } });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (r) => h.app.handle(r) });
  base = `http://127.0.0.1:${server.port}`;
  owner = await h.profile();
});

afterAll(async () => {
  server.stop(true);
  proxy.stop(true);
  await h.close();
  await s3.stop();
});

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: {
      authorization: `Bearer ${owner.token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

/** The media rows that claim to hold bytes (uploaded or checked and found invalid). */
const uploadedRows = () => h.db.rows<{ status: string }>(sql`select status from media where status <> 'pending'`);

describe("an S3 store that refuses writes", () => {
  test("an inline upload while the store is full answers 507 insufficient_storage and stores nothing", async () => {
    refusing = "full";
    const png = makePng(2, 2);
    const res = await api("POST", "/v1/media/base64", {
      filename: "full.png",
      content_type: "image/png",
      data: Buffer.from(png).toString("base64"),
    });
    expect(res.status).toBe(507);
    expect(res.body.error.code).toBe("insufficient_storage");
    expect(res.body.error.hint).toMatch(/free space/i);
    expect(await uploadedRows()).toEqual([]);
    refusing = "none";
    const again = await api("POST", "/v1/media/base64", {
      filename: "full.png",
      content_type: "image/png",
      data: Buffer.from(png).toString("base64"),
    });
    expect(again.status).toBe(201);
    expect(again.body.data.size).toBe(png.byteLength);
  });

  test("a store that is out of service answers 503 storage_unavailable with Retry-After", async () => {
    refusing = "down";
    try {
      const res = await api("POST", "/v1/media/base64", {
        filename: "down.png",
        content_type: "image/png",
        data: Buffer.from(makePng(3, 3)).toString("base64"),
      });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("storage_unavailable");
      expect(res.headers.get("retry-after")).toBeTruthy();
    } finally {
      refusing = "none";
    }
  });

  test("an upload whose copy into place is refused stays pending (507), then settles once the store has room", async () => {
    const png = makePng(4, 4);
    const t = await api("POST", "/v1/media/uploads", { filename: "later.png", content_type: "image/png" });
    expect(t.status).toBe(201);
    const put = await fetch(t.body.data.upload.signedUrl, {
      method: "PUT",
      body: png,
      headers: { "content-type": "image/png" },
    });
    expect(put.status).toBe(200);
    refusing = "copies-full";
    try {
      const res = await api("GET", `/v1/media/${t.body.data.media_id}`);
      expect(res.status).toBe(507);
      expect(res.body.error.code).toBe("insufficient_storage");
      const [row] = await h.db.rows<{ status: string }>(sql`select status from media where path = ${t.body.data.path}`);
      expect(row.status).toBe("pending");
    } finally {
      refusing = "none";
    }
    const settled = await api("GET", `/v1/media/${t.body.data.media_id}`);
    expect(settled.status).toBe(200);
    expect(settled.body.data.size).toBe(png.byteLength);
  });
});
