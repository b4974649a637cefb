/** The workflows API: every rule of WorkflowSettings, the account checks, the limit, scopes and foreign ids. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { setWorkflowLimit } from "../../../src/modules/workflows/service.ts";
import { workflowHarness, type WorkflowHarness } from "../../support/workflow-kit.ts";

let h: WorkflowHarness;
const acc: Record<string, string> = {};

beforeAll(async () => {
  h = await workflowHarness();
  acc.bluesky = await h.connect("bluesky", { handle: "api-source.test" });
  acc.telegram = await h.connect("telegram", { channel: "@wf_api" });
  for (const p of ["threads", "twitter", "snapchat", "instagram", "reddit"]) acc[p] = await h.connect(p);
});
afterAll(() => h.stop());

const base = () => ({
  name: "wf",
  source_account_id: acc.bluesky,
  target_account_ids: [acc.telegram, acc.threads],
  is_active: false,
});
const create = (body: unknown, token = h.token, headers?: Record<string, string>) =>
  h.request("POST", "/v1/workflows", { token, body, headers });
const withDest = (id: string, d: unknown, extra: Record<string, unknown> = {}) =>
  create({
    ...base(),
    target_account_ids: [...new Set([acc.telegram, acc.threads, id])],
    ...extra,
    settings: { destination_publish_settings: { [id]: d } },
  });

async function refused(res: Promise<{ status: number; body: any }>, field: string, code = "validation_error") {
  const r = await res;
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe(code);
  expect(r.body.error.message).toContain(field);
  expect(r.body.error.hint).toBeString();
}

describe("create", () => {
  test("201 with every default filled in; last_enabled_at set when active", async () => {
    const res = await create({
      ...base(),
      is_active: true,
      settings: { destination_publish_settings: { [acc.threads]: { threads: {} }, [acc.snapchat]: undefined } },
    });
    expect(res.status).toBe(201);
    const w = res.body.data;
    expect(w).toMatchObject({
      name: "wf",
      description: null,
      is_active: true,
      future_content_enabled: true,
      last_checked: null,
    });
    expect(w.last_enabled_at).toBe(h.clock.now().toISOString());
    expect(w.settings.content_filters).toEqual({
      types: { text: true, image: true, quote: true, video: true },
      hashtags: { include: [], exclude: [] },
    });
    expect(w.settings.platform_settings).toEqual({ tiktok: { keep_source_thumbnail: true } });
    expect(w.settings.destination_publish_settings[acc.threads]).toEqual({
      caption_position: "after",
      remove_comment_dm_prompts: false,
      adapt_caption: false,
      threads: { caption_max_length: 500 },
    });
    const inactive = await create(base());
    expect(inactive.body.data.last_enabled_at).toBeNull();
  });

  test("Idempotency-Key: same body replays, another body is 409", async () => {
    const headers = { "idempotency-key": "wf-once" };
    const a = await create(base(), h.token, headers);
    const b = await create(base(), h.token, headers);
    expect(b.status).toBe(201);
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect((await create({ ...base(), name: "other" }, h.token, headers)).status).toBe(409);
  });

  test("source and target accounts are checked", async () => {
    await refused(
      create({ ...base(), source_account_id: acc.telegram, target_account_ids: [acc.threads] }),
      "telegram",
      "source_not_supported",
    );
    await refused(
      create({ ...base(), source_account_id: crypto.randomUUID() }),
      "source_account_id",
      "source_account_not_found",
    );
    await refused(
      create({ ...base(), target_account_ids: [acc.bluesky] }),
      "target_account_ids[0]",
      "target_is_source",
    );
    await refused(
      create({ ...base(), target_account_ids: [acc.telegram, crypto.randomUUID()] }),
      "target_account_ids[1]",
      "target_account_not_found",
    );
    await refused(create({ ...base(), target_account_ids: [] }), "target_account_ids");
    await refused(create({ ...base(), target_account_ids: [acc.telegram, acc.telegram] }), "target_account_ids");
    await refused(create({ ...base(), name: "" }), "name");
    await refused(create({ ...base(), name: "n".repeat(201) }), "name");
    await refused(create({ ...base(), is_active: undefined }), "is_active");
    await refused(create({ ...base(), colour: "red" }), "colour");
    await h.db.db.execute(sql`update accounts set status = 'auth_required' where id = ${acc.instagram}::uuid`);
    await refused(
      create({ ...base(), target_account_ids: [acc.instagram] }),
      "target_account_ids[0]",
      "target_account_inactive",
    );
    await h.db.db.execute(sql`update accounts set status = 'active' where id = ${acc.instagram}::uuid`);
  });
});

describe("every rule of the WorkflowSettings table is a 400 naming the field", () => {
  const t = () => acc.threads;
  const cases: [string, () => Promise<{ status: number; body: any }>, string][] = [
    [
      "content_filters.types not boolean",
      () => create({ ...base(), settings: { content_filters: { types: { text: "yes" } } } }),
      "settings.content_filters.types.text",
    ],
    [
      "content_filters.types unknown kind",
      () => create({ ...base(), settings: { content_filters: { types: { story: true } } } }),
      "settings.content_filters.types",
    ],
    [
      "hashtags include not an array",
      () => create({ ...base(), settings: { content_filters: { hashtags: { include: "#a" } } } }),
      "settings.content_filters.hashtags.include",
    ],
    [
      "hashtags exclude of non-strings",
      () => create({ ...base(), settings: { content_filters: { hashtags: { exclude: [1] } } } }),
      "settings.content_filters.hashtags.exclude",
    ],
    [
      "tiktok keep_source_thumbnail not boolean",
      () => create({ ...base(), settings: { platform_settings: { tiktok: { keep_source_thumbnail: "no" } } } }),
      "settings.platform_settings.tiktok.keep_source_thumbnail",
    ],
    [
      "destination key that is not a target",
      () => create({ ...base(), settings: { destination_publish_settings: { [acc.twitter]: {} } } }),
      "is not one of target_account_ids",
    ],
    ["minimum_interval_minutes 0", () => withDest(t(), { minimum_interval_minutes: 0 }), "minimum_interval_minutes"],
    [
      "minimum_interval_minutes not an integer",
      () => withDest(t(), { minimum_interval_minutes: 1.5 }),
      "minimum_interval_minutes",
    ],
    ["caption_position", () => withDest(t(), { caption_position: "middle" }), "caption_position"],
    [
      "remove_comment_dm_prompts not boolean",
      () => withDest(t(), { remove_comment_dm_prompts: 1 }),
      "remove_comment_dm_prompts",
    ],
    [
      "remove_comment_dm_prompts on telegram",
      () => withDest(acc.telegram, { remove_comment_dm_prompts: true }),
      "remove_comment_dm_prompts",
    ],
    ["adapt_caption without AI configured", () => withDest(t(), { adapt_caption: true }), "adapt_caption"],
    ["adapt_caption on telegram", () => withDest(acc.telegram, { adapt_caption: true }), "adapt_caption"],
    [
      "adapt_caption_instructions over 1000",
      () => withDest(t(), { adapt_caption_instructions: "i".repeat(1001) }),
      "adapt_caption_instructions",
    ],
    ["caption_ending over 2000", () => withDest(t(), { caption_ending: "e".repeat(2001) }), "caption_ending"],
    ["caption_ending on telegram", () => withDest(acc.telegram, { caption_ending: "bye" }), "caption_ending"],
    [
      "caption_ending on snapchat",
      () => withDest(acc.snapchat, { caption_ending: "bye", snapchat: { publish_targets: ["spotlight"] } }),
      "caption_ending",
    ],
    ["snapchat publish_targets missing", () => withDest(acc.snapchat, { snapchat: {} }), "snapchat.publish_targets"],
    [
      "snapchat publish_targets empty",
      () => withDest(acc.snapchat, { snapchat: { publish_targets: [] } }),
      "snapchat.publish_targets",
    ],
    [
      "snapchat publish_targets repeated",
      () => withDest(acc.snapchat, { snapchat: { publish_targets: ["spotlight", "spotlight"] } }),
      "snapchat.publish_targets",
    ],
    [
      "snapchat publish_targets unknown",
      () => withDest(acc.snapchat, { snapchat: { publish_targets: ["feed"] } }),
      "snapchat.publish_targets",
    ],
    [
      "snapchat locale",
      () => withDest(acc.snapchat, { snapchat: { publish_targets: ["spotlight"], locale: "en-us" } }),
      "snapchat.locale",
    ],
    ["snapchat block on threads", () => withDest(t(), { snapchat: { publish_targets: ["spotlight"] } }), "snapchat"],
    [
      "threads caption_max_length 0",
      () => withDest(t(), { threads: { caption_max_length: 0 } }),
      "threads.caption_max_length",
    ],
    [
      "threads caption_max_length 501",
      () => withDest(t(), { threads: { caption_max_length: 501 } }),
      "threads.caption_max_length",
    ],
    ["instagram block empty", () => withDest(acc.instagram, { instagram: {} }), "instagram"],
    [
      "instagram remove_mentions not boolean",
      () => withDest(acc.instagram, { instagram: { remove_mentions: "yes" } }),
      "instagram.remove_mentions",
    ],
    ["reddit subreddit missing", () => withDest(acc.reddit, { reddit: {} }), "reddit.subreddit"],
    ["reddit block missing on a reddit destination", () => withDest(acc.reddit, {}), "reddit"],
    [
      "reddit post_type",
      () => withDest(acc.reddit, { reddit: { subreddit: "crier", post_type: "poll" } }),
      "reddit.post_type",
    ],
    [
      "reddit nsfw not boolean",
      () => withDest(acc.reddit, { reddit: { subreddit: "crier", nsfw: "no" } }),
      "reddit.nsfw",
    ],
    ["unknown destination setting", () => withDest(t(), { colour: "red" }), "colour"],
  ];
  for (const [name, run, field] of cases) test(name, () => refused(run(), field));

  test("valid platform blocks are accepted with their defaults", async () => {
    const res = await create({
      ...base(),
      target_account_ids: [acc.snapchat, acc.instagram, acc.reddit, acc.threads],
      settings: {
        destination_publish_settings: {
          [acc.snapchat]: { snapchat: { publish_targets: ["spotlight", "public_story"] } },
          [acc.instagram]: { instagram: { remove_mentions: true }, caption_ending: "" },
          [acc.reddit]: { reddit: { subreddit: "crier" } },
          [acc.threads]: {
            minimum_interval_minutes: 1,
            caption_ending: "e".repeat(2000),
            adapt_caption_instructions: "i".repeat(1000),
          },
        },
      },
    });
    expect(res.status).toBe(201);
    const d = res.body.data.settings.destination_publish_settings;
    expect(d[acc.snapchat].snapchat).toEqual({ publish_targets: ["spotlight", "public_story"], locale: "en_US" });
    expect(d[acc.instagram].instagram).toEqual({ publish_as_trial_reel: false, remove_mentions: true });
    expect(d[acc.reddit].reddit).toEqual({
      subreddit: "crier",
      post_type: "auto",
      nsfw: false,
      spoiler: false,
      send_replies: true,
    });
  });
});

describe("read, update, delete", () => {
  test("list, read, patch (revalidated; turning on sets last_enabled_at), delete", async () => {
    const w = (await create({ ...base(), name: "lifecycle" })).body.data;
    const list = await h.request("GET", "/v1/workflows?limit=100", { token: h.token });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: any) => x.id)).toContain(w.id);
    expect(list.body.meta).toMatchObject({ has_more: false });
    expect((await h.request("GET", `/v1/workflows/${w.id}`, { token: h.token })).body.data).toEqual(w);
    h.clock.advance(5000);
    const on = await h.request("PATCH", `/v1/workflows/${w.id}`, {
      token: h.token,
      body: { is_active: true, name: "renamed" },
    });
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({
      is_active: true,
      name: "renamed",
      last_enabled_at: h.clock.now().toISOString(),
    });
    await refused(
      h.request("PATCH", `/v1/workflows/${w.id}`, {
        token: h.token,
        body: { settings: { destination_publish_settings: { [acc.twitter]: {} } } },
      }),
      "destination_publish_settings",
    );
    await refused(
      h.request("PATCH", `/v1/workflows/${w.id}`, { token: h.token, body: { target_account_ids: [acc.bluesky] } }),
      "target_account_ids[0]",
      "target_is_source",
    );
    expect((await h.request("GET", `/v1/workflows/${w.id}`, { token: h.token })).body.data.name).toBe("renamed");
    const del = await h.request("DELETE", `/v1/workflows/${w.id}`, { token: h.token });
    expect(del.body.data).toEqual({
      deleted: true,
      id: w.id,
      provider_revocation_required: null,
      provider_revocation_url: null,
      message: expect.any(String),
    });
    expect((await h.request("GET", `/v1/workflows/${w.id}`, { token: h.token })).status).toBe(404);
  });
});

describe("list order", () => {
  test("the most recently updated first: editing an older workflow moves it to the front", async () => {
    const older = (await create({ ...base(), name: "older" })).body.data;
    h.clock.advance(1000);
    const newer = (await create({ ...base(), name: "newer" })).body.data;
    const ours = async () =>
      (await h.request("GET", "/v1/workflows?limit=100", { token: h.token })).body.data
        .map((x: { id: string }) => x.id)
        .filter((id: string) => id === older.id || id === newer.id);
    expect(await ours()).toEqual([newer.id, older.id]);
    h.clock.advance(1000);
    expect(
      (await h.request("PATCH", `/v1/workflows/${older.id}`, { token: h.token, body: { name: "older, renamed" } }))
        .status,
    ).toBe(200);
    expect(await ours()).toEqual([older.id, newer.id]);
    for (const w of [older, newer]) await h.request("DELETE", `/v1/workflows/${w.id}`, { token: h.token });
  });
});

describe("limit", () => {
  test("403 workflow_limit_reached with the limit in the message; unlimited clears it", async () => {
    const count = (
      await h.db.rows<{ n: number }>(
        sql`select count(*)::int as n from workflows where profile_id = ${h.profileId}::uuid`,
      )
    )[0].n;
    await setWorkflowLimit(h.db.db, h.profileId, count + 1);
    expect((await create(base())).status).toBe(201);
    const over = await create(base());
    expect(over.status).toBe(403);
    expect(over.body.error.code).toBe("workflow_limit_reached");
    expect(over.body.error.message).toContain(String(count + 1));
    await setWorkflowLimit(h.db.db, h.profileId, null);
    expect((await create(base())).status).toBe(201);
  });
});

describe("scopes and other profiles", () => {
  test("every route needs its scope; another profile's workflow is 404 on every route", async () => {
    const w = (await create(base())).body.data;
    const id = w.id;
    const routes: [string, string, "workflows:read" | "workflows:write", unknown?][] = [
      ["POST", "/v1/workflows", "workflows:write", base()],
      ["GET", "/v1/workflows", "workflows:read"],
      ["GET", `/v1/workflows/${id}`, "workflows:read"],
      ["PATCH", `/v1/workflows/${id}`, "workflows:write", { name: "x" }],
      ["DELETE", `/v1/workflows/${id}`, "workflows:write"],
      ["POST", `/v1/workflows/${id}/check`, "workflows:write"],
      ["GET", `/v1/workflows/${id}/items`, "workflows:read"],
    ];
    const readOnly = await h.profile({ sandbox: true, scopes: ["workflows:read"] });
    const writeOnly = await h.profile({ sandbox: true, scopes: ["workflows:write"] });
    const stranger = await h.profile({ sandbox: true });
    for (const [method, path, scope, body] of routes) {
      const wrong = scope === "workflows:read" ? writeOnly.token : readOnly.token;
      const res = await h.request(method, path, { token: wrong, body });
      expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 403, "missing_scope"]);
      expect((await h.request(method, path, { body })).status).toBe(401);
      if (path !== "/v1/workflows") {
        const foreign = await h.request(method, path, { token: stranger.token, body });
        expect([method, path, foreign.status, foreign.body.error.code]).toEqual([method, path, 404, "not_found"]);
      }
    }
    expect((await h.request("GET", "/v1/workflows", { token: stranger.token })).body.data).toEqual([]);
    expect((await h.request("GET", `/v1/workflows/${id}`, { token: h.token })).body.data.name).toBe(w.name);
  });
});
