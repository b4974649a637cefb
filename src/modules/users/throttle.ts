import type { AppContext } from "../../context.ts";
import { SignInRateLimited } from "./errors.ts";

const WINDOW_MS = 15 * 60_000;
/** Failed sign-ins allowed per window: per user (guessing one password) and per client address (spraying many). */
export const MAX_FAILURES_PER_USER = 5;
export const MAX_FAILURES_PER_ADDRESS = 20;

interface Window {
  failures: number;
  startedAt: number;
}

/**
 * Counts failed sign-ins per user and per address in fixed 15-minute windows, in this copy's memory (like
 * the API key limiter): N copies behind a load balancer allow up to N times as many guesses.
 */
export class SignInThrottle {
  private windows = new Map<string, Window>();

  /** Throws 429 when either the user or the address has used up its failures for this window. */
  check(email: string, address: string, now: number) {
    for (const [key, max] of this.keys(email, address)) {
      const w = this.live(key, now);
      if (w && w.failures >= max) throw new SignInRateLimited(Math.ceil((w.startedAt + WINDOW_MS - now) / 1000));
    }
  }

  fail(email: string, address: string, now: number) {
    for (const [key] of this.keys(email, address)) {
      const w = this.live(key, now) ?? { failures: 0, startedAt: now };
      w.failures++;
      this.windows.set(key, w);
    }
    if (this.windows.size > 10_000) for (const [k] of this.windows) if (!this.live(k, now)) this.windows.delete(k);
  }

  private keys(email: string, address: string): [string, number][] {
    return [
      [`user:${email.trim().toLowerCase()}`, MAX_FAILURES_PER_USER],
      [`addr:${address}`, MAX_FAILURES_PER_ADDRESS],
    ];
  }

  private live(key: string, now: number): Window | undefined {
    const w = this.windows.get(key);
    return w && now - w.startedAt < WINDOW_MS ? w : undefined;
  }
}

const throttles = new WeakMap<AppContext, SignInThrottle>();

export function throttleFor(ctx: AppContext): SignInThrottle {
  let t = throttles.get(ctx);
  if (!t) throttles.set(ctx, (t = new SignInThrottle()));
  return t;
}
