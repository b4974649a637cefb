import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { postTargets } from "../../../src/db/schema.ts";
import { upsertConnectedAccount } from "../../../src/modules/accounts/service.ts";
import type { Harness } from "../../support/harness.ts";
import { postsHarness } from "../../support/posts-kit.ts";

// The posts API without an engine in this copy (serve --no-scheduler): what is accepted, what is refused,
// and that a refused request changes nothing. Publishing itself is in tests/engine*.test.ts.

let h: Harness;
let token: string;
let profileId: string;
let bsky: string;
let bsky2: string;
let gone: string;
/** An account on a platform whose plugin cannot publish yet (none once every plugin is written). */
let declaredOnly: string | undefined;
let foreign: string;

const connect = async (profile: string, platform: string, remoteId: string) =>
  (
    await upsertConnectedAccount(h.ctx, {
      profileId: profile,
      platform,
      remoteId,
      username: `${remoteId}.test`,
      credentials: { did: remoteId, accessJwt: "a", refreshJwt: "r", handle: remoteId },
    })
  ).id;

beforeAll(async () => {
  h = await postsHarness();
  ({ token, profileId } = await h.profile());
  bsky = await connect(profileId, "bluesky", "did:plc:alice");
  bsky2 = await connect(profileId, "bluesky", "did:plc:bob");
  gone = await connect(profileId, "bluesky", "did:plc:gone");
  await h.request("DELETE", `/v1/accounts/${gone}`, { token });
  const unwritten = h.ctx.platforms.list().find((p) => h.ctx.platforms.statusOf(p.platform) === "declared_only");
  if (unwritten) declaredOnly = await connect(profileId, unwritten.platform, "declared-1");
  const other = await h.profile();
  foreign = await connect(other.profileId, "bluesky", "did:plc:mallory");
});
afterAll(() => h.close());

const create = (body: unknown, headers?: Record<string, string>) =>
  h.request("POST", "/v1/posts", { token, body, headers });
const later = (ms = 3600_000) => new Date(h.clock.now().getTime() + ms).toISOString();
const setTargets = (postId: string, status: "failed" | "processing" | "published") =>
  h.db.db
    .update(postTargets)
    .set({ status, error: status === "failed" ? "boom" : null })
    .where(eq(postTargets.postId, postId));

describe("POST /v1/posts", () => {
  test("publish now: 201, post queued, targets pending with the account's details", async () => {
    const res = await create({ content: "hello", targets: [{ account_id: bsky }] });
    expect(res.status).toBe(201);
    const post = res.body.data;
    expect(post).toMatchObject({
      content: "hello",
      status: "queued",
      origin: "api",
      publish_at: null,
      external_id: null,
      media: [],
    });
    expect(post.targets).toHaveLength(1);
    expect(post.targets[0]).toMatchObject({
      account_id: bsky,
      platform: "bluesky",
      username: "did:plc:alice.test",
      status: "pending",
      target_variant: null,
      error: null,
      platform_post_id: null,
    });
    expect(post.targets[0].target_post_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data).toEqual(post);
  });

  test("publish later: post and targets scheduled at publish_at", async () => {
    const at = later();
    const res = await create({
      content: "later",
      publish_at: at,
      external_id: "ext-1",
      targets: [{ account_id: bsky }, { account_id: bsky2, content_override: "other text" }],
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: "scheduled", publish_at: at, external_id: "ext-1" });
    expect(res.body.data.targets.map((t: any) => [t.status, t.scheduled_time, t.content_override])).toEqual([
      ["scheduled", at, null],
      ["scheduled", at, "other text"],
    ]);
  });

  test("media URLs are trimmed and typed; a bad one rejects the whole request with invalid_media", async () => {
    const ok = await create({
      content: "pic",
      media: [{ url: "  https://cdn.example.com/a.png  " }],
      targets: [{ account_id: bsky }],
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.media).toEqual([{ url: "https://cdn.example.com/a.png", type: "image" }]);
    for (const url of ["not a url", "ftp://x.example/a.png", "/relative.png", "https://"]) {
      const res = await create({
        content: "x",
        media: [{ url: "https://cdn.example.com/ok.png" }, { url }],
        targets: [{ account_id: bsky }],
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_media");
      expect(res.body.error.message).toContain("media[1]");
    }
  });

  test("publish_at in the past beyond the tolerance is refused; a few seconds back counts as now", async () => {
    const res = await create({ content: "x", publish_at: later(-10 * 60_000), targets: [{ account_id: bsky }] });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("publish_at_in_past");
    const near = await create({ content: "x", publish_at: later(-5_000), targets: [{ account_id: bsky }] });
    expect(near.status).toBe(201);
    expect(near.body.data.status).toBe("queued");
  });

  test("targets: unknown, foreign, disconnected, unsupported platform — each a 400 naming the target", async () => {
    const cases: [string, string][] = [
      ["00000000-0000-4000-8000-000000000000", "target_account_not_found"],
      ["not-a-uuid", "target_account_not_found"],
      [foreign, "target_account_not_found"],
      [gone, "target_account_disconnected"],
    ];
    if (declaredOnly) cases.push([declaredOnly, "platform_not_supported"]);
    for (const [id, code] of cases) {
      const res = await create({ content: "x", targets: [{ account_id: bsky }, { account_id: id }] });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(`targets[1] (account ${id}`);
      expect(res.body.error.hint).toBeTruthy();
    }
  });

  test("platform rules are checked per target at creation, naming the account", async () => {
    const img = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `https://cdn.example.com/${i}.jpg` }));
    const cases: [unknown, string][] = [
      [{ content: "x".repeat(301), targets: [{ account_id: bsky }] }, "content_too_long"],
      [{ content: "short", targets: [{ account_id: bsky2, content_override: "y".repeat(400) }] }, "content_too_long"],
      [{ content: "x", media: img(5), targets: [{ account_id: bsky }] }, "too_many_media"],
      [
        { content: "x", media: [...img(1), { url: "https://cdn.example.com/v.mp4" }], targets: [{ account_id: bsky }] },
        "mixed_media_not_allowed",
      ],
      [
        {
          content: "x",
          media: [{ url: "https://cdn.example.com/v.mp4", duration: 600 }],
          targets: [{ account_id: bsky }],
        },
        "video_too_long",
      ],
      [
        {
          content: "x",
          media: [{ url: "https://cdn.example.com/a.png", size: 5_000_000 }],
          targets: [{ account_id: bsky }],
        },
        "media_too_large",
      ],
      [
        { content: "x", media: [{ url: "https://cdn.example.com/a.heic" }], targets: [{ account_id: bsky }] },
        "unsupported_media_format",
      ],
      [{ content: "  ", targets: [{ account_id: bsky }] }, "empty_post"],
    ];
    for (const [body, code] of cases) {
      const res = await create(body);
      expect(`${code}: ${res.status} ${res.body.error?.code}`).toBe(`${code}: 400 ${code}`);
      expect(res.body.error.message).toMatch(/targets\[0\] \(account [0-9a-f-]{36}, bluesky\)/);
    }
    // The override replaces the content only for its own target.
    const ok = await create({ content: "x".repeat(301), targets: [{ account_id: bsky, content_override: "fits" }] });
    expect(ok.status).toBe(201);
  });

  test("schema errors: no targets", async () => {
    for (const body of [{ content: "x" }, { content: "x", targets: [] }]) {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("validation_error");
    }
  });

  test("unknown fields are ignored as the upstream ignores them, and named in Crier-Ignored-Fields", async () => {
    const res = await create({ content: "x", targets: [{ account_id: bsky }], colour: "red" });
    expect(res.status).toBe(201);
    expect(res.body.data).not.toHaveProperty("colour");
    expect(res.headers.get("crier-ignored-fields")).toBe("colour");
  });

  test("the same account twice makes a thread on a platform with threads", async () => {
    const res = await create({
      content: "1/2",
      targets: [{ account_id: bsky }, { account_id: bsky, content_override: "2/2" }],
    });
    expect(res.status).toBe(201);
    expect(res.body.data.targets.map((t: any) => [t.account_id, t.content_override])).toEqual([
      [bsky, null],
      [bsky, "2/2"],
    ]);
  });

  test("Idempotency-Key: same body replays the original, another body is 409", async () => {
    const body = { content: "once", targets: [{ account_id: bsky }] };
    const first = await create(body, { "idempotency-key": "k-1" });
    const again = await create(body, { "idempotency-key": "k-1" });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.data.id).toBe(first.body.data.id);
    const other = await create({ ...body, content: "twice" }, { "idempotency-key": "k-1" });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");
  });

  test("draft_id marks the draft scheduled; an unknown draft is 400 and creates nothing", async () => {
    const draft = (await h.request("POST", "/v1/drafts", { token, body: { content: "from a draft" } })).body.data;
    const res = await create({ content: "from a draft", draft_id: draft.id, targets: [{ account_id: bsky }] });
    expect(res.status).toBe(201);
    expect(res.body.data.draft_id).toBe(draft.id);
    expect((await h.request("GET", `/v1/drafts/${draft.id}`, { token })).body.data.status).toBe("scheduled");
    const before = (await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length;
    const bad = await create({
      content: "x",
      draft_id: "00000000-0000-4000-8000-000000000001",
      targets: [{ account_id: bsky }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("draft_not_found");
    expect((await h.request("GET", "/v1/posts?limit=100", { token })).body.data.length).toBe(before);
  });

  test("scopes: posts:read cannot create", async () => {
    const reader = await h.profile({ scopes: ["posts:read"] });
    const res = await h.request("POST", "/v1/posts", {
      token: reader.token,
      body: { content: "x", targets: [{ account_id: bsky }] },
    });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe("missing_scope");
  });
});

describe("GET /v1/posts", () => {
  test("pages newest first without gaps and filters by status, origin and account", async () => {
    const p = await h.profile();
    const acct = await connect(p.profileId, "bluesky", "did:plc:pager");
    const acct2 = await connect(p.profileId, "bluesky", "did:plc:pager2");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      h.clock.advance(1);
      const res = await h.request("POST", "/v1/posts", {
        token: p.token,
        body: {
          content: `p${i}`,
          ...(i % 2 ? { publish_at: later() } : {}),
          targets: [{ account_id: i < 5 ? acct : acct2 }],
        },
      });
      ids.push(res.body.data.id);
    }
    const seen: string[] = [];
    let q = "limit=3";
    for (;;) {
      const page = await h.request("GET", `/v1/posts?${q}`, { token: p.token });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((x: any) => x.id));
      if (!page.body.meta.has_more) break;
      q = `limit=3&after=${encodeURIComponent(page.body.meta.next_after)}&after_id=${page.body.meta.next_after_id}`;
    }
    expect(seen).toEqual([...ids].reverse());
    const scheduled = await h.request("GET", "/v1/posts?status=scheduled", { token: p.token });
    expect(scheduled.body.data.map((x: any) => x.content).sort()).toEqual(["p1", "p3", "p5"]);
    const queued = await h.request("GET", "/v1/posts?status=queued", { token: p.token });
    expect(queued.body.data.map((x: any) => x.content).sort()).toEqual(["p0", "p2", "p4", "p6"]);
    const byAccount = await h.request("GET", `/v1/posts?account_id=${acct2}`, { token: p.token });
    expect(byAccount.body.data.map((x: any) => x.content).sort()).toEqual(["p5", "p6"]);
    expect((await h.request("GET", "/v1/posts?origin=workflow", { token: p.token })).body.data).toEqual([]);
    const bad = await h.request("GET", "/v1/posts?status=lost", { token: p.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_error");
  });

  test("lists the most recently updated first: editing an older post moves it to the front", async () => {
    const p = await h.profile();
    const acct = await connect(p.profileId, "bluesky", "did:plc:order");
    const ids: string[] = [];
    for (const content of ["first", "second"]) {
      h.clock.advance(1000);
      const res = await h.request("POST", "/v1/posts", {
        token: p.token,
        body: { content, publish_at: later(), targets: [{ account_id: acct }] },
      });
      ids.push(res.body.data.id);
    }
    const list = async () =>
      (await h.request("GET", "/v1/posts", { token: p.token })).body.data.map((x: { id: string }) => x.id);
    expect(await list()).toEqual([ids[1], ids[0]]);
    h.clock.advance(1000);
    const edit = await h.request("PATCH", `/v1/posts/${ids[0]}`, {
      token: p.token,
      body: { content: "first, edited" },
    });
    expect(edit.status).toBe(200);
    expect(await list()).toEqual([ids[0], ids[1]]);
  });

  test("another profile's post is 404", async () => {
    const mine = (await create({ content: "mine", targets: [{ account_id: bsky }] })).body.data;
    const other = await h.profile();
    const res = await h.request("GET", `/v1/posts/${mine.id}`, { token: other.token });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("changing a post", () => {
  test("PATCH a scheduled post: fields change, targets are revalidated and can be replaced", async () => {
    const post = (await create({ content: "draft", publish_at: later(), targets: [{ account_id: bsky }] })).body.data;
    const at = later(7200_000);
    const res = await h.request("PATCH", `/v1/posts/${post.id}`, {
      token,
      body: { content: "final", publish_at: at, external_id: "e2" },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ content: "final", publish_at: at, external_id: "e2", status: "scheduled" });
    expect(res.body.data.targets[0].scheduled_time).toBe(at);
    // Targets not given in the PATCH keep their ids.
    expect(res.body.data.targets[0].target_post_id).toBe(post.targets[0].target_post_id);
    const swap = await h.request("PATCH", `/v1/posts/${post.id}`, {
      token,
      body: { targets: [{ account_id: bsky2 }, { account_id: bsky }] },
    });
    expect(swap.body.data.targets.map((t: any) => t.account_id)).toEqual([bsky2, bsky]);
    // New content is checked against every platform again, and a refusal changes nothing.
    const tooLong = await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { content: "z".repeat(400) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.code).toBe("content_too_long");
    const after = (await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data;
    expect(after).toEqual(swap.body.data);
    // publish_at null means now: the post becomes queued.
    const now = await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { publish_at: null } });
    expect(now.body.data.status).toBe("queued");
  });

  test("PATCH of a post that is not scheduled is 409 post_not_editable and changes nothing", async () => {
    const post = (await create({ content: "now", targets: [{ account_id: bsky }] })).body.data;
    const res = await h.request("PATCH", `/v1/posts/${post.id}`, { token, body: { content: "changed" } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe("post_not_editable");
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data).toEqual(post);
  });

  test("publish a scheduled post now; again is 409 post_not_scheduled", async () => {
    const post = (await create({ content: "soon", publish_at: later(), targets: [{ account_id: bsky }] })).body.data;
    const res = await h.request("POST", `/v1/posts/${post.id}/publish`, { token });
    expect(res.status).toBe(200);
    // No engine in this copy: the targets are due now and wait for a copy that publishes.
    expect(res.body.data.status).toBe("queued");
    expect(res.body.data.targets[0].status).toBe("pending");
    const again = await h.request("POST", `/v1/posts/${post.id}/publish`, { token });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("post_not_scheduled");
  });

  test("cancel: waiting targets become cancelled, the record stays; cancelling again is 409", async () => {
    const post = (
      await create({ content: "c", publish_at: later(), targets: [{ account_id: bsky }, { account_id: bsky2 }] })
    ).body.data;
    const res = await h.request("POST", `/v1/posts/${post.id}/cancel`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("cancelled");
    expect(res.body.data.targets.map((t: any) => t.status)).toEqual(["cancelled", "cancelled"]);
    const again = await h.request("POST", `/v1/posts/${post.id}/cancel`, { token });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("post_not_cancellable");
  });

  test("retry: 409 nothing_to_retry until a target failed, then failed targets go again", async () => {
    const post = (await create({ content: "r", targets: [{ account_id: bsky }] })).body.data;
    const none = await h.request("POST", `/v1/posts/${post.id}/retry`, { token });
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe("nothing_to_retry");
    await setTargets(post.id, "failed");
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data.status).toBe("failed");
    const res = await h.request("POST", `/v1/posts/${post.id}/retry`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("queued");
    expect(res.body.data.targets[0]).toMatchObject({ status: "pending", error: null });
  });

  test("delete: 409 post_processing while a target is processing, then the record goes", async () => {
    const post = (await create({ content: "d", targets: [{ account_id: bsky }] })).body.data;
    await setTargets(post.id, "processing");
    const busy = await h.request("DELETE", `/v1/posts/${post.id}`, { token });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe("post_processing");
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).status).toBe(200);
    await setTargets(post.id, "published");
    const res = await h.request("DELETE", `/v1/posts/${post.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ deleted: true, id: post.id });
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).status).toBe(404);
    expect((await h.request("DELETE", `/v1/posts/${post.id}`, { token })).status).toBe(404);
  });
});

describe("one target", () => {
  test("read, cancel and retry one target; illegal moves are 409 and change nothing", async () => {
    const post = (
      await create({ content: "t", publish_at: later(), targets: [{ account_id: bsky }, { account_id: bsky2 }] })
    ).body.data;
    const [a, b] = post.targets.map((t: any) => t.target_post_id);
    const read = await h.request("GET", `/v1/posts/${post.id}/targets/${a}`, { token });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(post.targets[0]);

    const notFailed = await h.request("POST", `/v1/posts/${post.id}/targets/${a}/retry`, { token });
    expect(notFailed.status).toBe(409);
    expect(notFailed.body.error.code).toBe("target_not_retryable");

    const cancelled = await h.request("POST", `/v1/posts/${post.id}/targets/${a}/cancel`, { token });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe("cancelled");
    // The other target still waits, so the post is still scheduled.
    expect((await h.request("GET", `/v1/posts/${post.id}`, { token })).body.data.status).toBe("scheduled");
    const twice = await h.request("POST", `/v1/posts/${post.id}/targets/${a}/cancel`, { token });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("target_not_cancellable");

    await h.db.db
      .update(postTargets)
      .set({ status: "failed", error: "refused", errorCode: "platform_rejected" })
      .where(eq(postTargets.id, b));
    const retried = await h.request("POST", `/v1/posts/${post.id}/targets/${b}/retry`, { token });
    expect(retried.status).toBe(200);
    expect(retried.body.data).toMatchObject({ status: "pending", error: null, error_code: null });

    const elsewhere = (await create({ content: "x", targets: [{ account_id: bsky }] })).body.data;
    expect((await h.request("GET", `/v1/posts/${elsewhere.id}/targets/${a}`, { token })).status).toBe(404);
  });
});
