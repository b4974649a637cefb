/**
 * A full disk under DATA_DIR: a real tmpfs the test mounts (root only; CI runs as root), holding the media
 * folder and, on PGlite, the embedded database. An upload that runs out of room answers 507 and leaves no
 * file; the database refuses writes with 503 and takes them again once space is freed, without a restart;
 * a scheduled post due meanwhile is published exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statfsSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { createHarness, type Harness } from "../../support/harness.ts";
import { testDatabase } from "../../support/db.ts";
import {
  privatePostgresAvailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from "../../support/private-postgres.ts";
import { connectBluesky } from "../../support/engine-kit.ts";
import { makePng } from "../../support/media-fixtures.ts";
import { startReceiver, type Receiver } from "../../support/webhook-receiver.ts";
import { openDatabase, openPostgres, type Db } from "../../../src/db/client.ts";
import { migrate } from "../../../src/db/migrate.ts";
import { createEngine, type Engine } from "../../../src/engine/scheduler.ts";
import { serveEmulator, type ServedEmulator } from "../../../src/platform/emulator-kit.ts";
import { createBlueskyEmulator } from "../../../plugins/bluesky/emulator.ts";
import { maxUploadBytes } from "../../../src/storage/index.ts";
import type { FsStorage } from "../../../src/storage/fs.ts";

// The database takes ≈ 40 MB (the embedded one) to ≈ 60 MB (a PostgreSQL cluster); the rest is what the tests fill.
const TMPFS_SIZE = "96m";
const workDir = mkdtempSync(join(tmpdir(), "crier-full-disk-"));
const mountPoint = join(workDir, "data");
mkdirSync(mountPoint);
// A PostgreSQL cluster on the tmpfs runs as the postgres user, who must be able to pass through.
chmodSync(workDir, 0o711);
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${TMPFS_SIZE}`, "tmpfs", mountPoint], {
  encoding: "utf8",
});
const canMount = mounted.status === 0;
if (!canMount) {
  console.error(
    `\n!!! SKIPPING the full-disk tests: mounting a ${TMPFS_SIZE} tmpfs failed (${(mounted.stderr || mounted.error?.message || "").trim()}).` +
      `\n!!! They need root (CI runs as root). Run them as root to check ENOSPC handling.\n`,
  );
}
/**
 * The database lives on the small disk too: the embedded one in DATA_DIR, or under TEST_DATABASE_URL a
 * PostgreSQL cluster of the test's own with its data directory on the tmpfs (the shared test server's disk
 * is not ours to fill).
 */
const onPostgres = !!process.env.TEST_DATABASE_URL;
const dbOnDisk = !onPostgres || privatePostgresAvailable();
if (canMount && !dbOnDisk)
  console.error(
    "\n!!! SKIPPING the full-database tests: no PostgreSQL server binaries to start a cluster on the tmpfs.\n",
  );
let pg: PrivatePostgres | undefined;

let h: Harness;
let db: Db;
let server: ReturnType<typeof Bun.serve>;
let base: string;
let owner: { token: string; profileId: string };
let emulator: ReturnType<typeof createBlueskyEmulator>;
let served: ServedEmulator;
let engine: Engine;
let receiver: Receiver;

const FILLER = join(mountPoint, "filler");
const freeBytes = () => {
  const s = statfsSync(mountPoint);
  return s.bavail * s.bsize;
};
/** Takes every free byte of the tmpfs: big writes, then small ones for the last megabyte, each until ENOSPC. */
function fillDisk() {
  const fd = openSync(FILLER, "a");
  try {
    for (const size of [1024 * 1024, 4096]) {
      const chunk = Buffer.alloc(size, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
      }
    }
  } finally {
    closeSync(fd);
  }
}
const freeDisk = () => rmSync(FILLER, { force: true });

beforeAll(async () => {
  if (!canMount) return;
  if (onPostgres && dbOnDisk) {
    pg = await startPrivatePostgres(mountPoint);
    db = openPostgres(pg.url, 10);
  } else db = onPostgres ? await testDatabase() : await openDatabase({ dataDir: mountPoint });
  await migrate(db);
  emulator = createBlueskyEmulator();
  served = serveEmulator(emulator);
  receiver = startReceiver();
  h = await createHarness(
    {
      dataDir: mountPoint,
      maxImageBytes: 128 * 1024 * 1024,
      env: { CRIER_BLUESKY_API_URL: served.url },
    } as never,
    { db },
  );
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (r) => h.app.handle(r),
    maxRequestBodySize: maxUploadBytes(h.ctx.config),
  });
  base = `http://127.0.0.1:${server.port}`;
  h.ctx.config.publicUrl = base;
  owner = await h.profile();
  engine = createEngine(h.ctx, { random: () => 0.5 });
  h.ctx.dispatch = engine;
});

afterAll(async () => {
  if (canMount) {
    await engine?.stop();
    server?.stop(true);
    await served?.stop();
    await receiver?.stop();
    await h?.close();
    pg?.destroy();
    spawnSync("umount", [mountPoint]);
  }
  rmSync(workDir, { recursive: true, force: true });
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

const storage = () => h.ctx.storage as FsStorage;
const filesIn = (dir: string) => readdirSync(dir).filter((n) => n !== ".partial");
const count = async (table: string) =>
  Number((await db.rows<{ n: number }>(sql`select count(*)::int as n from ${sql.raw(table)}`))[0].n);

describe.skipIf(!canMount)("a full disk under DATA_DIR", () => {
  test("an upload bigger than the free space answers 507 insufficient_storage and leaves no file", async () => {
    const free = freeBytes();
    // A valid PNG head followed by more bytes than the disk has room for (the limit allows it).
    const png = makePng(2, 2);
    const size = free + 4 * 1024 * 1024;
    expect(size).toBeLessThan(h.ctx.config.maxImageBytes);
    const body = new Uint8Array(size);
    body.set(png);
    const t = await api("POST", "/v1/media/uploads", { filename: "big.png", content_type: "image/png" });
    expect(t.status).toBe(201);
    const res = await fetch(t.body.data.upload.signedUrl, {
      method: "PUT",
      body,
      headers: { "content-type": "image/png" },
    });
    expect(res.status).toBe(507);
    const err = ((await res.json()) as any).error;
    expect(err.code).toBe("insufficient_storage");
    expect(err.hint).toMatch(/free space/i);
    // The client learns what to do, not where the server keeps its files.
    expect(err.message).not.toContain(mountPoint);
    // Nothing left behind: no stored file, no partial file, and the space is free again.
    expect(filesIn(storage().root)).toEqual([]);
    expect(readdirSync(join(storage().root, ".partial"))).toEqual([]);
    expect(freeBytes()).toBeGreaterThanOrEqual(free - 1024 * 1024);
    // The ticket stays open (nothing arrived), so the same URL takes a file that fits.
    const pending = await api("GET", `/v1/media/${t.body.data.media_id}`);
    expect(pending.status).toBe(409);
    expect(pending.body.error.code).toBe("media_not_uploaded");
    const small = await fetch(t.body.data.upload.signedUrl, {
      method: "PUT",
      body: png,
      headers: { "content-type": "image/png" },
    });
    expect(small.status).toBe(200);
    expect((await api("GET", `/v1/media/${t.body.data.media_id}`)).body.data.size).toBe(png.byteLength);
  });

  test.skipIf(!dbOnDisk)(
    "the database refuses writes with 503 storage_full while the disk is full, and takes them again once space is freed",
    async () => {
      const account = await connectBluesky(h.ctx, owner.profileId, "full.test");
      const postsBefore = await count("posts");
      fillDisk();
      try {
        expect(freeBytes()).toBe(0);
        const refused = await api("POST", "/v1/posts", {
          content: "written while the disk is full",
          targets: [{ account_id: account }],
        });
        expect(refused.status).toBe(503);
        expect(refused.body.error.code).toBe("storage_full");
        expect(refused.body.error.hint).toMatch(/free disk space/i);
        expect(refused.headers.get("retry-after")).toBeTruthy();
        expect(await count("posts")).toBe(postsBefore);
        // Reads still work meanwhile.
        expect((await api("GET", "/v1/posts")).status).toBe(200);
      } finally {
        freeDisk();
      }
      const again = await api("POST", "/v1/posts", {
        content: "written once space is back",
        publish_at: new Date(h.clock.now().getTime() + 3600_000).toISOString(),
        targets: [{ account_id: account }],
      });
      expect(again.status).toBe(201);
      expect(await count("posts")).toBe(postsBefore + 1);
    },
  );

  test.skipIf(!dbOnDisk)(
    "on a database that never published, a claim the full disk refuses is made again once space returns",
    async () => {
      const account = await connectBluesky(h.ctx, owner.profileId, "first.test");
      const created = await api("POST", "/v1/posts", {
        content: "first.test while full",
        publish_at: new Date(h.clock.now().getTime() + 1_000).toISOString(),
        targets: [{ account_id: account }],
      });
      expect(created.status).toBe(201);
      fillDisk();
      let running: Promise<void> | undefined;
      try {
        h.clock.advance(2_000);
        // The claim's first processing target needs a new index page, which the disk refuses: the
        // engine keeps trying instead of giving up the drain.
        running = engine.runUntilIdle();
        await Promise.race([running, Bun.sleep(1000)]);
        expect(emulator.posts().filter((p) => p.text === "first.test while full")).toHaveLength(0);
      } finally {
        freeDisk();
      }
      await running;
      await engine.runUntilIdle();
      expect(emulator.posts().filter((p) => p.text === "first.test while full")).toHaveLength(1);
      const post = await api("GET", `/v1/posts/${created.body.data.id}`);
      expect(post.body.data.status).toBe("published");
      expect(post.body.data.targets[0].attempts).toBe(1);
    },
  );

  test.skipIf(!dbOnDisk)(
    "a scheduled post due while the disk is full is published exactly once after space returns",
    async () => {
      const account = await connectBluesky(h.ctx, owner.profileId, "due.test");
      // A first publish, as any copy has made before: the index of processing targets has its page, so
      // the claim below fits on the full disk and what the disk refuses is the result. (On a new
      // database the claim is refused too, and runUntilIdle tries it again.)
      const first = await api("POST", "/v1/posts", {
        content: "due.test before",
        publish_at: new Date(h.clock.now().getTime() + 1_000).toISOString(),
        targets: [{ account_id: account }],
      });
      expect(first.status).toBe(201);
      h.clock.advance(2_000);
      await engine.runUntilIdle();
      expect((await api("GET", `/v1/posts/${first.body.data.id}`)).body.data.status).toBe("published");
      // A webhook on post.published: recording the result then writes the profile's first event, which needs
      // a new page of webhook_events, so the full disk refuses the result itself (not only new posts).
      h.ctx.config.webhookAllowPrivate = true;
      const hook = await api("POST", "/v1/webhooks", { url: receiver.url, events: ["post.published"] });
      expect(hook.status).toBe(201);
      const created = await api("POST", "/v1/posts", {
        content: "due.test while full",
        publish_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
        targets: [{ account_id: account }],
      });
      expect(created.status).toBe(201);
      const postId = created.body.data.id;
      const onPlatform = () => emulator.posts().filter((p) => p.text === "due.test while full").length;
      fillDisk();
      let running: Promise<void> | undefined;
      try {
        h.clock.advance(61_000);
        running = engine.runUntilIdle();
        // The engine keeps trying while the disk is full; let it try for a while.
        await Promise.race([running, Bun.sleep(1500)]);
        // Published on the platform, but the database could not take the result yet: still held, not lost.
        expect(onPlatform()).toBeLessThanOrEqual(1);
        expect((await api("GET", `/v1/posts/${postId}`)).body.data.status).not.toBe("published");
      } finally {
        freeDisk();
      }
      await running;
      await engine.runUntilIdle();
      // Long after: no second attempt, whatever the lease or the retry schedule.
      h.clock.advance(3600_000);
      await engine.runUntilIdle();
      expect(onPlatform()).toBe(1);
      const post = await api("GET", `/v1/posts/${postId}`);
      expect(post.body.data.status).toBe("published");
      expect(post.body.data.targets[0].attempts).toBe(1);
      expect(post.body.data.targets[0].platform_post_id).toMatch(/^at:\/\//);
      const events = await db.rows<{ n: number }>(
        sql`select count(*)::int as n from webhook_events where type = 'post.published' and payload->'data'->>'id' = ${postId}`,
      );
      expect(events[0].n).toBe(1);
    },
  );
});
