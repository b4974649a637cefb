import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { sql } from "drizzle-orm";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/config.ts";
import { startServer, type RunningServer } from "../../../src/server.ts";
import { createKey, createProfile } from "../../../src/modules/keys/service.ts";
import { SCOPES } from "../../../src/http/scopes.ts";
import { testDatabase } from "../../support/db.ts";
import { storedBlueskyAccount } from "../../support/stored-account.ts";

// Two copies of `crier serve` (API only) sharing one PostgreSQL database take 200 queue posts for one
// account at once, 100 each over real HTTP: every post is accepted and every one holds its own slot,
// the first 200 of the queue with none skipped. PGlite is one process's embedded database, which two
// copies cannot share: PostgreSQL only.
const pg = process.env.TEST_DATABASE_URL;

let copies: RunningServer[] = [];
let dropDatabase = async () => {};

beforeAll(async () => {
  if (!pg) return;
  const db = await testDatabase();
  dropDatabase = () => db.close();
  const env = (name: string) => ({
    DATA_DIR: mkdtempSync(join(tmpdir(), `crier-queue-${name}-`)),
    DATABASE_URL: db.url!,
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    SECRET_KEY: "test-secret-key-that-is-long-enough-000",
    RATE_LIMIT_PER_MINUTE: "0",
    // 200 clients behind a proxy: each request names its own address, so the per-address budget of
    // unauthenticated attempts (taken before the key is checked) is not one address's 60.
    TRUSTED_PROXIES: "127.0.0.1",
    // A machine shared with other test runs may be slow: what is tested is which slots the posts take,
    // not how fast 200 creates finish, so a request's database deadline is generous.
    DATABASE_REQUEST_TIMEOUT: "10s",
  });
  copies = [
    await startServer(loadConfig(env("a")), { scheduler: false }),
    await startServer(loadConfig(env("b")), { scheduler: false }),
  ];
});
afterAll(async () => {
  for (const c of copies) await c.stop();
  await dropDatabase();
});

test.skipIf(!pg)(
  "200 concurrent queue posts on two copies take 200 distinct slots (PostgreSQL only: skipped without TEST_DATABASE_URL)",
  async () => {
    const [a, b] = copies;
    const profile = await createProfile(a.ctx.db, "queue-race");
    const { token } = await createKey(a.ctx.db, { name: "race", profileId: profile.id, scopes: [...SCOPES] });
    const account = await storedBlueskyAccount(a.ctx, profile.id, "queue-race");
    const call = async (copy: RunningServer, method: string, path: string, body?: unknown, client = 0) => {
      const res = await fetch(`${copy.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "x-forwarded-for": `10.0.${client >> 8}.${client & 255}`,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    // 100 slots a week: every day at the hours 00:00 to 13:00, and mon/tue 14:00.
    const days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
    const slots = days
      .flatMap((day) => Array.from({ length: 15 }, (_, h) => ({ day, time: `${String(h).padStart(2, "0")}:00` })))
      .filter((s) => s.time !== "14:00" || s.day === "mon" || s.day === "tue");
    expect(slots).toHaveLength(100);
    expect((await call(a, "PUT", `/v1/accounts/${account}/queue`, { time_zone: "Europe/Berlin", slots })).status).toBe(
      200,
    );
    const expected = (await call(b, "GET", `/v1/accounts/${account}/queue/next?count=100`)).body.data.map(
      (o: { at: string }) => o.at,
    );

    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        call(
          i % 2 ? b : a,
          "POST",
          "/v1/posts",
          { content: `queued ${i}`, queue: true, targets: [{ account_id: account }] },
          i + 1,
        ),
      ),
    );
    console.log(`queue race: 200 queue posts on two copies in ${Math.round(performance.now() - started)} ms`);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([]);
    const taken = answers.map((r) => r.body.data.targets[0].queue_slot as string);
    expect(new Set(taken).size).toBe(200);
    for (const r of answers) expect(r.body.data.publish_at).toBe(r.body.data.targets[0].queue_slot);
    // No slot skipped: the first 200 of the queue, the first 100 of them what next showed before.
    const sorted = [...taken].sort();
    expect(sorted.slice(0, 100)).toEqual(expected);
    const after = (await call(a, "GET", `/v1/accounts/${account}/queue/next?count=1`)).body.data[0].at;
    expect(after > sorted[199]).toBe(true);
    // The database agrees with the answers.
    const rows = await a.ctx.db.rows<{ n: number; d: number; held: number }>(
      sql`select count(*)::int as n, count(distinct queue_slot)::int as d,
        (select count(*)::int from queue_slots where account_id = ${account}::uuid) as held
        from post_targets where account_id = ${account}::uuid`,
    );
    expect(rows[0]).toEqual({ n: 200, d: 200, held: 200 });
  },
  120_000,
);
