/**
 * The recorder writes what came of a publish. The outcome is known by then, so a write the database
 * refuses for a passing reason is sent again instead of lost: given up, the target would end
 * outcome_unknown when its lease ran out although the post is known to be on the platform.
 * PostgreSQL only: it takes a second connection that holds locks while the recorder writes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { claimDue } from "../../src/engine/claim.ts";
import { Recorder } from "../../src/engine/recorder.ts";
import { renewLeases } from "../../src/engine/housekeeping.ts";
import { createLogger } from "../../src/log.ts";
import { storedBlueskyAccount } from "../support/stored-account.ts";
import { createHarness, type Harness } from "../support/harness.ts";

const pg = !!process.env.TEST_DATABASE_URL;
const COPY = "recorder-test";

describe.skipIf(!pg)("the recorder against a second connection (PostgreSQL only)", () => {
  let h: Harness;
  let other: postgres.Sql;
  let token: string;
  let accountIds: string[];
  const warnings: string[] = [];
  let recorder: Recorder;

  beforeAll(async () => {
    h = await createHarness();
    other = postgres(h.db.url!, { max: 1, onnotice: () => {} });
    const p = await h.profile({ sandbox: true });
    token = p.token;
    accountIds = [];
    for (const n of [1, 2, 3]) accountIds.push(await storedBlueskyAccount(h.ctx, p.profileId, `recorder${n}`));
    const log = createLogger("warn", {}, (line) => warnings.push(line));
    recorder = new Recorder(h.db, COPY, log, 60_000);
  });
  afterAll(async () => {
    await other?.end();
    await h?.close();
  });

  /** Targets due now on each account, claimed (processing) by this copy. */
  async function claimed(): Promise<string[]> {
    const res = await h.request("POST", "/v1/posts", {
      token,
      body: {
        content: "recorded",
        publish_at: new Date(h.clock.now().getTime() + 60_000).toISOString(),
        targets: accountIds.map((account_id) => ({ account_id })),
      },
    });
    expect(res.status).toBe(201);
    h.clock.advance(61_000);
    const now = h.clock.now();
    const rows = await claimDue(h.db, {
      now,
      leaseUntil: new Date(now.getTime() + 120_000),
      claimedBy: COPY,
      caps: { bluesky: 8 },
      limit: 8,
      busyAccounts: [],
      postId: res.body.data.id,
    });
    expect(rows).toHaveLength(accountIds.length);
    return rows.map((r) => r.id);
  }

  const statuses = async (ids: string[]) =>
    (
      await h.db.rows<{ status: string }>(
        sql`select status from post_targets where id = any(${`{${ids.join(",")}}`}::uuid[])`,
      )
    ).map((r) => r.status);

  /** Resolves once some backend waits for a lock while running `like`. */
  async function waitingOnLock(like: string) {
    for (let i = 0; i < 200; i++) {
      const [row] = await h.db.rows<{ n: number }>(sql`select count(*)::int as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like ${`%${like}%`}`);
      if (row.n > 0) return;
      await Bun.sleep(10);
    }
    throw new Error(`nothing waited on a lock while running ${like}`);
  }

  const published = (id: string) =>
    recorder.record(id, {
      status: "published",
      platformPostId: `at://${id}`,
      publishedAt: h.clock.now(),
      at: h.clock.now(),
    });

  test("a result write chosen as a deadlock's victim is written again: the target reads published", async () => {
    const [id, ...rest] = await claimed();
    warnings.length = 0;
    let recorded: Promise<void> | undefined;
    await other.begin(async (tx) => {
      // This side waits 10 s before looking for deadlocks, so the recorder (1 s, the default) is the victim.
      await tx`set local deadlock_timeout = '10s'`;
      await tx`select id from post_targets where id = ${id} for update`;
      recorded = published(id);
      await waitingOnLock("crier_record_results(");
      // The recorder holds its table lock and waits for our row; we now wait for its table lock.
      await tx`lock table post_targets in access exclusive mode`;
    });
    await recorded;
    expect(await statuses([id])).toEqual(["published"]);
    expect(warnings.join("\n")).toContain("deadlock detected");
    await Promise.all(rest.map(published));
  });

  test("renewing leases skips a row being written instead of waiting on it", async () => {
    const ids = await claimed();
    await other.begin(async (tx) => {
      await tx`select id from post_targets where id = ${ids[1]} for update`;
      // Held by another transaction: renewed around it, at once, not after the lock is released.
      await renewLeases(h.db, COPY, ids, new Date(h.clock.now().getTime() + 300_000));
    });
    const leases = await h.db.rows<{ id: string; renewed: boolean }>(
      sql`select id, lease_until > ${new Date(h.clock.now().getTime() + 200_000).toISOString()}::timestamptz as renewed
          from post_targets where id = any(${`{${ids.join(",")}}`}::uuid[])`,
    );
    expect(Object.fromEntries(leases.map((l) => [l.id, l.renewed]))).toEqual({
      [ids[0]]: true,
      [ids[1]]: false,
      [ids[2]]: true,
    });
  });
});
