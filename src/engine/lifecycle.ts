/**
 * When the engine of one copy works: a tick (every second under `crier serve`, never overlapping itself)
 * does the chores, fills the publish slots and starts due periodic jobs; between ticks it wakes up exactly
 * when the next target falls due; stop() ends all of it and waits (bounded) for what is in flight.
 */
import { Cron } from "croner";
import type { AppContext, EngineHealth } from "../context.ts";
import { errorFields, type Logger } from "../log.ts";
import { nextDueWithin } from "./claim.ts";
import { expireLeases, failUnpublishable, renewLeases, skipOrphanedThreadItems } from "./housekeeping.ts";
import type { JobRunner } from "./jobs.ts";
import type { PublishPool } from "./pool.ts";
import type { StatusChecks } from "./status-checks.ts";
import type { FirstComments } from "./first-comment.ts";
import { expireCommentLeases, renewCommentLeases } from "./first-comment-sql.ts";
import type { WebhookSender } from "./webhooks.ts";
import type { WorkflowRunner } from "./workflows.ts";
import { withQueryDeadline } from "../db/deadline.ts";

/** runUntilIdle: a refused claim is tried again after this pause, and thrown once refused this many times in a row. */
const CLAIM_RETRY_MS = 100;
const CLAIM_FAILURES_THROWN = 50;

export interface LifecycleOptions {
  id: string;
  leaseMs: number;
  /** How long stop() waits for publishes, status checks and periodic jobs in flight. */
  shutdownTimeoutMs: number;
  /** Called at the end of every tick. */
  onTick?: () => Promise<void> | void;
  /** A started engine whose last tick finished longer ago than this reports itself stalled. */
  stallAfterMs: number;
  /** After a lease expired under a crash, how long before the reconciler asks the platform. */
  reconcileSettleMs: number;
}

export interface EngineParts {
  pool: PublishPool;
  checks: StatusChecks;
  /** First comments of published targets (src/engine/first-comment.ts): due ones every tick. */
  comments: FirstComments;
  jobs: JobRunner;
  /** Workflow polls and the items whose slot has come (src/engine/workflows.ts), every tick. */
  workflows: WorkflowRunner;
  /** Webhook deliveries from the outbox (src/engine/webhooks.ts): every tick and on its own short timer. */
  webhooks: WebhookSender;
}

/** How long a look that found nothing falling due within the second holds (armWakeNow). */
const QUIET_MS = 250;

export class EngineLifecycle {
  private stopping = false;
  private cron: Cron | undefined;
  private wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;
  /** Until when (ms) the last look found nothing falling due soon: no look again before then. */
  private quietUntil = 0;
  // Wall-clock times (not ctx.clock): liveness is about real time passing, also under a test clock.
  private startedAt: number | undefined;
  private lastTickAt: number | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly parts: EngineParts,
    private readonly o: LifecycleOptions,
    private readonly log: Logger,
  ) {}

  /** The tick under way, if any: stop() waits for it, so its chores do not meet a closed database. */
  private ticking: Promise<void> | undefined;

  /** One tick: chores, then claim and publish until nothing is due or slots are full. */
  tick(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const run = this.runTick().finally(() => {
      if (this.ticking === run) this.ticking = undefined;
    });
    this.ticking = run;
    return run;
  }

  private async runTick(): Promise<void> {
    try {
      await this.chores();
    } catch (e) {
      this.log.error("engine chores failed", errorFields(e));
    }
    await this.parts.pool.fillSlots();
    await this.guard("periodic jobs failed", () => this.parts.jobs.startDue());
    this.parts.webhooks.kick();
    if (this.o.onTick) await this.guard("tick hook failed", this.o.onTick);
    this.lastTickAt = Date.now();
  }

  /** The last finished tick and the claims in flight; stalled once a started engine stops finishing ticks. */
  health(): EngineHealth {
    const now = Date.now();
    const since = this.lastTickAt ?? this.startedAt;
    return {
      lastTickAt: this.lastTickAt === undefined ? null : new Date(this.lastTickAt),
      claimsInFlight: this.parts.pool.inFlight() + this.parts.checks.checkingIds().length,
      stalled: since !== undefined && !this.stopping && now - since > this.o.stallAfterMs,
    };
  }

  /**
   * Ticks until nothing is due now and nothing is in flight: publishes, status checks and periodic jobs
   * (tests drive the engine this way with their TestClock).
   */
  async runUntilIdle(): Promise<void> {
    const { pool, checks, comments, jobs, workflows } = this.parts;
    const refused = { inARow: 0 };
    for (let i = 0; i < 10_000; i++) {
      await this.tick();
      await pool.idle();
      await checks.settled();
      await comments.settled();
      await jobs.settled();
      await workflows.settled();
      await pool.fillSlots();
      if (pool.inFlight() === 0) {
        await this.chores();
        await comments.settled();
        const claimed = await this.claimOnceOrPause(pool, refused);
        if (claimed === 0 && pool.inFlight() === 0) {
          await this.parts.webhooks.drain();
          return;
        }
      }
    }
  }

  /**
   * runUntilIdle's own claim. One the database refuses (a full disk, a lost connection) is tried again
   * after a pause, as the claim loops try at their next tick; only a refusal that lasts is thrown.
   */
  private async claimOnceOrPause(pool: PublishPool, refused: { inARow: number }): Promise<number | null> {
    try {
      const claimed = await pool.claimOnce();
      refused.inARow = 0;
      return claimed;
    } catch (e) {
      if (++refused.inARow >= CLAIM_FAILURES_THROWN) throw e;
      this.log.error("claim failed", errorFields(e));
      await new Promise((r) => setTimeout(r, CLAIM_RETRY_MS));
      return null;
    }
  }

  /** Ticks every second (croner, protected against overlap), starting now. */
  startTimer(): void {
    this.startedAt = Date.now();
    this.cron = new Cron("* * * * * *", { protect: true, name: `crier-engine-${this.o.id}` }, () => this.tick());
    this.parts.webhooks.startPolling();
    void this.tick();
  }

  /**
   * Between ticks, wakes up exactly when the next target falls due (within the coming second) instead of
   * at the next tick: keeps dispatch lag well under a second.
   */
  armWake(platforms: string[]): void {
    this.armWakeNow(platforms).catch((e) => this.log.error("wake-up check failed", errorFields(e)));
  }

  /**
   * Stops ticking and claiming; claims in flight finish, then waits (bounded) for publishes, status
   * checks and periodic jobs. What is still running then stays under our lease; when it runs out those
   * targets end outcome_unknown, visibly.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.cron?.stop();
    if (this.wake) clearTimeout(this.wake.timer);
    const { pool, checks, comments, jobs, workflows, webhooks } = this.parts;
    jobs.stop();
    comments.stop();
    await pool.stopClaiming();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([
      Promise.all([
        this.ticking,
        pool.publishesSettled(),
        checks.settled(),
        comments.settled(),
        jobs.settled(),
        workflows.settled(),
        webhooks.stop(),
      ]).then(() => false),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(true), this.o.shutdownTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.log.warn("stopped with work still in flight", {
        targets: [...pool.publishingIds(), ...checks.checkingIds()],
        first_comments: comments.postingIds(),
      });
    }
  }

  /** The per-tick housekeeping that moves targets without calling any platform, then due status checks. */
  private async chores(): Promise<void> {
    const { checks, workflows } = this.parts;
    // Each of these statements may be given up when unanswered (a connection that died silently) and
    // run again next tick: applied twice or late, each does what it would have done once. Status checks
    // and workflows claim rows under leases, so they are never given up (src/engine/claim.ts).
    const deadline = (this.ctx.db.statementTimeoutMs || 5_000) + 1_000;
    await withQueryDeadline(deadline, () => this.leaseChores());
    await checks.startDue();
    await this.parts.comments.startDue();
    await workflows.chores();
  }

  private async leaseChores(): Promise<void> {
    const { pool, checks, comments } = this.parts;
    const now = this.ctx.clock.now();
    const until = new Date(now.getTime() + this.o.leaseMs);
    await renewLeases(this.ctx.db, this.o.id, [...pool.publishingIds(), ...checks.checkingIds()], until);
    await renewCommentLeases(this.ctx.db, this.o.id, comments.postingIds(), until);
    const expired = await expireLeases(this.ctx.db, now, this.o.reconcileSettleMs);
    if (expired) this.log.warn("leases expired: targets marked outcome_unknown", { count: expired });
    const lost = await expireCommentLeases(this.ctx.db, now, this.o.reconcileSettleMs);
    if (lost) this.log.warn("leases expired: first comments marked unknown", { count: lost });
    await failUnpublishable(this.ctx.db, now);
    await skipOrphanedThreadItems(this.ctx.db, now);
  }

  /**
   * Looks only at the platforms whose claims came up short: a platform whose claims took all they asked
   * for has more due already, and its next claim comes as its slots free. While a backlog fell due (the
   * first minute of bench/scale's burst) every claim settled with a target due within the second, so each
   * looked, woke and looked again: 39,753 looks in 166 s.
   */
  private async armWakeNow(platforms: string[]): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    if (!platforms.length || this.stopping || (this.wake && this.wake.at > now) || now < this.quietUntil) return;
    const next = await nextDueWithin(this.ctx.db, this.ctx.clock.now(), 1000, platforms);
    // Nothing due within the second: while a backlog drains (everything already due) claims settle many
    // times a second, and each looked again (62,723 looks in bench/scale's burst of 3 minutes). A target
    // made meanwhile and due that soon waits at most QUIET_MS longer, or for the next tick.
    if (!next) this.quietUntil = now + QUIET_MS;
    if (!next || this.stopping) return;
    const at = next.getTime();
    this.wake = {
      at,
      timer: setTimeout(
        () => {
          this.wake = undefined;
          this.parts.pool.claimSoon();
        },
        Math.max(0, at - now) + 1,
      ),
    };
  }

  private async guard(what: string, work: () => Promise<unknown> | unknown): Promise<void> {
    try {
      await work();
    } catch (e) {
      this.log.error(what, errorFields(e));
    }
  }
}
