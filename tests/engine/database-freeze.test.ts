/**
 * The engine while its PostgreSQL stops answering (a TCP proxy the test freezes): targets claimed before
 * the freeze are published during it, their results are written once it resumes, each target reaches
 * the platform exactly once and no outcome is lost. PostgreSQL only: the embedded database has no
 * connection to freeze.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import { createKey, createProfile } from "../../src/modules/keys/service.ts";
import { SCOPES } from "../../src/http/scopes.ts";
import { serveEmulator, type ServedEmulator } from "../../src/platform/emulator-kit.ts";
import { createBlueskyEmulator } from "../../plugins/bluesky/emulator.ts";
import { connectBluesky } from "../support/engine-kit.ts";
import { testDatabase } from "../support/db.ts";
import { freezableProxy, type FreezableProxy } from "../support/freezable-proxy.ts";
import { until } from "../support/until.ts";
import type { Db } from "../../src/db/client.ts";

const onPostgres = !!process.env.TEST_DATABASE_URL;
if (!onPostgres) console.log("database-freeze.test.ts: skipped, PostgreSQL only (set TEST_DATABASE_URL)");

const emulator = createBlueskyEmulator();
let direct: Db & { url?: string };
let proxy: FreezableProxy;
let server: RunningServer;
let served: ServedEmulator;
let gate: ReturnType<typeof Bun.serve>;
/** While set, the platform holds every call until it is resolved. */
let held: { opened: Promise<void>; open: () => void } | null = null;

function holdPlatform() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  held = { opened, open };
}

beforeAll(async () => {
  if (!onPostgres) return;
  direct = await testDatabase();
  proxy = await freezableProxy(direct.url!);
  served = serveEmulator(emulator);
  const upstream = new URL(served.url);
  // The platform, behind a gate the test opens: publishes wait at the platform, so they finish while
  // the database is frozen.
  gate = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      await held?.opened;
      const url = new URL(req.url);
      return fetch(`${upstream.origin}${url.pathname}${url.search}`, {
        method: req.method,
        headers: req.headers,
        body,
      });
    },
  });
  server = await startServer(
    loadConfig({
      DATABASE_URL: proxy.url,
      DATA_DIR: mkdtempSync(join(tmpdir(), "crier-freeze-")),
      SECRET_KEY: "freeze-test-secret-0123456789abcdef0123",
      LOG_LEVEL: "silent",
      HOST: "127.0.0.1",
      PORT: "0",
      PUBLISH_LEASE_SECONDS: "60",
      // Result writes are then given up after 2 s unanswered: the freeze below outlasts several of them.
      DATABASE_STATEMENT_TIMEOUT: "1s",
      CRIER_BLUESKY_API_URL: `http://127.0.0.1:${gate.port}${upstream.pathname}`,
    }),
    { scheduler: true },
  );
}, 60_000);

afterAll(async () => {
  if (!onPostgres) return;
  held?.open();
  proxy?.resume();
  await server?.stop();
  gate?.stop(true);
  await served?.stop();
  await proxy?.stop();
  await direct?.close();
  // The server's stop ends its pool, which waits up to 5 s (postgres.js' end timeout) for a connection the
  // proxy cut without closing: longer than the default 5 s of a hook.
}, 30_000);

const targetsOf = (postId: string) =>
  direct.rows<{ status: string; error_code: string | null; platform_post_id: string | null }>(
    sql`select status, error_code, platform_post_id from post_targets where post_id = ${postId}`,
  );

const endings = [
  ["resumes (what waited is delivered, late)", false],
  ["comes back without the frozen connections (what waited is lost)", true],
] as const;

for (const [ending, reset] of endings)
  test.skipIf(!onPostgres)(
    `targets claimed before a freeze publish during it, their results are written after it, each exactly once: the database ${ending}`,
    async () => {
      const name = reset ? "reset" : "resume";
      const profile = await createProfile(server.ctx.db, `freeze-${name}`);
      const { token } = await createKey(server.ctx.db, { profileId: profile.id, name: "freeze", scopes: [...SCOPES] });
      const accounts = [];
      for (const handle of ["a", "b", "c"].map((x) => `${x}.${name}.freeze.social`))
        accounts.push(await connectBluesky(server.ctx, profile.id, handle));
      holdPlatform();
      const content = `published while the database was frozen (${name})`;
      const res = await fetch(`${server.url}/v1/posts`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ content, targets: accounts.map((account_id) => ({ account_id })) }),
      });
      expect(res.status).toBe(201);
      const postId = ((await res.json()) as { data: { id: string } }).data.id;
      await until("the three targets claimed", async () =>
        (await targetsOf(postId)).filter((t) => t.status === "processing").length === 3 ? true : undefined,
      );

      proxy.freeze();
      held!.open();
      // The platform has all three while no result can be written.
      await until("three posts on the platform", () =>
        emulator.posts().filter((p) => p.text === content).length === 3 ? true : undefined,
      );
      // Long enough for a write to time out and be tried again several times, well inside the lease.
      await Bun.sleep(6000);
      expect((await targetsOf(postId)).every((t) => t.status === "processing")).toBe(true);
      proxy.resume({ reset });

      await until(
        "the three results written",
        async () => ((await targetsOf(postId)).every((t) => t.status !== "processing") ? true : undefined),
        30,
        100,
      );
      // Another few ticks: nothing is claimed or published again once the database answers.
      await Bun.sleep(3000);
      const targets = await targetsOf(postId);
      console.log(`after the freeze: ${JSON.stringify(targets)}`);
      expect(targets.map((t) => t.status)).toEqual(["published", "published", "published"]);
      expect(targets.every((t) => t.platform_post_id)).toBe(true);
      expect(emulator.posts().filter((p) => p.text === content)).toHaveLength(3);
    },
    90_000,
  );

test.skipIf(!onPostgres)(
  "a target falling due during a freeze is claimed once the database answers and published exactly once",
  async () => {
    const profile = await createProfile(server.ctx.db, "freeze-due");
    const { token } = await createKey(server.ctx.db, { profileId: profile.id, name: "due", scopes: [...SCOPES] });
    const accountId = await connectBluesky(server.ctx, profile.id, "due.freeze.social");
    held = null;
    const content = "fell due while the database was frozen";
    const res = await fetch(`${server.url}/v1/posts`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        content,
        publish_at: new Date(Date.now() + 2000).toISOString(),
        targets: [{ account_id: accountId }],
      }),
    });
    expect(res.status).toBe(201);
    const postId = ((await res.json()) as { data: { id: string } }).data.id;
    proxy.freeze();
    // The engine's ticks and claims run into the freeze; none may leave the target claimed and forgotten.
    await Bun.sleep(6000);
    expect(emulator.posts().filter((p) => p.text === content)).toHaveLength(0);
    proxy.resume();
    await until(
      "the target published",
      async () => ((await targetsOf(postId))[0]?.status === "published" ? true : undefined),
      30,
      100,
    );
    await Bun.sleep(2000);
    expect(emulator.posts().filter((p) => p.text === content)).toHaveLength(1);
  },
  90_000,
);
