import type { AppContext } from "../context.ts";
import { ApiError } from "./errors.ts";

/** 429 rate_limited with the seconds until the key may call again. */
export class RateLimited extends ApiError {
  constructor(retryAfterSeconds: number, perMinute: number) {
    super(
      429,
      "rate_limited",
      `This API key made more than ${perMinute} requests in a minute.`,
      `Wait ${retryAfterSeconds} s (Retry-After) before the next request, or spread requests out.`,
      { "retry-after": String(retryAfterSeconds) },
    );
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per API key: RATE_LIMIT_PER_MINUTE requests, refilled evenly over the minute, so a
 * burst of that size is allowed and the sustained rate is capped. Buckets live in this copy's memory:
 * N copies behind a load balancer allow up to N times the rate (documented).
 */
export class RateLimiter {
  private buckets = new Map<string, Bucket>();
  constructor(private readonly perMinute: number) {}

  /** Takes one request from the key's bucket, or throws RateLimited. */
  take(keyId: string, now: number): void {
    if (this.perMinute <= 0) return;
    const perMs = this.perMinute / 60_000;
    const b = this.buckets.get(keyId) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + Math.max(0, now - b.at) * perMs);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(keyId, b);
      throw new RateLimited(Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)), this.perMinute);
    }
    b.tokens -= 1;
    this.buckets.set(keyId, b);
    // A full bucket carries no information: drop idle keys so the map stays as small as the active set.
    if (this.buckets.size > 10_000) this.prune(now);
  }

  private prune(now: number) {
    const perMs = this.perMinute / 60_000;
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * perMs >= this.perMinute) this.buckets.delete(k);
  }
}

const limiters = new WeakMap<AppContext, RateLimiter>();

/** One limiter per app context, shared by every module's auth. */
export function limiterFor(ctx: AppContext): RateLimiter {
  let l = limiters.get(ctx);
  if (!l) limiters.set(ctx, (l = new RateLimiter(ctx.config.rateLimitPerMinute)));
  return l;
}
