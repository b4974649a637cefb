import type { AppContext } from "../../context.ts";
import { SignInRateLimited } from "./errors.ts";

/**
 * Sign-in attempts allowed in a burst, and how fast they come back:
 * - per account (guessing one user's password, from any number of addresses): 5, then one a minute;
 * - per browser that signed in to that account before (its device cookie, device.ts): the same, counted
 *   apart from the account's, so someone else's guesses never lock the user's own browser out;
 * - per client address (spraying one guess at many users): 20, then one every 45 s (20 per 15 minutes).
 */
export const MAX_FAILURES_PER_USER = 5;
export const ACCOUNT_REFILL_MS = 60_000;
export const MAX_FAILURES_PER_ADDRESS = 20;
export const ADDRESS_REFILL_MS = 45_000;

interface Bucket {
  tokens: number;
  at: number;
}

interface Limit {
  key: string;
  max: number;
  refillMs: number;
}

/** An attempt taken from each bucket before the password is checked; given back when it was right. */
export interface Reservation {
  refund(): void;
}

/**
 * Token buckets per account (or known browser of the account) and per address, in this copy's memory
 * (like the API key limiter): N copies behind a load balancer allow up to N times as many guesses.
 *
 * An attempt is reserved before the slow password check, synchronously, so parallel requests cannot all
 * pass a check that only counts finished failures; a correct password gives its attempt back.
 *
 * Locking a chosen user out: anyone can use up an account's attempts, but the lock is short (the next
 * attempt comes back within a minute, all of them within five) and does not reach a browser the user
 * signed in from before, which has its own bucket. A sustained attacker gets one guess a minute per
 * account at most, whatever number of addresses it has.
 */
export class SignInThrottle {
  private buckets = new Map<string, Bucket>();

  /** Takes one attempt from every bucket that applies, or none and throws 429 when one is empty. */
  reserve(email: string, address: string, device: string | undefined, now: number): Reservation {
    const limits = this.limits(email, address, device);
    let wait = 0;
    for (const l of limits) {
      const b = this.refill(l, now);
      if (b.tokens < 1) wait = Math.max(wait, Math.ceil(((1 - b.tokens) * l.refillMs) / 1000));
    }
    if (wait > 0) throw new SignInRateLimited(wait);
    for (const l of limits) this.buckets.get(l.key)!.tokens -= 1;
    if (this.buckets.size > 10_000) this.prune(now);
    let refunded = false;
    return {
      refund: () => {
        if (refunded) return;
        refunded = true;
        for (const l of limits) {
          const b = this.buckets.get(l.key);
          if (b) b.tokens = Math.min(l.max, b.tokens + 1);
        }
      },
    };
  }

  private limits(email: string, address: string, device: string | undefined): Limit[] {
    const user = email.trim().toLowerCase();
    return [
      device
        ? { key: `device:${user}:${device}`, max: MAX_FAILURES_PER_USER, refillMs: ACCOUNT_REFILL_MS }
        : { key: `user:${user}`, max: MAX_FAILURES_PER_USER, refillMs: ACCOUNT_REFILL_MS },
      { key: `addr:${address}`, max: MAX_FAILURES_PER_ADDRESS, refillMs: ADDRESS_REFILL_MS },
    ];
  }

  private refill(l: Limit, now: number): Bucket {
    const b = this.buckets.get(l.key) ?? { tokens: l.max, at: now };
    b.tokens = Math.min(l.max, b.tokens + Math.max(0, now - b.at) / l.refillMs);
    b.at = now;
    this.buckets.set(l.key, b);
    return b;
  }

  /** A bucket full again carries no information: drop those so the map stays as small as the active set. */
  private prune(now: number) {
    const slowest = Math.max(ACCOUNT_REFILL_MS * MAX_FAILURES_PER_USER, ADDRESS_REFILL_MS * MAX_FAILURES_PER_ADDRESS);
    for (const [k, b] of this.buckets) if (now - b.at > slowest) this.buckets.delete(k);
  }
}

const throttles = new WeakMap<AppContext, SignInThrottle>();

export function throttleFor(ctx: AppContext): SignInThrottle {
  let t = throttles.get(ctx);
  if (!t) throttles.set(ctx, (t = new SignInThrottle()));
  return t;
}
