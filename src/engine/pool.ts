/**
 * The publish slots of one copy: how many publishes run at once (in all and per platform), the claims
 * that fill free slots with due targets, and the publishes those claims started. A publish frees its slot
 * as soon as the platform answered, and its account once the result is written, so claiming goes on
 * without waiting for the next tick, and other accounts' targets without waiting for the write. Claims
 * take targets ahead of free slots (claimAhead, claimBatch), which start the moment a slot frees: the
 * platform's cap still bounds its calls, and a claim waits until a batch fits, so that the database pays
 * for one claim per many targets however slowly the platform answers.
 */
import type { AppContext } from "../context.ts";
import { errorFields, type Logger } from "../log.ts";
import { claimDue, type ClaimedTarget } from "./claim.ts";
import { publishTarget, type DispatchSettings } from "./dispatch.ts";
import { withQueryDeadline } from "../db/deadline.ts";
import { CollectEvery } from "../os/garbage.ts";

export interface PoolOptions {
  /** Publishes at once in this copy, over all platforms. */
  concurrency: number;
  /** Slots per platform (never above concurrency); platforms absent here are never claimed. */
  platformCaps: Map<string, number>;
  /** Fixed targets per platform to claim ahead of free slots, instead of the estimate (EngineOptions.claimAhead). */
  claimAhead?: number;
  leaseMs: number;
  /**
   * Called whenever the last claim in flight finishes, with the platforms whose claims came up short since
   * the last call: only they may have nothing due now (the lifecycle arms its wake-up for them here).
   */
  onClaimsSettled?: (short: string[]) => void;
}

/**
 * waiting: claimed ahead, to start as soon as a slot of its platform frees; calling: the plugin call is
 * under way and holds one of the platform's slots; writing: the platform answered, only the result write
 * is left (the account stays busy, the slot is free).
 */
type Phase = "waiting" | "calling" | "writing";

interface Running {
  promise?: Promise<void>;
  platform: string;
  accountId: string;
  phase: Phase;
  /** Starts a waiting publish. */
  open?: () => void;
}

/**
 * Publishes between two collections (src/os/garbage.ts). Left to itself, the collector let a copy's heap
 * swing between 17 and 51 MB during a burst and RSS reach 2.06 × idle (bench/scale (e), 300 publishes a
 * second per copy); collecting every 500 publishes kept the heap within 16–25 MB and RSS at 1.48 ×, for
 * about 10 ms of collection every 1.6 s at that pace.
 */
const PUBLISHES_PER_COLLECTION = 500;

/**
 * After a slow platform's claim came up short, it is claimed again once its cap ÷ this many of its
 * publishes ended (8 at a cap of 64), and never after more than half of what it has running, so that its
 * slots never all empty while it waits (dryFor).
 */
const DRY_ENDS_PER_CAP = 8;

/** Weight of the newest sample in the running averages of claim and call times. */
const EWMA_WEIGHT = 0.2;

// One claim at a time. Two at once took the same oldest-due accounts and the second often came back empty
// or short: with the claim as cheap as it is now (migrations 0017, 0018), one loop drained as fast with
// the instant emulator (977–1,014 against 809–947 targets/s) and faster with the 100 ms one (132–145
// against 115–125), from 5 empty claims in place of 800 (bench/dispatch).
const MAX_PARALLEL_CLAIMS = 1;

export class PublishPool {
  private readonly running = new Map<string, Running>();
  /**
   * Platforms whose last claim found fewer due targets than it had room for, with how many of their
   * publishes must still end before they are claimed again: claims after a publish ends leave them out
   * (each would be a nearly empty query) until the next tick or wake-up, or until that many publishes of
   * theirs ended (each frees an account that may have a next target). See dryFor().
   */
  private readonly dry = new Map<string, number>();
  /** Platforms whose claims came up short since the claims last settled (onClaimsSettled). */
  private readonly short = new Set<string>();
  private readonly reserved = new Map<string, number>();
  private reservedTotal = 0;
  private claims = 0;
  private claimAgain = false;
  private closed = false;
  /** claimPost calls under way: claim loops do not start meanwhile. */
  private held = 0;
  private claimsSettledWaiters: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];
  /** Running averages, in ms: a claim's round trip, and a plugin call per platform (see ahead()). */
  private claimMs = 0;
  private readonly callMs = new Map<string, number>();
  private readonly collect = new CollectEvery(PUBLISHES_PER_COLLECTION, true);

  constructor(
    private readonly ctx: AppContext,
    private readonly settings: DispatchSettings,
    private readonly o: PoolOptions,
    private readonly log: Logger,
  ) {}

  /** Claims made and targets they took since start (bench/dispatch prints targets per claim). */
  readonly claimStats = { claims: 0, claimed: 0, empty: 0 };

  inFlight(): number {
    return this.running.size;
  }

  /**
   * Whether a claim is likely soon: a publish is calling a platform whose due work is not known to be
   * exhausted, so its answer frees a slot that a claim fills. The recorder waits for such a claim to carry
   * its results; when none is coming (the platform came up dry) it writes them at once, since until they
   * are written their accounts stay busy and their publishes unfinished.
   */
  claimExpected(): boolean {
    for (const r of this.running.values()) if (r.phase === "calling" && !this.dry.has(r.platform)) return true;
    return false;
  }

  /** Targets this copy is publishing right now (their leases are renewed every tick). */
  publishingIds(): string[] {
    return [...this.running.keys()];
  }

  /** Due work may exist on any platform (a tick, a new post): start a claim loop, or ask a running one to look again. */
  claimSoon(): void {
    this.dry.clear();
    this.claimMore();
  }

  /** Claims for the platforms not known to have nothing due (after a publish ends: its platform's next target). */
  private claimMore(): void {
    // While a post is being made due and claimed (claimPost), the loops wait; claimPost starts one after.
    if (this.closed || this.held > 0) return;
    if (this.claims < MAX_PARALLEL_CLAIMS) void this.claimUntilNothingFits();
    else this.claimAgain = true;
  }

  /** Starts claiming and resolves when no claim is in flight; the publishes they started may still run. */
  fillSlots(): Promise<void> {
    this.claimSoon();
    return this.claimsSettled();
  }

  /** Resolves when no claim is in flight. */
  claimsSettled(): Promise<void> {
    if (this.claims === 0) return Promise.resolve();
    return new Promise((resolve) => this.claimsSettledWaiters.push(resolve));
  }

  /** Resolves when no claim and no publish is in flight. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Makes a post due (`makeDue`, the caller's transaction) and claims its targets right away, then starts
   * publishing them. Claim loops of this copy are held meanwhile and those in flight finish first, so a
   * tick cannot take the targets between the two; `beforeStart` runs once the claim is committed and before
   * any publish starts.
   */
  async claimPost(postId: string, beforeStart?: () => Promise<void>, makeDue?: () => Promise<void>): Promise<void> {
    this.held++;
    try {
      await this.claimsSettled();
      await makeDue?.();
      if (this.closed || this.count("calling") >= this.o.concurrency) return;
      // Out of the request's database deadline: the claim must not be given up on (claim.ts), and the
      // publishes it starts are the engine's, bounded like those of any tick, not by this request.
      await withQueryDeadline(null, () => this.countedClaim(() => this.claimRound(postId, beforeStart)));
    } finally {
      this.held--;
      if (this.held === 0) this.claimSoon();
    }
  }

  /** One claim right now, outside the claim loops: how many targets it took. */
  claimOnce(): Promise<number> {
    return this.claimRound();
  }

  /** Stops claiming; resolves once the claims in flight finished (what they claim is published, not left to expire). */
  async stopClaiming(): Promise<void> {
    this.closed = true;
    await this.claimsSettled();
  }

  /** Resolves when the publishes running now have finished. */
  async publishesSettled(): Promise<void> {
    await Promise.allSettled([...this.running.values()].map((r) => r.promise));
  }

  private isIdle() {
    return this.running.size === 0 && this.claims === 0;
  }

  private notifyIdle() {
    if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * Room to claim per platform: the cap and what may be claimed ahead, minus the plugin calls under way,
   * the publishes waiting for a slot and what claims in flight reserved.
   */
  private freeSlots(skipDry: boolean): Record<string, number> {
    const free: Record<string, number> = {};
    const held = new Map<string, number>();
    for (const r of this.running.values())
      if (r.phase !== "writing") held.set(r.platform, (held.get(r.platform) ?? 0) + 1);
    for (const [platform, cap] of this.o.platformCaps) {
      if (skipDry && this.dry.has(platform)) continue;
      const n = cap + this.ahead(platform, cap) - (held.get(platform) ?? 0) - (this.reserved.get(platform) ?? 0);
      // Less room than a batch means every slot is calling and targets are waiting for one: the claim
      // waits until a batch fits, so that one claim takes many targets (its cost is mostly per call). A
      // claim for one post (publish now, skipDry false) takes whatever room there is.
      if (n >= (skipDry ? this.batch(platform, cap) : 1)) free[platform] = n;
    }
    return free;
  }

  /**
   * Targets of a platform claimed beyond its slots: one batch (claimBatch), and as many more as its calls
   * end while a claim is on its way (claimAhead), so the slots that free during the claim of the next
   * batch find a target waiting.
   */
  private ahead(platform: string, cap: number): number {
    if (this.o.claimAhead !== undefined) return Math.min(cap, this.o.claimAhead);
    const callMs = this.callMs.get(platform) ?? 0;
    return claimBatch(cap, this.claimMs, callMs) + claimAhead(cap, this.claimMs, callMs);
  }

  /** The fewest targets of a platform worth a claim; never more than what it claims ahead (see claimBatch). */
  private batch(platform: string, cap: number): number {
    const batch = claimBatch(cap, this.claimMs, this.callMs.get(platform) ?? 0);
    return Math.max(1, Math.min(batch, this.ahead(platform, cap)));
  }

  private async claimRound(postId?: string, beforeStart?: () => Promise<void>): Promise<number> {
    // A claim for one post looks at every platform; it says nothing of the others' due work either.
    const free = this.freeSlots(!postId);
    const limit =
      this.o.concurrency + this.aheadTotal() - this.count("calling") - this.count("waiting") - this.reservedTotal;
    if (limit <= 0 || Object.keys(free).length === 0) return 0;
    for (const [p, n] of Object.entries(free)) this.reserved.set(p, (this.reserved.get(p) ?? 0) + n);
    this.reservedTotal += limit;
    try {
      const now = this.ctx.clock.now();
      const sent = performance.now();
      // Results waiting for company ride along: written first in the claim's own transaction, so their
      // accounts are free for this very claim (their calls ended; the write is all that held them).
      const carried = this.settings.recorder.takeForClaim();
      const settled = new Set(carried?.targetIds);
      const busy = new Set<string>();
      for (const [id, r] of this.running) if (!settled.has(id)) busy.add(r.accountId);
      let claimed: ClaimedTarget[];
      try {
        claimed = await claimDue(this.ctx.db, {
          now,
          leaseUntil: new Date(now.getTime() + this.o.leaseMs),
          claimedBy: this.settings.claimedBy,
          caps: free,
          limit,
          busyAccounts: [...busy],
          postId,
          results: carried ?? undefined,
        });
      } catch (e) {
        carried?.failed();
        throw e;
      }
      carried?.written();
      this.claimMs = ewma(this.claimMs, performance.now() - sent);
      this.claimStats.claims++;
      this.claimStats.claimed += claimed.length;
      if (!postId && claimed.length < limit) {
        const taken = new Map<string, number>();
        for (const t of claimed) taken.set(t.platform, (taken.get(t.platform) ?? 0) + 1);
        for (const [p, n] of Object.entries(free))
          if ((taken.get(p) ?? 0) < n) {
            this.dry.set(p, this.dryFor(p, taken.get(p) ?? 0));
            this.short.add(p);
          }
        if (!this.claimExpected()) this.settings.recorder.claimNotComing();
      }
      if (!claimed.length) {
        this.claimStats.empty++;
        return 0;
      }
      await beforeStart?.();
      // The claim read every job with its target; they count as running from now on, and start as slots allow.
      for (const t of claimed) this.startPublish(t);
      this.openWaiting();
      return claimed.length;
    } finally {
      for (const [p, n] of Object.entries(free)) this.reserved.set(p, (this.reserved.get(p) ?? 0) - n);
      this.reservedTotal -= limit;
    }
  }

  /**
   * Publishes of a platform to wait for after a claim came up short (it took `taken`). Where its calls are
   * slow (claimBatch above 1), each ended publish frees one account, so claiming again at every end took a
   * few targets per claim: in the drain's tail, with four copies, 182 claims of 6 targets each at 640 buffer
   * pages apiece (a claim looks through its whole window when it cannot fill it; bench/scale (d)). Waiting
   * for an eighth of the cap's ends makes each such claim worth its cost: (d) made 189–194 claims with one
   * copy (was 228–248) and 264 with four (was 383–518). Never for more than half of what it has running:
   * waiting for all of them emptied its slots before each claim, and two copies in bench/dispatch (b)
   * then went idle between claims (908 statements against 499). Where calls are quick the claim takes
   * whatever freed, as before.
   */
  private dryFor(platform: string, taken: number): number {
    const cap = this.o.platformCaps.get(platform) ?? 1;
    if (claimBatch(cap, this.claimMs, this.callMs.get(platform) ?? 0) <= 1) return 1;
    let running = taken;
    for (const r of this.running.values()) if (r.platform === platform) running++;
    return Math.max(1, Math.min(Math.floor(cap / DRY_ENDS_PER_CAP), Math.floor(running / 2)));
  }

  private count(phase: Phase, platform?: string): number {
    let n = 0;
    for (const r of this.running.values()) if (r.phase === phase && (!platform || r.platform === platform)) n++;
    return n;
  }

  /** What may be claimed ahead over all platforms, never more than twice the copy's concurrency. */
  private aheadTotal(): number {
    let n = 0;
    for (const [platform, cap] of this.o.platformCaps) n += this.ahead(platform, cap);
    return Math.min(n, 2 * this.o.concurrency);
  }

  /** Starts waiting publishes, in the order they were claimed, while their platform and the copy have slots. */
  private openWaiting() {
    let calling = this.count("calling");
    for (const r of this.running.values()) {
      if (calling >= this.o.concurrency) return;
      if (r.phase !== "waiting" || this.count("calling", r.platform) >= (this.o.platformCaps.get(r.platform) ?? 0))
        continue;
      r.phase = "calling";
      calling++;
      r.open!();
    }
  }

  private startPublish(target: ClaimedTarget) {
    const running: Running = { platform: target.platform, accountId: target.accountId, phase: "waiting" };
    let startedAt = 0;
    // The platform answered: the slot is free for another account's target while the result is written
    // (the account itself stays busy until then, here and in the claim's own check).
    const callEnded = () => {
      if (running.phase !== "calling") return;
      running.phase = "writing";
      this.callMs.set(target.platform, ewma(this.callMs.get(target.platform) ?? 0, performance.now() - startedAt));
      this.openWaiting();
      if (!this.dry.has(target.platform)) this.claimMore();
    };
    const opened = new Promise<void>((resolve) => (running.open = resolve));
    running.promise = opened
      .then(() => {
        startedAt = performance.now();
        return publishTarget(this.ctx, this.settings, target, callEnded);
      })
      .then(
        () => undefined,
        (e) => {
          // Our own failure before or after the plugin call: the lease runs out and the target ends
          // outcome_unknown unless the result was recorded; never silently requeued.
          this.log.error("publish crashed", {
            target_id: target.id,
            ...errorFields(e),
            stack: (e as Error)?.stack,
          });
        },
      )
      .finally(() => {
        this.running.delete(target.id);
        const ends = this.dry.get(target.platform);
        if (ends !== undefined) {
          if (ends <= 1) this.dry.delete(target.platform);
          else this.dry.set(target.platform, ends - 1);
        }
        this.collect.add();
        // A publish that ended without calling the platform (a disconnected account) held its slot until now.
        this.openWaiting();
        this.claimMore();
        this.notifyIdle();
      });
    this.running.set(target.id, running);
  }

  /** A claim loop: claims until nothing more is due or no slot is free, and again if asked meanwhile. */
  private claimUntilNothingFits(): Promise<void> {
    return this.countedClaim(async () => {
      do {
        this.claimAgain = false;
        while (!this.closed && (await this.claimRound()) > 0) {
          /* claim while there is work and room */
        }
      } while (this.claimAgain && !this.closed);
    });
  }

  /** Runs a claim counted in `claims`, so close() and the idle waits know about it. */
  private async countedClaim(work: () => Promise<unknown>): Promise<void> {
    this.claims++;
    try {
      await work();
    } catch (e) {
      this.log.error("claim failed", errorFields(e));
    } finally {
      this.claims--;
      if (this.claims === 0) {
        for (const w of this.claimsSettledWaiters.splice(0)) w();
        const short = [...this.short];
        this.short.clear();
        if (!this.closed) this.o.onClaimsSettled?.(short);
      }
      this.notifyIdle();
    }
  }
}

/**
 * How many targets of a platform to claim beyond its free slots: about as many as its calls end while a
 * claim is on its way (averages in ms, 0 when not measured yet), so a slot that frees starts its next
 * publish at once instead of waiting for the claim after. When calls take far longer than a claim (real
 * platforms: 100 ms and more) this is 0 and the batch decides (claimBatch); with calls as quick as a claim
 * it is up to the cap. A target claimed ahead waits about one claim's round trip, under the
 * same lease as one being published (so a crash in that moment ends it outcome_unknown, like a target
 * between its claim and its call; the reconciler then finds it absent and tries once more where the
 * platform can be asked).
 */
export function claimAhead(cap: number, claimMs: number, callMs: number): number {
  if (!claimMs || !callMs) return 0;
  return Math.min(cap, Math.floor((cap * claimMs) / callMs));
}

/**
 * How many targets of a platform a claim waits for room for. Where its calls take far longer than a
 * claim (SLOW_CALL, as real platforms' 100 ms and more do), slots free one at a time between claims, and
 * claiming as each frees took 1.4 targets per claim and cost PostgreSQL four times as much per target as
 * claims back to back: a claim's cost to the database is mostly per call (a round trip, a transaction, the
 * candidate scan). There a claim waits for twice the cap (batches of one cap still cost 1.3 to 1.8 times as
 * much, bench/dispatch (b)), and as many are claimed ahead (ahead()), so the slots keep calling while the
 * batch waits for room: a target then waits for a slot up to about two calls. A copy that crashes
 * meanwhile leaves its waiting targets to end outcome_unknown like those in flight (the lease cannot tell
 * them apart); where the platform can be asked, the reconciler finds them absent and tries each once more.
 * Where calls are as quick as claims (or not measured yet), claims come back to back and take what freed:
 * 1, so one copy does not take every account's target ahead of the others.
 */
export function claimBatch(cap: number, claimMs: number, callMs: number): number {
  if (!claimMs || !callMs || callMs < SLOW_CALL * claimMs) return 1;
  return 2 * cap;
}

/** Calls this many times longer than a claim count as slow (claimBatch). */
const SLOW_CALL = 4;

function ewma(avg: number, sample: number): number {
  return avg ? avg + EWMA_WEIGHT * (sample - avg) : sample;
}
