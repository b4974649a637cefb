/**
 * The embedded database's upkeep. PGlite runs PostgreSQL in single-user mode, where the autovacuum
 * launcher never starts: without this job its tables would never be vacuumed or analysed, the queue
 * tables (targets, webhook deliveries) would keep every dead row version they ever had, and the planner
 * would plan on no statistics (a claim that should read 500 rows through an index sorted the whole outbox
 * instead). On PostgreSQL autovacuum does this work, and the job does nothing.
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import type { PeriodicJob } from "./jobs.ts";

/** The tables whose rows are rewritten many times each (a lease, a result, an attempt). */
const CHURNING = sql.raw("post_targets, webhook_deliveries, engine_jobs, workflow_items");

export const maintenanceJob: PeriodicJob = {
  name: "embedded-maintenance",
  // Statistics an hour old are fine for plans; VACUUM of the churning tables is bounded by their dead rows.
  everyMs: 60 * 60_000,
  // A new database has nothing to clean yet: its first run, at the first start, held the one PGlite
  // connection for about 0.3 s before the first answer (bench/start, new embedded directory).
  firstRunAfterMs: 60 * 60_000,
  run: async (ctx) => {
    await maintainEmbedded(ctx);
  },
};

/** VACUUM (ANALYZE) of the churning tables and ANALYZE of the rest, on PGlite only; says whether it ran. */
export async function maintainEmbedded(ctx: AppContext): Promise<boolean> {
  if (ctx.db.kind !== "pglite") return false;
  await ctx.db.rows(sql`vacuum (analyze) ${CHURNING}`);
  await ctx.db.rows(sql`analyze`);
  return true;
}
