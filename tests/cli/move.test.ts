/**
 * `crier move`: an embedded installation (PGlite and media files in DATA_DIR) with 10,000 published posts,
 * scheduled ones, uploaded media, a Bluesky account with encrypted credentials, a workflow and a webhook,
 * moved into a fresh PostgreSQL database and an s3rver bucket. A server on PostgreSQL + S3 with the same
 * SECRET_KEY then publishes the scheduled posts exactly once (the Bluesky emulator counts), their media
 * come from the bucket, and the old DATA_DIR no longer starts an engine. Needs PostgreSQL always.
 */
import { ownMediaOf } from "../../src/media/own.ts";
import { factsOf, renditionOf } from "../../src/media/renditions.ts";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { openDatabase, type Db } from "../../src/db/client.ts";
import { migrate } from "../../src/db/migrate.ts";
import { createLogger } from "../../src/log.ts";
import { createStorage } from "../../src/storage/index.ts";
import { createRegistry } from "../../src/platform/host/registry.ts";
import { accountCredentials } from "../../src/modules/accounts/service.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import type { AppContext } from "../../src/context.ts";
import { systemClock } from "../../src/clock.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createBlueskyEmulator, type BlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import { runCli, startServe, type ServeProcess } from "../support/cli.ts";
import { startS3 } from "../support/s3.ts";
import { startReceiver, type Receiver } from "../support/webhook-receiver.ts";
import { makePng } from "../support/media-fixtures.ts";
import { until } from "../support/until.ts";

const BASE = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const CLONES = 10_000;
const SCHEDULED = 5;
const SECRET_KEY = "move-test-secret-key-0123456789abcdef";

let emulator: BlueskyEmulator;
let served: ServedEmulator;
let s3: Awaited<ReturnType<typeof startS3>>;
let receiver: Receiver;
const databases: string[] = [];
const servers: ServeProcess[] = [];
let dataDir: string;
let oldEnv: Record<string, string>;
let token: string;
let profileId: string;
let accountId: string;
let secondId: string;

async function freshDatabase(): Promise<string> {
  const name = `crier_move_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(BASE, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  databases.push(name);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  return url.toString();
}

async function api(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** The embedded database opened in this process, with what a connect needs, while no server runs on it. */
async function withEmbedded<T>(run: (ctx: AppContext, db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig({ ...oldEnv, LOG_LEVEL: "silent" });
  const db = await openDatabase({ dataDir: config.dataDir });
  try {
    await migrate(db);
    const ctx: AppContext = {
      config,
      db,
      clock: systemClock,
      log: createLogger("silent"),
      platforms: createRegistry(),
      storage: createStorage(config),
      credentials: accountCredentials({ db, config, clock: systemClock }),
    };
    return await run(ctx, db);
  } finally {
    await db.close();
  }
}

beforeAll(async () => {
  emulator = createBlueskyEmulator();
  served = serveEmulator(emulator);
  s3 = await startS3();
  receiver = startReceiver();
  dataDir = mkdtempSync(join(tmpdir(), "crier-move-"));
  oldEnv = {
    DATA_DIR: dataDir,
    SECRET_KEY,
    PUBLIC_URL: "http://127.0.0.1:1", // replaced once the old server knows its port
    CRIER_BLUESKY_API_URL: served.url,
    WEBHOOK_ALLOW_PRIVATE: "true",
  };
}, 60_000);

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => {});
  await served?.stop();
  await s3?.stop();
  await receiver?.stop();
  const admin = postgres(BASE, { max: 1, onnotice: () => {} });
  for (const name of databases) await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

/** A port free now, so PUBLIC_URL can name the old server's address before it starts. */
async function freePort() {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port;
  await probe.stop(true);
  return port;
}

test("an embedded installation with 10,000 posts and media moves to PostgreSQL and S3, and its scheduled posts publish once", async () => {
  const oldPort = await freePort();
  oldEnv.PUBLIC_URL = `http://127.0.0.1:${oldPort}`;
  oldEnv.PORT = String(oldPort);

  // The installation: a profile, a key, a Bluesky account whose credentials are encrypted with SECRET_KEY.
  await withEmbedded(async (ctx, db) => {
    const p = await createProfile(db, "main", false);
    profileId = p.id;
    token = (await createKey(db, { name: "k", profileId, scopes: [...SCOPES] })).token;
    accountId = await connectBluesky(ctx, profileId, "alice.test");
    secondId = await connectBluesky(ctx, profileId, "bob.test");
  });

  // The old server (embedded, engine on): media uploaded to files, posts published, a webhook, a workflow.
  const old = await startServe(oldEnv);
  servers.push(old);
  const png = makePng(4, 3);
  const ticket = await api(old.url, "POST", "/v1/media/uploads", { filename: "a.png", content_type: "image/png" });
  expect(ticket.status).toBe(201);
  const put = await fetch(ticket.body.data.upload.signedUrl, {
    method: "PUT",
    headers: { "content-type": "image/png" },
    body: png,
  });
  expect(put.status).toBe(200);
  const mediaUrl = (await api(old.url, "GET", `/v1/media/${ticket.body.data.media_id}`)).body.data.public_url;
  expect(mediaUrl).toBe(`${oldEnv.PUBLIC_URL}/media/${ticket.body.data.path}`);

  const hook = await api(old.url, "POST", "/v1/webhooks", {
    url: receiver.url,
    events: ["post.created", "post.published"],
  });
  expect(hook.status).toBe(201);
  const wf = await api(old.url, "POST", "/v1/workflows", {
    name: "mirror",
    source_account_id: accountId,
    target_account_ids: [secondId],
    is_active: false,
  });
  expect([200, 201], JSON.stringify(wf.body)).toContain(wf.status);

  const now = await api(old.url, "POST", "/v1/posts", {
    content: "published before the move",
    media: [{ url: mediaUrl }],
    targets: [{ account_id: accountId }],
  });
  expect(now.status).toBe(201);
  await until(
    "the first post published",
    async () =>
      (await api(old.url, "GET", `/v1/posts/${now.body.data.id}`)).body.data.status === "published" || undefined,
    20,
  );

  await old.stop();

  // A converted copy of the media (as a platform taking only JPEG gets it): it moves with its original.
  const converted = await withEmbedded(async (ctx) => {
    const [own] = await ownMediaOf({ db: ctx.db.db, storage: ctx.storage }, profileId, [mediaUrl]);
    const r = await renditionOf(ctx, own!, (await factsOf(ctx, own!))!, {
      contentType: "image/jpeg",
      stripMetadata: true,
    });
    return {
      key: r.key,
      bytes: new Uint8Array(await new Response((await ctx.storage.open(r.key))!.stream()).arrayBuffer()),
    };
  });

  // 10,000 more published posts like the first, written straight into the embedded database (test data:
  // the webhook triggers stay quiet for them).
  await withEmbedded(async (_ctx, db) => {
    await db.rows(sql`set session_replication_role = replica`);
    await db.rows(sql`create temp table clone as
        select ${now.body.data.id}::uuid as old, gen_random_uuid() as new, i from generate_series(1, ${CLONES}) i`);
    await db.rows(sql`insert into posts select (jsonb_populate_record(null::posts, to_jsonb(p) ||
        jsonb_build_object('id', c.new, 'content', p.content || ' #' || c.i))).* from posts p join clone c on c.old = p.id`);
    await db.rows(sql`insert into post_targets select (jsonb_populate_record(null::post_targets, to_jsonb(t) ||
        jsonb_build_object('id', gen_random_uuid(), 'post_id', c.new, 'platform_post_id', t.platform_post_id || '-' || c.i))).*
        from post_targets t join clone c on c.old = t.post_id`);
    await db.rows(sql`set session_replication_role = origin`);
  });
  // Scheduled with media, due shortly: the old server stops at once, so only the new home can publish them
  // (late, should the move take longer than that, but once).
  const again = await startServe(oldEnv);
  servers.push(again);
  const publishAt = new Date(Date.now() + 20_000);
  publishAt.setMilliseconds(123);
  const scheduled: string[] = [];
  for (let i = 0; i < SCHEDULED; i++) {
    const r = await api(again.url, "POST", "/v1/posts", {
      content: `scheduled ${i}`,
      media: [{ url: mediaUrl }],
      publish_at: publishAt.toISOString(),
      targets: [{ account_id: accountId }],
    });
    expect(r.status).toBe(201);
    scheduled.push(r.body.data.id);
  }
  await again.stop();
  const publishedBefore = emulator.posts().length;
  expect(publishedBefore).toBe(1);

  // The move.
  const target = await freshDatabase();
  const s3Env = {
    S3_ENDPOINT: s3.endpoint,
    S3_BUCKET: s3.bucket,
    S3_REGION: "us-east-1",
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    S3_FORCE_PATH_STYLE: "true",
  };
  const started = performance.now();
  const moved = await runCli(["move", "--to-database", target, "--to-s3"], { ...oldEnv, ...s3Env });
  const seconds = (performance.now() - started) / 1000;
  expect(moved.stderr).toContain("verified:");
  expect(moved.code).toBe(0);
  expect(moved.stderr).toMatch(/^posts: 10006 row\(s\) copied/m);
  expect(moved.stderr).toMatch(/^media: 2 file\(s\) copied/m);
  expect(existsSync(join(dataDir, "moved-to"))).toBe(true);
  console.error(moved.stderr);
  console.error(`moved ${CLONES + SCHEDULED + 1} posts in ${seconds.toFixed(1)} s`);

  // The new home: PostgreSQL and S3, the same SECRET_KEY, another address.
  const fresh = await startServe({
    SECRET_KEY,
    DATA_DIR: mkdtempSync(join(tmpdir(), "crier-move-new-")),
    DATABASE_URL: target,
    CRIER_BLUESKY_API_URL: served.url,
    WEBHOOK_ALLOW_PRIVATE: "true",
    ...s3Env,
  });
  servers.push(fresh);
  const one = await api(fresh.url, "GET", `/v1/posts/${scheduled[0]}`);
  expect(one.status).toBe(200);
  expect(one.body.data.publish_at).toBe(publishAt.toISOString());
  const movedUrl: string = one.body.data.media[0].url;
  expect(movedUrl.startsWith(s3.endpoint)).toBe(true);
  const fetched = await fetch(movedUrl);
  expect(fetched.status).toBe(200);
  expect(new Uint8Array(await fetched.arrayBuffer())).toEqual(png);
  // The converted copy is in the bucket under its key, byte for byte.
  const copied = await fetch(`${s3.endpoint}/${s3.bucket}/${converted.key}`);
  expect(copied.status).toBe(200);
  expect(new Uint8Array(await copied.arrayBuffer())).toEqual(converted.bytes);
  // The copies' media moved too; the first post still reads as published.
  const first = await api(fresh.url, "GET", `/v1/posts/${now.body.data.id}`);
  expect(first.body.data.status).toBe("published");
  expect(first.body.data.media[0].url.startsWith(s3.endpoint)).toBe(true);

  await until(
    "the scheduled posts published on the new home",
    async () => {
      const states = await Promise.all(scheduled.map((id) => api(fresh.url, "GET", `/v1/posts/${id}`)));
      return states.every((s) => s.body.data.status === "published") || undefined;
    },
    60,
    500,
  );
  // Let a second publication, were one coming, arrive.
  await Bun.sleep(3000);
  const posted = emulator.posts();
  for (let i = 0; i < SCHEDULED; i++) expect(posted.filter((p) => p.text === `scheduled ${i}`)).toHaveLength(1);
  expect(posted.filter((p) => p.text === "published before the move")).toHaveLength(1);
  expect(posted).toHaveLength(1 + SCHEDULED);
  // Each carried the image, read from the bucket.
  for (const p of posted.slice(1)) expect(p.media).toHaveLength(1);
  // The webhook kept working and nobody was told about 10,000 "new" posts.
  await until(
    "the webhook deliveries",
    () => receiver.ofType("post.published").length >= 1 + SCHEDULED || undefined,
    20,
  );
  await until(
    "the post.created deliveries",
    () => receiver.ofType("post.created").length >= 1 + SCHEDULED || undefined,
    20,
  );
  await Bun.sleep(1000);
  const created = receiver.ofType("post.created").map((r) => r.json.data.id);
  expect(new Set(created).size).toBe(created.length);
  expect(created).toHaveLength(1 + SCHEDULED);
  const published = receiver.ofType("post.published").map((r) => r.json.data.id);
  expect(new Set(published).size).toBe(published.length);

  // The old DATA_DIR refuses to start its engine, and says why.
  const refused = await runCli(["serve"], { ...oldEnv, PORT: "0" });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("was moved to");
  expect(refused.stderr).toContain("--allow-moved");
  expect(refused.stderr).not.toContain(target.split("@")[0] + "@x"); // no password to leak in this URL anyway
  // Read-only inspection is still possible.
  const readOnly = await startServe({ ...oldEnv, PORT: "0" }, { args: ["--no-scheduler"] });
  servers.push(readOnly);
  expect((await api(readOnly.url, "GET", `/v1/posts/${scheduled[0]}`)).status).toBe(200);
  await readOnly.stop();

  // Moving again into the now filled database is refused, and leaves it as it was.
  const repeat = await runCli(["move", "--to-database", target, "--allow-moved"], oldEnv);
  expect(repeat.code).toBe(1);
  expect(repeat.stderr).toContain("the target database is not empty");
}, 240_000);

test("move refuses while the embedded server runs, rolls back on any difference, and runs once per DATA_DIR", async () => {
  const dir = mkdtempSync(join(tmpdir(), "crier-move-lock-"));
  const env = { DATA_DIR: dir, SECRET_KEY };
  expect((await runCli(["profiles", "create", "--name", "kept"], env)).code).toBe(0);
  const running = await startServe({ ...env, PORT: "0" });
  servers.push(running);
  const target = await freshDatabase();
  const locked = await runCli(["move", "--to-database", target], env);
  expect(locked.code).toBe(1);
  expect(locked.stderr).toContain("another Crier process");
  await running.stop();

  // Something on the target that changes rows as they arrive (here a trigger someone left there): the
  // checksum sees it, nothing is committed, and DATA_DIR is not marked as moved.
  expect((await runCli(["migrate"], { ...env, DATABASE_URL: target })).code).toBe(0);
  const pg = postgres(target, { max: 1, onnotice: () => {} });
  await pg.unsafe(`create function rename_profile() returns trigger language plpgsql as $$
    begin new.name := new.name || '!'; return new; end $$`);
  await pg.unsafe(
    `create trigger rename_profile before insert on profiles for each row execute function rename_profile()`,
  );
  const differs = await runCli(["move", "--to-database", target], env);
  expect(differs.code).toBe(1);
  expect(differs.stderr).toContain("table profiles differs after the copy");
  expect(differs.stderr).toContain("nothing was committed");
  expect([...(await pg`select count(*)::int as n from profiles`)]).toEqual([{ n: 0 }]);
  expect(existsSync(join(dir, "moved-to"))).toBe(false);
  await pg.unsafe(`drop trigger rename_profile on profiles`);

  const done = await runCli(["move", "--to-database", target], env);
  expect(done.code).toBe(0);
  expect([...(await pg`select name from profiles`)]).toEqual([{ name: "kept" }]);
  await pg.end();
  const twice = await runCli(["move", "--to-database", await freshDatabase()], env);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain("already moved");
}, 60_000);
