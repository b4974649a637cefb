import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { maintainEmbedded } from "../../src/engine/maintenance.ts";
import { PERIODIC_JOBS } from "../../src/engine/jobs.ts";
import { createHarness, type Harness } from "../support/harness.ts";

// PGlite never autovacuums (single-user mode has no launcher): the engine's maintenance job is what
// vacuums and analyses the embedded database. On PostgreSQL autovacuum does it and the job stays out.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const stats = () =>
  h.db.rows<{ relname: string; vacuumed: boolean; analysed: boolean }>(sql`
    select relname, last_vacuum is not null as vacuumed, last_analyze is not null as analysed
    from pg_stat_user_tables where relname in ('post_targets', 'webhook_deliveries', 'posts') order by relname`);

test("every engine runs the maintenance job", () => {
  expect(PERIODIC_JOBS.map((j) => j.name)).toContain("embedded-maintenance");
});

test("on PGlite it vacuums the churning tables and analyses every table; on PostgreSQL it does nothing", async () => {
  const ran = await maintainEmbedded(h.ctx);
  expect(ran).toBe(h.db.kind === "pglite");
  const after = await stats();
  if (h.db.kind === "pglite")
    expect(after).toEqual([
      { relname: "post_targets", vacuumed: true, analysed: true },
      { relname: "posts", vacuumed: false, analysed: true },
      { relname: "webhook_deliveries", vacuumed: true, analysed: true },
    ]);
  else expect(after.every((r) => !r.vacuumed && !r.analysed)).toBe(true);
});
