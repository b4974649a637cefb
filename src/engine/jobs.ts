/**
 * Periodic engine jobs: work that is not a due target but must happen every so often (poll workflow
 * sources, read metrics). A job is registered with the engine (EngineOptions.jobs, default
 * PERIODIC_JOBS below) and runs from its ticks, beside the publishes.
 *
 * Each run holds a lease in engine_jobs: across every copy sharing the database a job runs at most once
 * per `everyMs` and never twice at once. The lease is renewed every tick while the run lasts; a copy that
 * dies mid-run holds it until it expires, then any copy may run the job again. A job that must never
 * repeat a side effect (publishing, sending) leases its own rows too, as targets do.
 */
import { sql } from "drizzle-orm";
import type { AppContext } from "../context.ts";
import type { Db } from "../db/client.ts";
import { errorFields, type Logger } from "../log.ts";
import { analyticsJob } from "./analytics.ts";
import { maintenanceJob } from "./maintenance.ts";
import { reconcileJob } from "./reconcile.ts";
import { tokenRefreshJob } from "./token-refresh.ts";
import { mediaPrepareJob } from "./media-prepare.ts";
import { seriesJob } from "./series.ts";

export interface PeriodicJob {
  /** Unique across the engine; the key of its lease in engine_jobs. */
  name: string;
  /** At least this long between the end of one run (on any copy) and the start of the next. */
  everyMs: number;
  /** How long after the job first appears in a database its first run falls due (default: at once). */
  firstRunAfterMs?: number;
  run(ctx: AppContext): Promise<void>;
}

/** The jobs every engine runs unless EngineOptions.jobs says otherwise: register new periodic work here. */
export const PERIODIC_JOBS: readonly PeriodicJob[] = [
  analyticsJob,
  reconcileJob,
  maintenanceJob,
  tokenRefreshJob,
  mediaPrepareJob,
  seriesJob,
];

export class JobRunner {
  private readonly runs = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly ctx: AppContext,
    private readonly jobs: readonly PeriodicJob[],
    private readonly heldBy: string,
    private readonly leaseMs: number,
    private readonly log: Logger,
  ) {
    const names = new Set(jobs.map((j) => j.name));
    if (names.size !== jobs.length) throw new Error("two periodic jobs share a name");
  }

  /** Renews the leases of the runs in flight, then starts every job that is due and free. */
  async startDue(): Promise<void> {
    if (this.stopped || !this.jobs.length) return;
    const now = this.ctx.clock.now();
    const until = new Date(now.getTime() + this.leaseMs);
    await renewJobLeases(this.ctx.db, this.heldBy, [...this.runs.keys()], until);
    for (const job of this.jobs) {
      if (this.runs.has(job.name) || !(await takeJobLease(this.ctx.db, job, this.heldBy, now, until))) continue;
      this.runs.set(
        job.name,
        this.runOne(job).finally(() => this.runs.delete(job.name)),
      );
    }
  }

  /** No new runs from now on. */
  stop(): void {
    this.stopped = true;
  }

  /** Resolves when the runs in flight have finished. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.runs.values()]);
  }

  private async runOne(job: PeriodicJob): Promise<void> {
    try {
      await job.run(this.ctx);
    } catch (e) {
      // The next run comes a period later as after a success: a failing job must not spin.
      this.log.error("periodic job failed", { job: job.name, ...errorFields(e) });
    }
    const next = new Date(this.ctx.clock.now().getTime() + job.everyMs);
    await releaseJobLease(this.ctx.db, job.name, this.heldBy, next).catch((e) =>
      this.log.error("periodic job lease not released", { job: job.name, ...errorFields(e) }),
    );
  }
}

const iso = (d: Date) => d.toISOString();

/**
 * Takes the job's lease if its next run is due and nobody holds it. A job new to the database is
 * recorded with its first run due after `firstRunAfterMs`, taken at once when that is 0.
 */
async function takeJobLease(db: Db, job: PeriodicJob, heldBy: string, now: Date, until: Date): Promise<boolean> {
  const first = job.firstRunAfterMs ?? 0;
  const rows = await db.rows<{ held_by: string | null }>(sql`
    insert into engine_jobs (name, next_run_at, lease_until, held_by)
    values (${job.name}, ${iso(new Date(now.getTime() + first))}::timestamptz,
      ${first ? null : iso(until)}::timestamptz, ${first ? null : heldBy})
    on conflict (name) do update set lease_until = ${iso(until)}::timestamptz, held_by = ${heldBy}
      where engine_jobs.next_run_at <= ${iso(now)}::timestamptz
        and (engine_jobs.lease_until is null or engine_jobs.lease_until < ${iso(now)}::timestamptz)
    returning held_by`);
  return rows[0]?.held_by === heldBy;
}

async function renewJobLeases(db: Db, heldBy: string, names: string[], until: Date): Promise<void> {
  if (!names.length) return;
  await db.rows(sql`
    update engine_jobs set lease_until = ${iso(until)}::timestamptz
    where held_by = ${heldBy} and name in (${sql.join(
      names.map((n) => sql`${n}`),
      sql`, `,
    )})
    returning name`);
}

/** Fenced on the holder: a run whose lease expired and was taken over leaves the new holder alone. */
async function releaseJobLease(db: Db, name: string, heldBy: string, nextRunAt: Date): Promise<void> {
  await db.rows(sql`
    update engine_jobs set lease_until = null, held_by = null, next_run_at = ${iso(nextRunAt)}::timestamptz
    where name = ${name} and held_by = ${heldBy}
    returning name`);
}
