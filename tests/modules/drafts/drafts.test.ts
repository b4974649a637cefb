import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createHarness, type Harness } from "../../support/harness.ts";
import { drafts } from "../../../src/db/schema.ts";

let h: Harness;
let token: string;
let profileId: string;
beforeAll(async () => {
  h = await createHarness();
  ({ token, profileId } = await h.profile());
});
afterAll(() => h.close());

const media = { type: "image", url: "https://cdn.example.com/a.png", width: 100, height: 50, thumbnail_url: null };

describe("POST /v1/drafts", () => {
  test("creates a draft with every field and returns it as 201", async () => {
    const body = {
      content: "Hello",
      candidate_angle: "launch",
      media: [media],
      selected_account_ids: ["5f0b8c1e-8a4b-4c52-9a39-0f1e2d3c4b5a"],
      suggested_platforms: ["bluesky"],
    };
    const res = await h.request("POST", "/v1/drafts", { token, body });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ ...body, status: "inbox", source_type: "api" });
    expect(res.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    const read = await h.request("GET", `/v1/drafts/${res.body.data.id}`, { token });
    expect(read.body.data).toEqual(res.body.data);
  });

  test("an empty body is a valid empty draft", async () => {
    const res = await h.request("POST", "/v1/drafts", { token, body: {} });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ content: "", media: [], selected_account_ids: [] });
  });

  const invalid: [string, unknown, string][] = [
    ["unknown top-level property", { content: "x", colour: "red" }, "body.colour"],
    ["unknown DraftMediaInput property", { media: [{ ...media, caption: "no" }] }, "body.media.0.caption"],
    ["media without type", { media: [{ url: "https://x/y.png" }] }, "body.media.0.type"],
    ["negative width", { media: [{ ...media, width: -1 }] }, "body.media.0.width"],
    [
      "duplicate selected_account_ids",
      { selected_account_ids: ["5f0b8c1e-8a4b-4c52-9a39-0f1e2d3c4b5a", "5f0b8c1e-8a4b-4c52-9a39-0f1e2d3c4b5a"] },
      "body.selected_account_ids",
    ],
    ["non-uuid selected_account_ids", { selected_account_ids: ["abc"] }, "body.selected_account_ids.0"],
    ["content not a string", { content: 5 }, "body.content"],
  ];
  for (const [name, body, field] of invalid) {
    test(`400 validation_error for ${name}, nothing stored`, async () => {
      const before = await h.db.db.$count(drafts, eq(drafts.profileId, profileId));
      const res = await h.request("POST", "/v1/drafts", { token, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
      expect(res.body.error.message).toContain(field);
      expect(await h.db.db.$count(drafts, eq(drafts.profileId, profileId))).toBe(before);
    });
  }
});

describe("draft media URLs are checked like post media URLs", () => {
  const bad: [string, unknown][] = [
    ["not a URL", { media: [{ type: "image", url: "not a url" }] }],
    ["a relative path", { media: [{ type: "image", url: "/media/a.png" }] }],
    ["another scheme", { media: [{ type: "video", url: "ftp://cdn.example.com/a.mp4" }] }],
    ["a bad thumbnail", { media: [{ ...media, thumbnail_url: "javascript:alert(1)" }] }],
  ];
  for (const [name, body] of bad) {
    test(`400 invalid_media for ${name} on create and on update, nothing stored`, async () => {
      const before = await h.db.db.$count(drafts, eq(drafts.profileId, profileId));
      const res = await h.request("POST", "/v1/drafts", { token, body });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_media");
      expect(res.body.error.message).toContain("media[0]");
      expect(await h.db.db.$count(drafts, eq(drafts.profileId, profileId))).toBe(before);

      const draft = (await h.request("POST", "/v1/drafts", { token, body: { content: "keep" } })).body.data;
      const patch = await h.request("PATCH", `/v1/drafts/${draft.id}`, {
        token,
        body: { ...(body as object), expected_updated_at: draft.updated_at },
      });
      expect(patch.status).toBe(400);
      expect(patch.body.error.code).toBe("invalid_media");
      const read = await h.request("GET", `/v1/drafts/${draft.id}`, { token });
      expect(read.body.data).toEqual(draft);
    });
  }
});

describe("Idempotency-Key", () => {
  test("the same key and body return the original draft", async () => {
    const headers = { "idempotency-key": "same-1" };
    const a = await h.request("POST", "/v1/drafts", { token, body: { content: "once", media: [media] }, headers });
    const b = await h.request("POST", "/v1/drafts", { token, body: { media: [media], content: "once" }, headers });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(b.body.data).toEqual(a.body.data);
  });

  test("the same key with a different body is 409 idempotency_conflict and creates nothing", async () => {
    const headers = { "idempotency-key": "same-2" };
    await h.request("POST", "/v1/drafts", { token, body: { content: "first" }, headers });
    const before = await h.db.db.$count(drafts, eq(drafts.profileId, profileId));
    const res = await h.request("POST", "/v1/drafts", { token, body: { content: "second" }, headers });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("idempotency_conflict");
    expect(await h.db.db.$count(drafts, eq(drafts.profileId, profileId))).toBe(before);
  });

  test("keys are per profile", async () => {
    const other = await h.profile();
    const headers = { "idempotency-key": "shared-name" };
    const a = await h.request("POST", "/v1/drafts", { token, body: { content: "a" }, headers });
    const b = await h.request("POST", "/v1/drafts", { token: other.token, body: { content: "b" }, headers });
    expect(b.status).toBe(201);
    expect(b.body.data.id).not.toBe(a.body.data.id);
  });

  test("concurrent requests with one key create exactly one draft", async () => {
    const p = await h.profile();
    const headers = { "idempotency-key": "race" };
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        h.request("POST", "/v1/drafts", { token: p.token, body: { content: "race" }, headers }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(await h.db.db.$count(drafts, eq(drafts.profileId, p.profileId))).toBe(1);
  });

  test("key length is 1..200", async () => {
    const res = await h.request("POST", "/v1/drafts", {
      token,
      body: {},
      headers: { "idempotency-key": "k".repeat(201) },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain("idempotency-key");
  });
});

describe("GET /v1/drafts paging", () => {
  test("250 drafts sharing updated_at values are each seen exactly once", async () => {
    const p = await h.profile();
    const stamps = [
      new Date("2026-01-01T00:00:00.000Z"),
      new Date("2026-01-02T00:00:00.000Z"),
      new Date("2026-01-03T00:00:00.000Z"),
    ];
    await h.db.db.insert(drafts).values(
      Array.from({ length: 250 }, (_, i) => ({
        profileId: p.profileId,
        content: `d${i}`,
        createdAt: stamps[i % 3],
        updatedAt: stamps[i % 3],
      })),
    );
    const seen: string[] = [];
    let query = "limit=7";
    for (let page = 0; page < 100; page++) {
      const res = await h.request("GET", `/v1/drafts?${query}`, { token: p.token });
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((d: { id: string }) => d.id));
      const { has_more, next_after, next_after_id } = res.body.meta;
      if (!has_more) {
        expect(next_after).toBeNull();
        break;
      }
      query = `limit=7&after=${encodeURIComponent(next_after)}&after_id=${next_after_id}`;
    }
    expect(seen.length).toBe(250);
    expect(new Set(seen).size).toBe(250);
  });

  test("lists the most recently updated first: editing an older draft moves it to the front", async () => {
    const p = await h.profile();
    const ids: string[] = [];
    for (const content of ["a", "b", "c"]) {
      h.clock.advance(1000);
      ids.push((await h.request("POST", "/v1/drafts", { token: p.token, body: { content } })).body.data.id);
    }
    const list = async () =>
      (await h.request("GET", "/v1/drafts", { token: p.token })).body.data.map((d: { id: string }) => d.id);
    expect(await list()).toEqual([ids[2], ids[1], ids[0]]);
    const oldest = (await h.request("GET", `/v1/drafts/${ids[0]}`, { token: p.token })).body.data;
    h.clock.advance(1000);
    const edit = await h.request("PATCH", `/v1/drafts/${ids[0]}`, {
      token: p.token,
      body: { content: "a, edited", expected_updated_at: oldest.updated_at },
    });
    expect(edit.status).toBe(200);
    expect(await list()).toEqual([ids[0], ids[2], ids[1]]);
  });

  test("status filter, and scheduled drafts are never listed", async () => {
    const p = await h.profile();
    const mk = async (status: "inbox" | "ready" | "archived" | "scheduled") =>
      (await h.db.db.insert(drafts).values({ profileId: p.profileId, status }).returning())[0].id;
    const ids = {
      inbox: await mk("inbox"),
      ready: await mk("ready"),
      archived: await mk("archived"),
      scheduled: await mk("scheduled"),
    };
    const all = await h.request("GET", "/v1/drafts?limit=100", { token: p.token });
    expect(all.body.data.map((d: { id: string }) => d.id).sort()).toEqual([ids.inbox, ids.ready, ids.archived].sort());
    const ready = await h.request("GET", "/v1/drafts?status=ready", { token: p.token });
    expect(ready.body.data.map((d: { id: string }) => d.id)).toEqual([ids.ready]);
    const bad = await h.request("GET", "/v1/drafts?status=scheduled", { token: p.token });
    expect(bad.status).toBe(400);
    expect((await h.request("GET", "/v1/drafts?limit=101", { token: p.token })).status).toBe(400);
    expect((await h.request("GET", "/v1/drafts?after=yesterday", { token: p.token })).status).toBe(400);
  });
});

describe("PATCH /v1/drafts/{id}", () => {
  test("updates with the current expected_updated_at and moves updated_at", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: { content: "v1" } })).body.data;
    h.clock.advance(1000);
    const res = await h.request("PATCH", `/v1/drafts/${created.id}`, {
      token,
      body: { content: "v2", status: "ready", expected_updated_at: created.updated_at },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ content: "v2", status: "ready" });
    expect(res.body.data.updated_at > created.updated_at).toBe(true);
  });

  test("a stale expected_updated_at is 409 draft_conflict and changes nothing", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: { content: "v1" } })).body.data;
    const first = await h.request("PATCH", `/v1/drafts/${created.id}`, {
      token,
      body: { content: "mine", expected_updated_at: created.updated_at },
    });
    expect(first.status).toBe(200);
    const second = await h.request("PATCH", `/v1/drafts/${created.id}`, {
      token,
      body: { content: "theirs", expected_updated_at: created.updated_at },
    });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe("draft_conflict");
    expect((await h.request("GET", `/v1/drafts/${created.id}`, { token })).body.data.content).toBe("mine");
  });

  test("two edits racing on one version: exactly one wins", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: { content: "v1" } })).body.data;
    const results = await Promise.all(
      ["a", "b", "c"].map((c) =>
        h.request("PATCH", `/v1/drafts/${created.id}`, {
          token,
          body: { content: c, expected_updated_at: created.updated_at },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });

  test("expected_updated_at is required; status scheduled cannot be set", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: {} })).body.data;
    const missing = await h.request("PATCH", `/v1/drafts/${created.id}`, { token, body: { content: "x" } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain("expected_updated_at");
    const scheduled = await h.request("PATCH", `/v1/drafts/${created.id}`, {
      token,
      body: { status: "scheduled", expected_updated_at: created.updated_at },
    });
    expect(scheduled.status).toBe(400);
  });

  test("a scheduled draft is 409 draft_not_editable", async () => {
    const [row] = await h.db.db.insert(drafts).values({ profileId, status: "scheduled" }).returning();
    const res = await h.request("PATCH", `/v1/drafts/${row.id}`, {
      token,
      body: { content: "x", expected_updated_at: row.updatedAt.toISOString() },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("draft_not_editable");
  });
});

describe("DELETE and isolation", () => {
  test("delete removes the draft; a second delete is 404", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: {} })).body.data;
    const res = await h.request("DELETE", `/v1/drafts/${created.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ deleted: true, id: created.id });
    expect((await h.request("GET", `/v1/drafts/${created.id}`, { token })).status).toBe(404);
    expect((await h.request("DELETE", `/v1/drafts/${created.id}`, { token })).status).toBe(404);
  });

  test("another profile's key gets 404 for this profile's drafts and never lists them", async () => {
    const created = (await h.request("POST", "/v1/drafts", { token, body: { content: "private" } })).body.data;
    const other = await h.profile();
    for (const [method, body] of [
      ["GET", undefined],
      ["PATCH", { content: "x", expected_updated_at: created.updated_at }],
      ["DELETE", undefined],
    ] as const) {
      const res = await h.request(method, `/v1/drafts/${created.id}`, { token: other.token, body });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe("not_found");
    }
    const list = await h.request("GET", "/v1/drafts?limit=100", { token: other.token });
    expect(list.body.data.find((d: { id: string }) => d.id === created.id)).toBeUndefined();
    expect((await h.request("GET", `/v1/drafts/${created.id}`, { token })).body.data.content).toBe("private");
  });
});
