import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { openPostgres, type Db } from "../../src/db/client.ts";
import { createEngine } from "../../src/engine/scheduler.ts";
import type { AppContext } from "../../src/context.ts";
import { engineHarness, type EngineHarness } from "../support/engine-kit.ts";

// Two copies of the engine, each with its own connection pool, on one PostgreSQL database, racing over
// the same due targets. PGlite is one connection in one process, so this needs TEST_DATABASE_URL.
const pg = !!process.env.TEST_DATABASE_URL;

describe.skipIf(!pg)(
  "two engines on one PostgreSQL database (PostgreSQL only: skipped without TEST_DATABASE_URL)",
  () => {
    let h: EngineHarness;
    let second: Db;
    const ACCOUNTS = 50;
    const PER_ACCOUNT = 10;

    beforeAll(async () => {
      h = await engineHarness();
      second = openPostgres((h.db as Db & { url: string }).url, 10);
    });
    afterAll(async () => {
      await second?.close();
      await h?.close();
    });

    test("500 due targets: each published exactly once, one publish per account at a time, both copies took a share", async () => {
      const { token, profileId } = await h.profile();
      const ids = await Promise.all(Array.from({ length: ACCOUNTS }, (_, i) => h.bluesky(profileId, `racer${i}.test`)));
      const at = new Date(h.clock.now().getTime() + 60_000).toISOString();
      for (let n = 0; n < PER_ACCOUNT; n++) {
        await Promise.all(
          ids.map(async (id, i) => {
            const res = await h.request("POST", "/v1/posts", {
              token,
              body: { content: `race ${i}-${n}`, publish_at: at, targets: [{ account_id: id }] },
            });
            expect(res.status).toBe(201);
          }),
        );
      }
      h.clock.advance(60_000);
      const a = createEngine(h.ctx, { id: "copy-a" });
      const b = createEngine({ ...h.ctx, db: second } as AppContext, { id: "copy-b" });
      // While they race, sample the table: never two targets of one account processing at once.
      let racing = true;
      let overlaps = 0;
      let samples = 0;
      const sampler = (async () => {
        while (racing) {
          const rows = await h.db.rows(
            sql`select account_id from post_targets where status = 'processing' group by account_id having count(*) > 1`,
          );
          overlaps += rows.length;
          samples++;
        }
      })();
      // Each copy keeps going while targets wait, as a serving copy does at its next tick: runUntilIdle
      // returns at the first claim that finds nothing, which the other copy's claim in flight (holding the
      // accounts' locks) can cause.
      const waiting = async () =>
        (
          await h.db.rows<{ n: number }>(
            sql`select count(*)::int as n from post_targets where status in ('scheduled', 'processing')`,
          )
        )[0].n;
      const drain = async (engine: typeof a) => {
        do await engine.runUntilIdle();
        while ((await waiting()) > 0 && (await Bun.sleep(2), true));
      };
      await Promise.all([drain(a), drain(b)]);
      racing = false;
      await sampler;
      console.log(`race: ${samples} samples, ${overlaps} moments with two publishes on one account`);
      expect(overlaps).toBe(0);
      await Promise.all([a.stop(), b.stop()]);

      const posted = h.emulator.posts().filter((p) => p.text.startsWith("race "));
      const texts = new Set(posted.map((p) => p.text));
      const duplicates = posted.length - texts.size;
      console.log(
        `race: ${posted.length} posts on the emulator for ${ACCOUNTS * PER_ACCOUNT} targets, ${duplicates} duplicates`,
      );
      expect(duplicates).toBe(0);
      expect(posted.length).toBe(ACCOUNTS * PER_ACCOUNT);

      const rows = await h.db.rows<{ status: string; claimed_by: string; n: number }>(sql`
      select status, claimed_by, count(*)::int as n from post_targets group by status, claimed_by order by claimed_by`);
      console.log(`race: targets by copy ${JSON.stringify(rows)}`);
      expect(rows.every((r) => r.status === "published")).toBe(true);
      expect(rows.reduce((s, r) => s + r.n, 0)).toBe(ACCOUNTS * PER_ACCOUNT);
      expect(rows.map((r) => r.claimed_by).sort()).toEqual(["copy-a", "copy-b"]);
      const attempts = await h.db.rows<{ max: number }>(sql`select max(attempts)::int as max from post_targets`);
      expect(attempts[0].max).toBe(1);
    }, 120_000);
  },
);
