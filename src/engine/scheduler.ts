/**
 * The engine of one copy, put together: the publish pool (pool.ts: slots, claims, publishes), status
 * checks of submitted targets (status-checks.ts), periodic jobs (jobs.ts) and the lifecycle that drives
 * them (lifecycle.ts: ticks, wake-ups, stop). Every write of a result goes through the recorder.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { AppContext, LocalDispatch } from "../context.ts";
import type { OwnStorageOpener } from "../platform/host/media-guard.ts";
import { platformSettings } from "../platform/host/provider.ts";
import type { DispatchSettings } from "./dispatch.ts";
import { JobRunner, PERIODIC_JOBS, type PeriodicJob } from "./jobs.ts";
import { EngineLifecycle } from "./lifecycle.ts";
import { PublishPool } from "./pool.ts";
import { Recorder } from "./recorder.ts";
import { StatusChecks } from "./status-checks.ts";
import { FirstComments } from "./first-comment.ts";
import { WebhookSender } from "./webhooks.ts";
import { workflowRunner } from "./workflows.ts";
import { withQueryDeadline } from "../db/deadline.ts";

export interface EngineOptions {
  /** Recorded as claimed_by on the targets this copy takes. */
  id?: string;
  /** Publishes at once in this copy, over all platforms (a plugin's `concurrency` caps its own share). */
  concurrency?: number;
  /** How long a claim holds without renewal; renewed every tick while the publish runs. */
  leaseMs?: number;
  maxAttempts?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  submitPollMs?: number;
  submitDeadlineMs?: number;
  /** How long after an unknown outcome the reconciler asks the platform whether the post exists. */
  reconcileSettleMs?: number;
  /** How long stop() waits for publishes, status checks and periodic jobs in flight. */
  shutdownTimeoutMs?: number;
  random?: () => number;
  /**
   * Targets per platform claimed beyond its free slots. Left out, the copy estimates it from how long its
   * claims and the platform's calls take (claimAhead in pool.ts); tests fix it to make it deterministic.
   */
  claimAhead?: number;
  ownStorage?: OwnStorageOpener;
  /**
   * Overrides the media guard's address rule for this engine's publishes. Tests only, whose emulators
   * listen on loopback; no configuration reaches it, so a server always refuses private addresses.
   */
  allowMediaAddress?: (ip: string) => boolean;
  /**
   * Between ticks, wake up exactly when the next target falls due (within the coming second) instead
   * of at the next tick: keeps dispatch lag well under a second. startEngine turns it on.
   */
  wakeForNextDue?: boolean;
  /** Called at the end of every tick (the server hangs media cleanup here). */
  onTick?: () => Promise<void> | void;
  /** A started engine whose last tick finished longer ago than this reports itself stalled (/readyz 503). */
  stallAfterMs?: number;
  /** Periodic jobs this engine runs under a lease (none by default; startEngine runs PERIODIC_JOBS of jobs.ts). */
  jobs?: readonly PeriodicJob[];
}

/** What src/server.ts wires into the context as its LocalDispatch, and what tests drive. */
export interface Engine extends LocalDispatch {
  readonly id: string;
  /** One tick: chores, then claim and publish until nothing is due or slots are full. */
  tick(): Promise<void>;
  /** Runs ticks until nothing is due now and nothing is in flight (tests: with the TestClock). */
  runUntilIdle(): Promise<void>;
  /** Publishes in flight. */
  inFlight(): number;
  /** Claims this copy made and the targets they took (bench/dispatch reports targets per claim). */
  claimStats(): { claims: number; claimed: number; empty: number };
  /** Ticks every second from now on (startEngine does this). */
  startTimer(): void;
  /** Stops ticking and claiming and waits (bounded by shutdownTimeoutMs) for what is in flight. */
  stop(): Promise<void>;
}

export const ENGINE_DEFAULTS = {
  concurrency: 32,
  leaseMs: 120_000,
  maxAttempts: 5,
  backoffBaseMs: 5_000,
  backoffMaxMs: 15 * 60_000,
  submitPollMs: 10_000,
  submitDeadlineMs: 2 * 3600_000,
  reconcileSettleMs: 30_000,
  shutdownTimeoutMs: 30_000,
  stallAfterMs: 10_000,
};

type ResolvedOptions = typeof ENGINE_DEFAULTS & EngineOptions;

export function createEngine(ctx: AppContext, opts: EngineOptions = {}): Engine {
  const fromConfig = {
    leaseMs: ctx.config.publishLeaseSeconds * 1000,
    maxAttempts: ctx.config.publishMaxAttempts,
    concurrency: ctx.config.publishConcurrency ?? ENGINE_DEFAULTS.concurrency,
  };
  const o = {
    ...ENGINE_DEFAULTS,
    ...fromConfig,
    ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)),
  } as ResolvedOptions;
  const id = opts.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = ctx.log.child({ component: "engine", engine: id });
  const settings: DispatchSettings = {
    claimedBy: id,
    maxAttempts: o.maxAttempts,
    backoffBaseMs: o.backoffBaseMs,
    backoffMaxMs: o.backoffMaxMs,
    submitPollMs: o.submitPollMs,
    submitDeadlineMs: o.submitDeadlineMs,
    reconcileSettleMs: o.reconcileSettleMs,
    random: o.random ?? Math.random,
    // The server's own media URLs are opened from storage, not fetched back over the network.
    ownStorage: o.ownStorage ?? ctx.storage,
    allowMediaAddress: o.allowMediaAddress,
    recorder: new Recorder(ctx.db, id, log, o.leaseMs),
  };
  const pool = new PublishPool(
    ctx,
    settings,
    {
      concurrency: o.concurrency,
      platformCaps: platformCaps(ctx, o.concurrency),
      claimAhead: o.claimAhead,
      leaseMs: o.leaseMs,
      onClaimsSettled: o.wakeForNextDue ? (short) => life.armWake(short) : undefined,
    },
    log,
  );
  // Results are written in batches while more are on their way (src/engine/recorder.ts).
  settings.recorder.moreComing = () => pool.claimExpected();
  // A published target's first comment is posted at once by this copy (the tick finds any it missed).
  const comments = new FirstComments(ctx, settings, o.leaseMs, log);
  settings.afterPublished = (targetId) => comments.postNow(targetId);
  const parts = {
    pool,
    checks: new StatusChecks(ctx, settings, o.leaseMs, log),
    comments,
    jobs: new JobRunner(ctx, o.jobs ?? [], id, o.leaseMs, log),
    // settings.random, never o.random: that one is undefined unless a test fixed it.
    workflows: workflowRunner(ctx, { claimedBy: id, leaseMs: o.leaseMs, random: settings.random }),
    webhooks: new WebhookSender(ctx, { claimedBy: id, leaseMs: o.leaseMs, random: settings.random }, log),
  };
  const life = new EngineLifecycle(
    ctx,
    parts,
    {
      id,
      leaseMs: o.leaseMs,
      shutdownTimeoutMs: o.shutdownTimeoutMs,
      onTick: o.onTick,
      stallAfterMs: o.stallAfterMs,
      reconcileSettleMs: o.reconcileSettleMs,
    },
    log,
  );
  return {
    id,
    tick: () => life.tick(),
    runUntilIdle: () => life.runUntilIdle(),
    // Called from API requests: what the wake-up starts is the engine's work, outside the request's
    // database deadline (src/db/deadline.ts), like every tick's.
    wake: () => void withQueryDeadline(null, () => pool.claimSoon()),
    claimPost: (postId, beforeStart, makeDue) => pool.claimPost(postId, beforeStart, makeDue),
    inFlight: () => pool.inFlight(),
    claimStats: () => ({ ...pool.claimStats }),
    health: () => life.health(),
    startTimer: () => life.startTimer(),
    stop: () => life.stop(),
  };
}

/**
 * Slots per platform: CRIER_<PLATFORM>_CONCURRENCY when the operator set it (they know their rate
 * limits), else the plugin's declaration; never above the copy's own concurrency.
 */
function platformCaps(ctx: AppContext, concurrency: number): Map<string, number> {
  return new Map(
    ctx.platforms
      .list()
      .filter((p) => p.publish)
      .map((p) => {
        const set = Number(platformSettings(ctx, p.platform).CONCURRENCY);
        return [
          p.platform,
          Math.min(Number.isInteger(set) && set > 0 ? set : (p.concurrency ?? concurrency), concurrency),
        ] as const;
      }),
  );
}

/**
 * Starts the engine of a `crier serve` copy: a tick every second, protected against overlap, and
 * wake-ups for the next due target. stop() stops claiming, waits (bounded) for what is in flight, returns.
 * The caller wires it into the context (ctx.dispatch) so the API can wake it.
 */
export function startEngine(ctx: AppContext, opts: EngineOptions = {}): Engine {
  const engine = createEngine(ctx, { wakeForNextDue: true, jobs: PERIODIC_JOBS, ...opts });
  engine.startTimer();
  return engine;
}

/** A throwaway engine that publishes what is due until idle, then stops (tests and one-off runs). */
export async function runUntilIdle(ctx: AppContext, opts: EngineOptions = {}): Promise<void> {
  const engine = createEngine(ctx, opts);
  try {
    await engine.runUntilIdle();
  } finally {
    await engine.stop();
  }
}
