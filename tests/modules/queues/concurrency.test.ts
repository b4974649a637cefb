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
// account at once, 100 each over real HTTP: every post is accepted and every one holds its own slot.
// PGlite is one process's embedded database, which two copies cannot share: PostgreSQL only.
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

// 100 slots a week: every day at the hours 00:00 to 13:00, and mon/tue 14:00.
const SLOTS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
  .flatMap((day) => Array.from({ length: 15 }, (_, h) => ({ day, time: `${String(h).padStart(2, "0")}:00` })))
  .filter((s) => s.time !== "14:00" || s.day === "mon" || s.day === "tue");

/** A profile with one account whose queue has SLOTS, and a caller of either copy as a given client. */
async function queueAccount(name: string) {
  const [a] = copies;
  const profile = await createProfile(a.ctx.db, name);
  const { token } = await createKey(a.ctx.db, { name, profileId: profile.id, scopes: [...SCOPES] });
  const account = await storedBlueskyAccount(a.ctx, profile.id, name);
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
  expect(SLOTS).toHaveLength(100);
  const put = await call(a, "PUT", `/v1/accounts/${account}/queue`, { time_zone: "Europe/Berlin", slots: SLOTS });
  expect(put.status).toBe(200);
  const queuePost = (i: number) =>
    call(
      copies[i % 2],
      "POST",
      "/v1/posts",
      { content: `queued ${i}`, queue: true, targets: [{ account_id: account }] },
      i + 1,
    );
  return { account, call, queuePost };
}

/** What the database holds for the account: targets, their distinct slots, and the slots held. */
async function stored(account: string) {
  const [row] = await copies[0].ctx.db.rows<{ n: number; d: number; held: number; mismatched: number }>(
    sql`select count(*)::int as n, count(distinct queue_slot)::int as d,
      (select count(*)::int from queue_slots where account_id = ${account}::uuid) as held,
      (select count(*)::int from post_targets t join posts p on p.id = t.post_id
        left join queue_slots q on q.post_id = t.post_id and q.account_id = t.account_id
        where t.account_id = ${account}::uuid and (q.slot_at is distinct from t.queue_slot
          or t.scheduled_time is distinct from t.queue_slot or p.publish_at is distinct from t.queue_slot)) as mismatched
      from post_targets where account_id = ${account}::uuid`,
  );
  return row;
}

test.skipIf(!pg)(
  "200 concurrent queue posts on two copies take 200 distinct slots, the first 200 of the queue (PostgreSQL only: skipped without TEST_DATABASE_URL)",
  async () => {
    const [a, b] = copies;
    const { account, call, queuePost } = await queueAccount("queue-race");
    const expected = (await call(b, "GET", `/v1/accounts/${account}/queue/next?count=100`)).body.data.map(
      (o: { at: string }) => o.at,
    );

    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => queuePost(i)));
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
    expect(await stored(account)).toEqual({ n: 200, d: 200, held: 200, mismatched: 0 });
  },
  120_000,
);

test.skipIf(!pg)(
  "shuffles on both copies while 200 queue posts arrive: still one slot per post, and targets, slots and publish_at agree",
  async () => {
    const { account, call, queuePost } = await queueAccount("queue-shuffle-race");
    const shuffles = Array.from({ length: 6 }, async (_, i) => {
      await Bun.sleep(40 * i);
      return call(copies[i % 2], "POST", `/v1/accounts/${account}/queue/shuffle`, undefined, 1000 + i);
    });
    const answers = await Promise.all([...Array.from({ length: 200 }, (_, i) => queuePost(i)), ...shuffles]);
    const refused = answers.filter((r) => r.status !== 201 && r.status !== 200);
    expect(refused.map((r) => `${r.status} ${JSON.stringify(r.body)}`)).toEqual([]);
    const moved = answers.filter((r) => r.status === 200).map((r) => r.body.data.length as number);
    console.log(`queue shuffle race: the shuffles moved ${moved.join(", ")} posts`);
    expect(moved).toHaveLength(6);
    expect(moved.some((n) => n > 0)).toBe(true);
    expect(await stored(account)).toEqual({ n: 200, d: 200, held: 200, mismatched: 0 });
  },
  120_000,
);
