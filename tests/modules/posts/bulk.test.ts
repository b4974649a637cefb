import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { posts } from "../../../src/db/schema.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import { csvEntries } from "../../../src/modules/posts/bulk-csv.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// POST /v1/posts/bulk: many posts as JSON or CSV, checked as POST /v1/posts/validate checks one
// (dry_run=true) or created each once, with every row answered by its number.

let h: Harness;
let token: string;
let bsky: string;
let telegram: string;
let foreign: string;

const connect = async (profile: string, platform: string, remoteId: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId: profile,
      platform,
      remoteId,
      username: `${remoteId}.test`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId, bot_token: "1:x" },
    })
  ).id;

beforeAll(async () => {
  h = await postsHarness();
  const p = await h.profile();
  token = p.token;
  bsky = await connect(p.profileId, "bluesky", "did:plc:bulk");
  telegram = await connect(p.profileId, "telegram", "-100777");
  foreign = await connect((await h.profile()).profileId, "bluesky", "did:plc:other");
});
afterAll(() => h.close());

const postCount = async () => (await h.db.db.select({ id: posts.id }).from(posts)).length;
const later = (hours: number) => new Date(h.clock.now().getTime() + hours * 3600_000).toISOString();
const earlier = (hours: number) => new Date(h.clock.now().getTime() - hours * 3600_000).toISOString();

function csv(rows: string[][]) {
  const cell = (c: string) => (/[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  return rows.map((r) => r.map(cell).join(",")).join("\n") + "\n";
}

const bulkCsv = (text: string, opts: { dryRun?: boolean; key?: string } = {}) =>
  h.request("POST", `/v1/posts/bulk${opts.dryRun ? "?dry_run=true" : ""}`, {
    token,
    raw: text,
    headers: { "content-type": "text/csv", ...(opts.key ? { "idempotency-key": opts.key } : {}) },
  });

const bulkJson = (body: unknown, opts: { dryRun?: boolean; key?: string } = {}) =>
  h.request("POST", `/v1/posts/bulk${opts.dryRun ? "?dry_run=true" : ""}`, {
    token,
    body,
    headers: opts.key ? { "idempotency-key": opts.key } : {},
  });

const HEADER = ["content", "publish_at", "account_ids", "media_urls", "options"];

/** Row n of the answer by its number. */
const row = (res: { body: any }, n: number) => res.body.data.rows.find((r: any) => r.row === n);
const codes = (r: any) => r.problems.map((p: any) => p.code);

describe("dry run", () => {
  test("a CSV dry run reports each bad row by its spreadsheet number, with the column to fix, and creates nothing", async () => {
    const before = await postCount();
    const res = await bulkCsv(
      csv([
        HEADER,
        ["fine", later(2), `${bsky} ${telegram}`, "", ""],
        ["foreign account", later(2), foreign, "", ""],
        ["too late", earlier(3), bsky, "", ""],
        ["x".repeat(320), later(2), `${bsky} ${telegram}`, "", ""],
        ["bad options", later(2), telegram, "", "{not json"],
        ["", "", "", "", ""],
        [
          "unknown option",
          later(2),
          telegram,
          "https://cdn.example.com/a.jpg",
          JSON.stringify({ [telegram]: { nope: 1 } }),
        ],
      ]),
      { dryRun: true },
    );
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ dry_run: true, total: 6, ok: 1, failed: 5, created: 0, replayed: 0 });
    // The header is row 1; the empty line (row 7) is skipped but counted.
    expect(d.rows.map((r: any) => r.row)).toEqual([2, 3, 4, 5, 6, 8]);
    expect(row(res, 2)).toEqual({ row: 2, ok: true, problems: [] });
    expect(row(res, 3).problems).toEqual([
      expect.objectContaining({
        code: "target_account_not_found",
        account_id: foreign,
        field: "targets[0].account_id",
        column: "account_ids",
      }),
    ]);
    expect(row(res, 4).problems).toEqual([
      expect.objectContaining({ code: "publish_at_in_past", field: "publish_at", column: "publish_at" }),
    ]);
    // Too long for Bluesky (300 graphemes), fine for Telegram: the problem names the target.
    expect(row(res, 5).problems).toEqual([
      expect.objectContaining({ code: "content_too_long", account_id: bsky, column: "content" }),
    ]);
    expect(row(res, 6).problems).toEqual([
      expect.objectContaining({ code: "invalid_csv_cell", field: "options", column: "options" }),
    ]);
    expect(row(res, 6).problems[0].message).toContain("not JSON");
    expect(row(res, 8).problems).toEqual([
      expect.objectContaining({
        code: "invalid_platform_options",
        field: "targets[0].platform_options.nope",
        column: "options",
      }),
    ]);
    expect(await postCount()).toBe(before);
  });

  test("a JSON dry run checks each post, the schema included, and creates nothing", async () => {
    const before = await postCount();
    const res = await bulkJson(
      {
        posts: [
          { content: "ok", targets: [{ account_id: bsky }], duplicateKey: "client-bookkeeping" },
          { content: "no targets" },
          { content: 5, targets: [{ account_id: bsky }], publish_at: "tomorrow" },
          { content: "draft", targets: [{ account_id: bsky }], draft_id: "3f1d0c9e-0000-4000-8000-000000000000" },
        ],
      },
      { dryRun: true },
    );
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ dry_run: true, total: 4, ok: 1, failed: 3 });
    // Keys PostCreate does not declare are ignored as POST /v1/posts ignores them, and named.
    expect(row(res, 1)).toEqual({ row: 1, ok: true, problems: [], ignored_fields: ["duplicateKey"] });
    expect(row(res, 2).problems).toEqual([
      expect.objectContaining({ code: "validation_error", field: "targets", message: "targets is required." }),
    ]);
    expect(
      row(res, 3)
        .problems.map((p: any) => p.field)
        .sort(),
    ).toEqual(["content", "publish_at"]);
    expect(codes(row(res, 4))).toEqual(["draft_not_found"]);
    expect(await postCount()).toBe(before);
  });

  test("a 1,000-row CSV dry run reports the bad rows by number", async () => {
    const rows = [HEADER];
    for (let i = 0; i < 1000; i++) {
      const bad = i === 9 || i === 499 || i === 998;
      rows.push([
        `post ${i}`,
        i === 499 ? earlier(1) : later(1 + i / 10),
        i === 9 ? foreign : `${bsky} ${telegram}`,
        i % 3 === 0 ? `https://cdn.example.com/${i}.jpg` : "",
        i === 998 ? "[1]" : bad ? "" : JSON.stringify({ [telegram]: { disable_notification: true } }),
      ]);
    }
    const before = await postCount();
    const started = performance.now();
    const res = await bulkCsv(csv(rows), { dryRun: true });
    const ms = performance.now() - started;
    expect(res.status).toBe(200);
    const d = res.body.data;
    expect(d).toMatchObject({ total: 1000, ok: 997, failed: 3 });
    // Data row i is spreadsheet row i + 2.
    expect(d.rows.filter((r: any) => !r.ok).map((r: any) => [r.row, codes(r)])).toEqual([
      [11, ["target_account_not_found"]],
      [501, ["publish_at_in_past"]],
      [1000, ["invalid_csv_cell"]],
    ]);
    expect(await postCount()).toBe(before);
    console.log(`1,000-row CSV dry run: ${ms.toFixed(0)} ms`);
  });
});

describe("the request as a whole", () => {
  test("unknown columns are refused by name, with the allowed ones", async () => {
    const res = await bulkCsv(
      csv([
        ["content", "account_ids", "Colour", "when"],
        ["x", bsky, "red", "now"],
      ]),
    );
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("unknown_csv_columns");
    expect(res.body.error.message).toContain('"colour", "when"');
    expect(res.body.error.hint).toContain("publish_at");
  });

  test("a missing required column, a malformed file, no posts and too many posts are 400s; nothing is created", async () => {
    const before = await postCount();
    const missing = await bulkCsv(
      csv([
        ["content", "publish_at"],
        ["x", ""],
      ]),
    );
    expect([missing.status, missing.body.error.code]).toEqual([400, "missing_csv_columns"]);
    expect(missing.body.error.message).toContain("account_ids");
    const broken = await bulkCsv(`content,account_ids\nfine,${bsky}\n"unclosed,${bsky}\n`);
    expect([broken.status, broken.body.error.code]).toEqual([400, "invalid_csv"]);
    expect(broken.body.error.message).toContain("line 3");
    const empty = await bulkCsv("content,account_ids\n");
    expect([empty.status, empty.body.error.code]).toEqual([400, "no_posts"]);
    const many = await bulkCsv(csv([["content", "account_ids"], ...Array.from({ length: 1001 }, () => ["x", bsky])]));
    expect([many.status, many.body.error.code]).toEqual([400, "too_many_posts"]);
    const manyJson = await bulkJson({ posts: Array.from({ length: 1001 }, () => ({})) });
    expect([manyJson.status, manyJson.body.error.code]).toEqual([400, "too_many_posts"]);
    const other = await h.request("POST", "/v1/posts/bulk", {
      token,
      raw: "content=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(other.status).toBe(415);
    // Other routes still take JSON only.
    const csvElsewhere = await h.request("POST", "/v1/posts", {
      token,
      raw: "content,account_ids\n",
      headers: { "content-type": "text/csv" },
    });
    expect(csvElsewhere.status).toBe(415);
    expect(await postCount()).toBe(before);
  });

  test("the posts:write scope is needed", async () => {
    const reader = await h.profile({ scopes: ["posts:read"] });
    const res = await h.request("POST", "/v1/posts/bulk", { token: reader.token, body: { posts: [] } });
    expect(res.status).toBe(403);
  });
});

describe("import", () => {
  test("the same CSV imported twice creates each post once; a fixed file creates only the missing rows", async () => {
    const rows = [HEADER];
    for (let i = 0; i < 20; i++) rows.push([`import ${i}`, later(5 + i), bsky, "", ""]);
    rows.push(["bad", later(5), foreign, "", ""]);
    const before = await postCount();
    const first = await bulkCsv(csv(rows));
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ dry_run: false, total: 21, ok: 20, failed: 1, created: 20, replayed: 0 });
    const ids = first.body.data.rows.filter((r: any) => r.ok).map((r: any) => r.post_id);
    expect(new Set(ids).size).toBe(20);
    expect(row(first, 2)).toMatchObject({ ok: true, status: "scheduled", replayed: false });
    expect(codes(row(first, 22))).toEqual(["target_account_not_found"]);
    expect(await postCount()).toBe(before + 20);
    const stored = await h.request("GET", `/v1/posts/${row(first, 2).post_id}`, { token });
    expect(stored.body.data).toMatchObject({ content: "import 0", status: "scheduled" });

    const again = await bulkCsv(csv(rows));
    expect(again.body.data).toMatchObject({ total: 21, ok: 20, failed: 1, created: 0, replayed: 20 });
    expect(again.body.data.rows.filter((r: any) => r.ok).map((r: any) => r.post_id)).toEqual(ids);
    expect(await postCount()).toBe(before + 20);

    // The bad row fixed: only it is new.
    rows[21] = ["bad no more", later(5), telegram, "", ""];
    const fixed = await bulkCsv(csv(rows));
    expect(fixed.body.data).toMatchObject({ ok: 21, failed: 0, created: 1, replayed: 20 });
    expect(await postCount()).toBe(before + 21);
    // A dry run of the same file says what an import would do: nothing new.
    const dry = await bulkCsv(csv(rows), { dryRun: true });
    expect(dry.body.data).toMatchObject({ ok: 21, replayed: 21, created: 0 });
  });

  test("with an Idempotency-Key each row's key is <key>:<row>: sent again it replays, and the row alone replays too", async () => {
    const body = {
      posts: [
        { content: "keyed one", publish_at: later(30), targets: [{ account_id: bsky }] },
        { content: "keyed two", targets: [{ account_id: foreign }] },
        { content: "keyed three", publish_at: later(31), targets: [{ account_id: telegram }] },
      ],
    };
    const before = await postCount();
    const first = await bulkJson(body, { key: "import-42" });
    expect(first.body.data).toMatchObject({ total: 3, ok: 2, failed: 1, created: 2 });
    const again = await bulkJson(body, { key: "import-42" });
    expect(again.body.data).toMatchObject({ ok: 2, created: 0, replayed: 2 });
    expect(await postCount()).toBe(before + 2);
    // Row 3's key is import-42:3, shared with POST /v1/posts.
    const single = await h.request("POST", "/v1/posts", {
      token,
      body: body.posts[2],
      headers: { "idempotency-key": "import-42:3" },
    });
    expect(single.status).toBe(201);
    expect(single.headers.get("idempotent-replayed")).toBe("true");
    expect(single.body.data.id).toBe(row(first, 3).post_id);
    // The same key with a changed row is that row's conflict, never a second post.
    body.posts[0].content = "keyed one, edited";
    const changed = await bulkJson(body, { key: "import-42" });
    expect(codes(row(changed, 1))).toEqual(["idempotency_conflict"]);
    expect(row(changed, 3)).toMatchObject({ ok: true, replayed: true });
    expect(await postCount()).toBe(before + 2);
  });

  test("a row that publishes now is queued; identical rows without a key are one post", async () => {
    const before = await postCount();
    const res = await bulkJson({
      posts: [
        { content: "right away", targets: [{ account_id: bsky }] },
        { content: "right away", targets: [{ account_id: bsky }] },
      ],
    });
    expect(res.body.data).toMatchObject({ ok: 2, created: 1, replayed: 1 });
    expect(row(res, 1).status).toBe("queued");
    expect(row(res, 2).post_id).toBe(row(res, 1).post_id);
    expect(await postCount()).toBe(before + 1);
  });
});

describe("CSV cells", () => {
  test("each column lands in the body of POST /v1/posts", () => {
    const [entry] = csvEntries(
      csv([
        ["Content", "account_ids", "publish_at", "queue", "media_urls", "options", "first_comment", "external_id"],
        [
          "hello, world",
          `${bsky}  ${telegram}`,
          "2030-01-01T09:00:00Z",
          "TRUE",
          "https://cdn.example.com/a.jpg https://cdn.example.com/b.png",
          JSON.stringify({ [telegram]: { disable_notification: true } }),
          "first!",
          "sheet-1",
        ],
      ]),
    );
    expect(entry).toEqual({
      row: 2,
      csv: true,
      problems: [],
      body: {
        content: "hello, world",
        publish_at: "2030-01-01T09:00:00Z",
        queue: true,
        media: [{ url: "https://cdn.example.com/a.jpg" }, { url: "https://cdn.example.com/b.png" }],
        external_id: "sheet-1",
        targets: [
          { account_id: bsky, first_comment: "first!" },
          { account_id: telegram, platform_options: { disable_notification: true }, first_comment: "first!" },
        ],
      },
    });
    const [keyed] = csvEntries(
      csv([
        ["content", "account_ids", "first_comment", "queue"],
        ["x", `${bsky} ${telegram}`, JSON.stringify({ [telegram]: "only here" }), "maybe"],
      ]),
    );
    expect((keyed.body as any).targets).toEqual([
      { account_id: bsky },
      { account_id: telegram, first_comment: "only here" },
    ]);
    expect(keyed.problems!.map((p) => [p.code, p.column])).toEqual([["invalid_csv_cell", "queue"]]);
  });

  test("a row with another cell count than the header, or options for an account it does not target, is that row's problem", async () => {
    const res = await bulkCsv(
      `content,account_ids,options\nshort,${bsky}\nstray,${bsky},"${JSON.stringify({ [telegram]: {} }).replace(/"/g, '""')}"\n`,
      { dryRun: true },
    );
    expect(res.status).toBe(200);
    expect(codes(row(res, 2))).toEqual(["csv_cell_count"]);
    expect(codes(row(res, 3))).toEqual(["invalid_csv_cell"]);
    expect(row(res, 3).problems[0].message).toContain(telegram);
  });
});

test("the description shows both forms of the body", async () => {
  const doc = (await h.request("GET", "/openapi.json")).body;
  const op = doc.paths["/v1/posts/bulk"].post;
  expect(Object.keys(op.requestBody.content).sort()).toEqual(["application/json", "text/csv"]);
  expect(op["x-scope"]).toBe("posts:write");
  expect(JSON.stringify(op.requestBody.content["application/json"])).toContain("BulkPostsJson");
});
