/**
 * Upgrades keep the data. For each earlier schema that held data in a new table or a changed shape, a
 * database is built by the numbered migrations up to that step, filled with plain SQL matching that step's
 * columns (a profile and its API key, accounts with encrypted credentials, media with its file, a draft,
 * posts with targets in every state, and from their steps workflows, webhook endpoints and deliveries,
 * sandbox state, users, lenient-handling columns, token ends). Then the current migrate() runs, the app
 * starts on it, and the data reads back through the API with the key made at that step; the engine's
 * claim takes the due target and hands over credentials that still decrypt.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { journal } from "../../migrations/index.ts";
import type { Db } from "../../src/db/client.ts";
import { decryptJson, encryptJson } from "../../src/db/crypto.ts";
import { migrate } from "../../src/db/migrate.ts";
import { loadConfig } from "../../src/config.ts";
import { withDefaults } from "../../src/domain/workflow-settings.ts";
import { claimDue } from "../../src/engine/claim.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { encodeMediaId } from "../../src/domain/media-ids.ts";
import { applyNumberedMigrations, emptyDatabase } from "../support/db.ts";
import { createHarness, TEST_SECRET_KEY, type Harness } from "../support/harness.ts";

// The steps an earlier version of Crier can have left a database at, where data-bearing tables appeared or
// changed shape (the steps between only added indexes, functions, triggers or bookkeeping tables):
const STEPS = [
  "0000_initial", // profiles, API keys, accounts, media, drafts, posts and targets
  "0006_workflows", // workflows, their sources and items, profile limits
  "0008_webhooks", // webhook endpoints, events, deliveries, attempts
  "0011_reconcile", // targets' reconcile columns; sandbox state kept per platform (0009)
  "0013_users_sessions", // dashboard users and their profiles
  "0023_upstream_compat", // lenient handling's fitted columns, account limits
  "0024_sandbox_state_per_profile", // sandbox state per profile
  "0025_account_credentials_expiry", // token ends: the last step before the function files
];

const secret = loadConfig({ DATA_DIR: "/nonexistent", SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: "silent" }).secretKey;
const index = (tag: string) => journal.entries.findIndex((e) => e.tag === tag);
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
    "1f15c4890000000d4944415478da63f8cfc0f01f0005000201a5e1ff8d0000000049454e44ae426082",
  "hex",
);

interface Filled {
  token: string;
  profileId: string;
  accounts: { alice: string; bob: string };
  credentials: Record<string, unknown>;
  mediaId: string;
  mediaKey: string;
  posts: { published: string; due: string; thread: string; cancelled: string };
  draftId: string;
  workflowId?: string;
  webhookId?: string;
}

/** What a Crier at `step` would have stored, written with that step's columns only. */
async function fill(db: Db, step: string): Promise<Filled> {
  const has = (tag: string) => index(tag) <= index(step);
  const run = (q: ReturnType<typeof sql>) => db.rows<Record<string, string>>(q);
  const [profile] = await run(sql`INSERT INTO profiles (name) VALUES ('upgraded') RETURNING id`);
  const [sandbox] = await run(sql`INSERT INTO profiles (name, sandbox) VALUES ('play', true) RETURNING id`);
  const token = `crier_live_${randomBytes(32).toString("base64url")}`;
  await run(sql`
    INSERT INTO api_keys (profile_id, name, prefix, hash, scopes)
    VALUES (${profile.id}::uuid, 'old key', ${token.slice(0, 15)},
      ${createHash("sha256").update(token).digest("hex")}, ${JSON.stringify(SCOPES)}::jsonb)`);
  const credentials = { accessJwt: "a-jwt", refreshJwt: "r-jwt", did: "did:plc:alice" };
  const [alice] = await run(sql`
    INSERT INTO accounts (profile_id, platform, remote_id, username, avatar_url, credentials, metadata)
    VALUES (${profile.id}::uuid, 'bluesky', 'did:plc:alice', 'alice.bsky.social', 'https://cdn.example/a.png',
      ${encryptJson(secret, credentials)}, '{"pds":"https://pds.example"}'::jsonb)
    RETURNING id`);
  const [bob] = await run(sql`
    INSERT INTO accounts (profile_id, platform, remote_id, username, status, credentials)
    VALUES (${profile.id}::uuid, 'twitter', '109', 'bob_x', 'auth_required',
      ${encryptJson(secret, { access_token: "x-token" })})
    RETURNING id`);
  await run(sql`
    INSERT INTO accounts (profile_id, platform, remote_id, username, credentials)
    VALUES (${sandbox.id}::uuid, 'telegram', '-100', 'play-channel', ${encryptJson(secret, { chat: "-100" })})`);
  if (has("0025_account_credentials_expiry"))
    await run(sql`UPDATE accounts SET credentials_expire_at = now() + interval '50 days' WHERE id = ${alice.id}::uuid`);

  const mediaUuid = randomUUID();
  const mediaKey = `${encodeMediaId(mediaUuid)}.png`;
  await run(sql`
    INSERT INTO media (id, profile_id, filename, content_type, path, status, size_bytes, max_bytes, width, height,
      expires_at, uploaded_at)
    VALUES (${mediaUuid}::uuid, ${profile.id}::uuid, 'dot.png', 'image/png', ${mediaKey}, 'uploaded', ${PNG.length},
      10485760, 1, 1, now() + interval '1 day', now())`);
  const [draft] = await run(sql`
    INSERT INTO drafts (profile_id, content, candidate_angle, selected_account_ids)
    VALUES (${profile.id}::uuid, 'a draft from before', 'the angle', ${JSON.stringify([alice.id])}::jsonb)
    RETURNING id`);

  const post = async (content: string, publishAt: string | null) =>
    (
      await run(sql`
        INSERT INTO posts (profile_id, content, media, publish_at)
        VALUES (${profile.id}::uuid, ${content},
          ${JSON.stringify([{ url: `https://media.example/${mediaKey}`, type: "image" }])}::jsonb,
          ${publishAt}::timestamptz)
        RETURNING id`)
    )[0].id;
  const target = (postId: string, account: string, platform: string, fields: ReturnType<typeof sql>) =>
    run(sql`
      INSERT INTO post_targets (post_id, profile_id, account_id, platform, position, status, error, error_code,
        platform_post_id, platform_post_url, scheduled_time, due_at, attempts, published_at)
      SELECT ${postId}::uuid, ${profile.id}::uuid, ${account}::uuid, ${platform}, f.* FROM (${fields}) f`);
  const published = await post("published before the upgrade", null);
  await target(
    published,
    alice.id,
    "bluesky",
    sql`SELECT 0, 'published', NULL, NULL, 'at://did:plc:alice/app.bsky.feed.post/3k', 'https://bsky.app/p/3k',
      NULL::timestamptz, now() - interval '2 days', 1, now() - interval '2 days'`,
  );
  const due = await post("due while the server was down", new Date(Date.now() - 60_000).toISOString());
  await target(
    due,
    alice.id,
    "bluesky",
    sql`SELECT 0, 'scheduled', NULL, NULL, NULL, NULL, now() - interval '1 minute', now() - interval '1 minute', 0,
      NULL::timestamptz`,
  );
  const thread = await post("a thread whose first item failed", null);
  await target(
    thread,
    alice.id,
    "bluesky",
    sql`SELECT 0, 'failed', 'The platform refused the text.', 'platform_rejected', NULL, NULL, NULL::timestamptz,
      now() - interval '1 hour', 1, NULL::timestamptz`,
  );
  await target(
    thread,
    alice.id,
    "bluesky",
    sql`SELECT 1, 'pending', NULL, NULL, NULL, NULL, NULL::timestamptz, now() - interval '1 hour', 0, NULL::timestamptz`,
  );
  const cancelled = await post("cancelled", new Date(Date.now() + 86_400_000).toISOString());
  await target(
    cancelled,
    bob.id,
    "twitter",
    sql`SELECT 0, 'cancelled', NULL, NULL, NULL, NULL, now() + interval '1 day', NULL::timestamptz, 0,
      NULL::timestamptz`,
  );
  if (has("0011_reconcile"))
    await run(sql`
      UPDATE post_targets SET reconcile_retried = true, reconcile_since = now() - interval '1 hour'
      WHERE post_id = ${thread}::uuid AND position = 0`);
  if (has("0023_upstream_compat"))
    await run(sql`
      UPDATE post_targets SET fitted_content = 'due while the server…', adjustments = '[]'::jsonb
      WHERE post_id = ${due}::uuid`);

  const filled: Filled = {
    token,
    profileId: profile.id,
    accounts: { alice: alice.id, bob: bob.id },
    credentials,
    mediaId: encodeMediaId(mediaUuid),
    mediaKey,
    posts: { published, due, thread, cancelled },
    draftId: draft.id,
  };

  if (has("0006_workflows")) {
    const [workflow] = await run(sql`
      INSERT INTO workflows (profile_id, name, description, source_account_id, target_account_ids, settings,
        is_active, last_checked)
      VALUES (${profile.id}::uuid, 'copy alice', 'to bob', ${alice.id}::uuid, ${JSON.stringify([bob.id])}::jsonb,
        ${JSON.stringify(withDefaults(undefined))}::jsonb, true, now() - interval '5 minutes')
      RETURNING id`);
    const [source] = await run(sql`
      INSERT INTO workflow_sources (workflow_id, source_item_id, source_url, kind, content, published_at)
      VALUES (${workflow.id}::uuid, '3k', 'https://bsky.app/p/3k', 'text', 'published before the upgrade',
        now() - interval '2 days')
      RETURNING id`);
    await run(sql`
      INSERT INTO workflow_items (source_id, workflow_id, profile_id, account_id, status, slot_at, caption)
      VALUES (${source.id}::uuid, ${workflow.id}::uuid, ${profile.id}::uuid, ${bob.id}::uuid, 'queued',
        now() + interval '1 hour', 'copied caption')`);
    await run(sql`INSERT INTO profile_limits (profile_id, workflows) VALUES (${profile.id}::uuid, 5)`);
    filled.workflowId = workflow.id;
  }
  if (has("0008_webhooks")) {
    const [endpoint] = await run(sql`
      INSERT INTO webhook_endpoints (profile_id, url, events, description, secrets)
      VALUES (${profile.id}::uuid, 'https://hooks.example/crier', ARRAY['post.published', 'target.failed'],
        'from before', ${encryptJson(secret, { current: `whsec_${randomBytes(24).toString("base64")}` })})
      RETURNING id`);
    const [event] = await run(sql`
      INSERT INTO webhook_events (profile_id, type, payload)
      VALUES (${profile.id}::uuid, 'post.published', '{"type":"post.published","data":{}}'::jsonb) RETURNING id`);
    const [delivery] = await run(sql`
      INSERT INTO webhook_deliveries (event_id, endpoint_id, profile_id, event_type, status, attempts, delivered_at,
        last_status_code)
      VALUES (${event.id}::uuid, ${endpoint.id}::uuid, ${profile.id}::uuid, 'post.published', 'delivered', 1, now(),
        204)
      RETURNING id`);
    await run(sql`
      INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, duration_ms)
      VALUES (${delivery.id}::uuid, now(), 204, 12)`);
    filled.webhookId = endpoint.id;
  }
  if (has("0009_sandbox_state") && !has("0024_sandbox_state_per_profile"))
    await run(sql`INSERT INTO sandbox_state (platform, version, state) VALUES ('telegram', 4, 'shared-doc')`);
  if (has("0024_sandbox_state_per_profile"))
    await run(sql`
      INSERT INTO sandbox_state (profile_id, platform, version, state)
      VALUES (${sandbox.id}::uuid, 'telegram', 4, 'shared-doc')`);
  if (has("0013_users_sessions")) {
    const [user] = await run(sql`INSERT INTO users (email) VALUES ('owner@example.org') RETURNING id`);
    await run(sql`INSERT INTO user_profiles (user_id, profile_id) VALUES (${user.id}::uuid, ${profile.id}::uuid)`);
  }
  return filled;
}

const opened: Harness[] = [];
afterAll(async () => {
  for (const h of opened) await h.close();
});

describe.each(STEPS)("a database left at %s", (step) => {
  test("keeps its data through the upgrade, readable through the API", async () => {
    const db = await emptyDatabase();
    let h: Harness | undefined;
    try {
      await applyNumberedMigrations(db, step);
      const filled = await fill(db, step);
      await migrate(db);
      h = await createHarness({}, {}, { database: db });
      opened.push(h);
      const { token } = filled;
      mkdirSync(join(h.ctx.config.dataDir, "media"), { recursive: true });
      writeFileSync(join(h.ctx.config.dataDir, "media", filled.mediaKey), PNG);

      const accounts = await h.request("GET", "/v1/accounts", { token });
      expect(accounts.status).toBe(200);
      const byId = new Map(accounts.body.data.map((a: { id: string }) => [a.id, a]));
      expect(byId.get(filled.accounts.alice)).toMatchObject({
        platform: "bluesky",
        username: "alice.bsky.social",
        status: "active",
      });
      expect(byId.get(filled.accounts.bob)).toMatchObject({ platform: "twitter", status: "auth_required" });
      expect(accounts.body.data).toHaveLength(2); // not the sandbox profile's

      const posts = await h.request("GET", "/v1/posts?limit=50", { token });
      expect(posts.status).toBe(200);
      const post = (id: string) => posts.body.data.find((p: { id: string }) => p.id === id);
      expect(posts.body.data).toHaveLength(4);
      // Posts made before recurring posts (0029) belong to no series.
      expect(posts.body.data.map((p: { series_id: unknown }) => p.series_id)).toEqual([null, null, null, null]);
      expect(post(filled.posts.published)).toMatchObject({
        status: "published",
        content: "published before the upgrade",
        media: [{ url: `https://media.example/${filled.mediaKey}` }],
        targets: [
          {
            status: "published",
            platform_post_id: "at://did:plc:alice/app.bsky.feed.post/3k",
            platform_post_url: "https://bsky.app/p/3k",
            username: "alice.bsky.social",
            attempts: 1,
          },
        ],
      });
      expect(post(filled.posts.due)).toMatchObject({ status: "scheduled", targets: [{ status: "scheduled" }] });
      expect(post(filled.posts.thread).targets).toMatchObject([
        { status: "failed", error_code: "platform_rejected", error: "The platform refused the text." },
        { status: "pending" },
      ]);
      expect(post(filled.posts.cancelled)).toMatchObject({ status: "cancelled", targets: [{ platform: "twitter" }] });

      const drafts = await h.request("GET", "/v1/drafts", { token });
      expect(drafts.status).toBe(200);
      expect(drafts.body.data).toMatchObject([{ id: filled.draftId, content: "a draft from before" }]);

      const media = await h.request("GET", `/v1/media/${filled.mediaId}`, { token });
      expect(media.status).toBe(200);
      expect(media.body.data).toMatchObject({
        id: filled.mediaId,
        path: filled.mediaKey,
        content_type: "image/png",
        size: PNG.length,
        width: 1,
        height: 1,
      });

      const workflows = await h.request("GET", "/v1/workflows", { token });
      expect(workflows.status).toBe(200);
      if (filled.workflowId) {
        expect(workflows.body.data).toMatchObject([
          { id: filled.workflowId, name: "copy alice", source_account_id: filled.accounts.alice, is_active: true },
        ]);
        const items = await h.request("GET", `/v1/workflows/${filled.workflowId}/items`, { token });
        expect(items.status).toBe(200);
        expect(JSON.stringify(items.body.data)).toContain("copied caption");
      } else expect(workflows.body.data).toEqual([]);

      const webhooks = await h.request("GET", "/v1/webhooks", { token });
      expect(webhooks.status).toBe(200);
      if (filled.webhookId)
        expect(webhooks.body.data).toMatchObject([
          { id: filled.webhookId, url: "https://hooks.example/crier", events: ["post.published", "target.failed"] },
        ]);
      else expect(webhooks.body.data).toEqual([]);

      if (index(step) >= index("0009_sandbox_state")) {
        // The sandbox profile's emulator state is its own now (copied from the shared document at 0024).
        const states = await db.rows<{ state: string }>(sql`
          SELECT s.state FROM sandbox_state s JOIN profiles p ON p.id = s.profile_id WHERE p.name = 'play'`);
        expect(states).toEqual([{ state: "shared-doc" }]);
      }

      if (index(step) >= index("0013_users_sessions")) {
        const users = await db.rows<{ email: string; profile_id: string; can_create_profiles: boolean }>(sql`
          SELECT u.email, l.profile_id, u.can_create_profiles FROM users u JOIN user_profiles l ON l.user_id = u.id`);
        expect(users).toEqual([
          { email: "owner@example.org", profile_id: filled.profileId, can_create_profiles: false },
        ]);
      }

      // The engine claims the due target (not the thread item whose first item failed) and gets
      // credentials that still decrypt with the server's key.
      const now = new Date();
      const claimed = await claimDue(db, {
        now,
        leaseUntil: new Date(now.getTime() + 60_000),
        claimedBy: "upgrade-test",
        caps: { bluesky: 4, twitter: 4 },
        limit: 8,
        busyAccounts: [],
      });
      expect(claimed.map((c) => c.postId)).toEqual([filled.posts.due]);
      expect(claimed[0].job?.content).toBe("due while the server was down");
      const stored = claimed[0].job!.account.credentials as string;
      expect(decryptJson(secret, stored)).toEqual(filled.credentials);
      const after = await h.request("GET", `/v1/posts/${filled.posts.due}`, { token });
      expect(after.body.data).toMatchObject({ status: "processing", targets: [{ status: "processing" }] });
    } finally {
      if (!h) await db.close();
    }
  }, 120_000);
});
