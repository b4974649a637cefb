/**
 * The engine of one copy: a croner tick every second (never overlapping itself) does the chores and
 * starts a drain, which claims due targets while this copy has free slots and publishes them. Finished
 * publishes free their account at once, so the drain claims again without waiting for the next tick.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { Cron } from "croner";
import type { AppContext } from "../context.ts";
import type { OwnStorageOpener } from "../platform/host/media-guard.ts";
import { platformSettings } from "../platform/host/provider.ts";
import { claimDue, nextDueWithin, type ClaimedTarget } from "./claim.ts";
import { claimPolls, loadJobs, pollTarget, publishTarget, type DispatchSettings, type Job } from "./dispatch.ts";
import { Recorder } from "./recorder.ts";
import { expireLeases, failUnpublishable, renewLeases, skipOrphanedThreadItems } from "./housekeeping.ts";
import { clearLocalEngine, setLocalEngine, type LocalEngine } from "../local-engine.ts";

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
  /** How long stop() waits for publishes in flight. */
  shutdownTimeoutMs?: number;
  random?: () => number;
  ownStorage?: OwnStorageOpener;
  /**
   * Between ticks, wake up exactly when the next target falls due (within the coming second) instead
   * of at the next tick: keeps dispatch lag well under a second. startEngine turns it on.
   */
  wakeForNextDue?: boolean;
  /** Called at the end of every tick (the server hangs media cleanup here). */
  onTick?: () => Promise<void> | void;
}

export interface Engine extends LocalEngine {
  readonly id: string;
  /** One tick: chores, then claim and publish until nothing is due or slots are full. */
  tick(): Promise<void>;
  /** Runs ticks until nothing is due now and nothing is in flight (tests: with the TestClock). */
  runUntilIdle(): Promise<void>;
  inFlight(): number;
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
  shutdownTimeoutMs: 30_000,
};

export function createEngine(ctx: AppContext, opts: EngineOptions = {}): Engine {
  const fromConfig = { leaseMs: ctx.config.publishLeaseSeconds * 1000, maxAttempts: ctx.config.publishMaxAttempts };
  const o = { ...ENGINE_DEFAULTS, ...fromConfig, ...Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) } as typeof ENGINE_DEFAULTS & EngineOptions;
  const id = opts.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const log = ctx.log.child({ component: "engine", engine: id });
  const settings: DispatchSettings = {
    claimedBy: id,
    maxAttempts: o.maxAttempts,
    backoffBaseMs: o.backoffBaseMs,
    backoffMaxMs: o.backoffMaxMs,
    submitPollMs: o.submitPollMs,
    submitDeadlineMs: o.submitDeadlineMs,
    random: o.random ?? Math.random,
    // The server's own media URLs are opened from storage, not fetched back over the network.
    ownStorage: o.ownStorage ?? ctx.storage,
    recorder: new Recorder(ctx.db, id),
  };
  // Per platform: CRIER_<PLATFORM>_CONCURRENCY when the operator set it (they know their rate limits),
  // else the plugin's declaration; never above the copy's own concurrency.
  const platformCaps = new Map(ctx.platforms.list().filter((p) => p.publish).map((p) => {
    const set = Number(platformSettings(ctx, p.platform).CONCURRENCY);
    return [p.platform, Math.min(Number.isInteger(set) && set > 0 ? set : p.concurrency ?? o.concurrency, o.concurrency)] as const;
  }));
  const running = new Map<string, { promise: Promise<void>; platform: string; accountId: string }>();
  // Status checks of submitted targets in flight (they run beside the ticks, not inside them).
  const polling = new Map<string, Promise<void>>();
  let stopping = false;
  // Claims run several at once (each commit waits for the disk; PostgreSQL flushes concurrent commits
  // together), each on slots it reserved first, so together they never exceed a cap.
  const reserved = new Map<string, number>();
  let reservedTotal = 0;
  let fills = 0;
  let fillsDone: Promise<void> | undefined;
  let fillsDoneResolve: (() => void) | undefined;
  let again = false;
  let idleWaiters: (() => void)[] = [];
  let wake: { at: number; timer: ReturnType<typeof setTimeout> } | undefined;

  async function armWake() {
    const now = ctx.clock.now().getTime();
    if (wake && wake.at > now) return;
    const next = await nextDueWithin(ctx.db, ctx.clock.now(), 1000);
    if (!next || stopping) return;
    const at = next.getTime();
    wake = { at, timer: setTimeout(() => { wake = undefined; kick(); }, Math.max(0, at - now) + 1) };
  }

  /** Free slots per platform: the cap minus what runs and what other claims in flight reserved. */
  const caps = () => {
    const free: Record<string, number> = {};
    const used = new Map<string, number>();
    for (const r of running.values()) used.set(r.platform, (used.get(r.platform) ?? 0) + 1);
    for (const [platform, cap] of platformCaps) {
      const n = cap - (used.get(platform) ?? 0) - (reserved.get(platform) ?? 0);
      if (n > 0) free[platform] = n;
    }
    return free;
  };

  const notifyIdle = () => {
    if (running.size === 0 && fills === 0) for (const w of idleWaiters.splice(0)) w();
  };

  function start(target: ClaimedTarget, jobs: Promise<Map<string, Job>>) {
    const promise = jobs.then((m) => m.get(target.id), () => undefined)
      .then((loaded) => publishTarget(ctx, settings, target, loaded))
      .then(() => undefined, (e) => {
        // Our own failure before or after the plugin call: the lease runs out and the target ends
        // outcome_unknown unless the result was recorded; never silently requeued.
        log.error("publish crashed", { target_id: target.id, error: (e as Error)?.message, stack: (e as Error)?.stack });
      })
      .finally(() => {
        running.delete(target.id);
        if (!stopping) kick();
        notifyIdle();
      });
    running.set(target.id, { promise, platform: target.platform, accountId: target.accountId });
  }

  async function claimRound(postId?: string, beforeStart?: () => Promise<void>): Promise<number> {
    const free = caps();
    const limit = o.concurrency - running.size - reservedTotal;
    if (limit <= 0 || Object.keys(free).length === 0) return 0;
    for (const [p, n] of Object.entries(free)) reserved.set(p, (reserved.get(p) ?? 0) + n);
    reservedTotal += limit;
    try {
      const now = ctx.clock.now();
      const claimed = await claimDue(ctx.db, {
        now,
        leaseUntil: new Date(now.getTime() + o.leaseMs),
        claimedBy: id,
        caps: free,
        limit,
        busyAccounts: [...new Set([...running.values()].map((r) => r.accountId))],
        postId,
      });
      if (!claimed.length) return 0;
      await beforeStart?.();
      // One query loads every claimed job; they count as running from now on.
      const jobs = loadJobs(ctx, claimed.map((t) => t.id));
      for (const t of claimed) start(t, jobs);
      return claimed.length;
    } finally {
      for (const [p, n] of Object.entries(free)) reserved.set(p, (reserved.get(p) ?? 0) - n);
      reservedTotal -= limit;
    }
  }

  const MAX_PARALLEL_CLAIMS = 2;

  /** Claims until nothing more is due or no slot is free. Several may run; kick() starts them. */
  function fill(): Promise<void> {
    return claiming(async () => {
      do {
        again = false;
        while (!stopping && (await claimRound()) > 0) { /* claim while there is work and room */ }
      } while (again && !stopping);
    });
  }

  /** Runs claims counted in `fills`, so stop() and idle waits know about them. */
  async function claiming(work: () => Promise<unknown>): Promise<void> {
    fills++;
    try {
      await work();
    } catch (e) {
      log.error("claim failed", { error: (e as Error)?.message });
    } finally {
      fills--;
      if (fills === 0) {
        fillsDoneResolve?.();
        fillsDone = fillsDoneResolve = undefined;
        if (o.wakeForNextDue && !stopping) armWake().catch((e) => log.error("wake-up check failed", { error: (e as Error)?.message }));
      }
      notifyIdle();
    }
  }

  /** Resolves when no claim is in flight. */
  function drain(): Promise<void> {
    kick();
    if (fills === 0) return Promise.resolve();
    fillsDone ??= new Promise<void>((r) => { fillsDoneResolve = r; });
    return fillsDone;
  }

  function kick() {
    if (stopping) return;
    if (fills < MAX_PARALLEL_CLAIMS) void fill();
    else again = true;
  }

  async function chores() {
    const now = ctx.clock.now();
    await renewLeases(ctx.db, id, [...running.keys(), ...polling.keys()], new Date(now.getTime() + o.leaseMs));
    const expired = await expireLeases(ctx.db, now);
    if (expired) log.warn("leases expired: targets marked outcome_unknown", { count: expired });
    await failUnpublishable(ctx.db, now);
    await skipOrphanedThreadItems(ctx.db, now);
    const polls = (await claimPolls(ctx, { ...settings, leaseMs: o.leaseMs }, 50)).filter((t) => !polling.has(t));
    for (const t of polls) {
      polling.set(t, pollTarget(ctx, settings, t)
        .catch((e) => log.error("status check failed", { target_id: t, error: (e as Error)?.message }))
        .finally(() => polling.delete(t)));
    }
  }

  async function tick() {
    if (stopping) return;
    try {
      await chores();
    } catch (e) {
      log.error("engine chores failed", { error: (e as Error)?.message });
    }
    await drain();
    if (o.onTick) {
      try {
        await o.onTick();
      } catch (e) {
        log.error("tick hook failed", { error: (e as Error)?.message });
      }
    }
  }

  const idle = () => new Promise<void>((resolve) => {
    if (running.size === 0 && fills === 0) resolve();
    else idleWaiters.push(resolve);
  });

  const engine: Engine = {
    id,
    tick,
    kick,
    async claimPost(postId, beforeStart) {
      if (stopping || running.size >= o.concurrency) return kick();
      await claiming(() => claimRound(postId, beforeStart));
    },
    async runUntilIdle() {
      for (let i = 0; i < 10_000; i++) {
        await tick();
        await idle();
        await Promise.allSettled([...polling.values()]);
        await drain();
        if (running.size === 0) {
          await chores();
          if ((await claimRound()) === 0 && running.size === 0) return;
        }
      }
    },
    inFlight: () => running.size,
    async stop() {
      stopping = true;
      if (wake) clearTimeout(wake.timer);
      clearLocalEngine(ctx, engine);
      // Claims already in flight finish (what they claim is published, not left to expire), then wait.
      await drain();
      const left = [...[...running.values()].map((r) => r.promise), ...polling.values()];
      if (left.length) log.info("waiting for publishes in flight", { count: left.length });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = await Promise.race([
        Promise.allSettled(left).then(() => false),
        new Promise<boolean>((r) => { timer = setTimeout(() => r(true), o.shutdownTimeoutMs); }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        // They stay processing under our lease; when it runs out they end outcome_unknown, visibly.
        log.warn("stopped with publishes still in flight", { targets: [...running.keys()] });
      }
    },
  };
  setLocalEngine(ctx, engine);
  return engine;
}

/**
 * Starts the engine of a `crier serve` copy: a tick every second, protected against overlap.
 * stop() stops claiming, waits (bounded) for the publishes in flight, and returns.
 */
export function startEngine(ctx: AppContext, opts: EngineOptions = {}): { engine: Engine; stop(): Promise<void> } {
  const engine = createEngine(ctx, { wakeForNextDue: true, ...opts });
  const cron = new Cron("* * * * * *", { protect: true, name: `crier-engine-${engine.id}` }, () => engine.tick());
  void engine.tick();
  return {
    engine,
    async stop() {
      cron.stop();
      await engine.stop();
    },
  };
}

/** One tick of a throwaway engine, for tests and one-off runs; waits until what it started is done. */
export async function runTick(ctx: AppContext, opts: EngineOptions = {}): Promise<void> {
  const engine = createEngine(ctx, opts);
  try {
    await engine.runUntilIdle();
  } finally {
    await engine.stop();
  }
}
