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

/**
 * Requests with a missing or invalid API key allowed per client address per minute (a burst of that
 * many, then refilled evenly). Only the failures count: a valid key gives its attempt back.
 */
export const MAX_AUTH_FAILURES_PER_MINUTE = 60;

/** 429 for an address that sent too many invalid keys: it says so, unlike a key's own limit. */
export class AuthFailuresLimited extends ApiError {
  constructor(retryAfterSeconds: number, perMinute: number) {
    super(
      429,
      "rate_limited",
      `This address sent more than ${perMinute} requests with a missing or invalid API key in a minute.`,
      `Wait ${retryAfterSeconds} s (Retry-After), then send a valid key (Authorization: Bearer <API_KEY>).`,
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
  constructor(
    private readonly perMinute: number,
    private readonly refuse: (retryAfterSeconds: number, perMinute: number) => ApiError = (s, n) =>
      new RateLimited(s, n),
  ) {}

  /** Takes one request from the key's bucket, or throws RateLimited. */
  take(keyId: string, now: number): void {
    if (this.perMinute <= 0) return;
    const perMs = this.perMinute / 60_000;
    const b = this.buckets.get(keyId) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + Math.max(0, now - b.at) * perMs);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(keyId, b);
      throw this.refuse(Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)), this.perMinute);
    }
    b.tokens -= 1;
    this.buckets.set(keyId, b);
    // A full bucket carries no information: drop idle keys so the map stays as small as the active set.
    if (this.buckets.size > 10_000) this.prune(now);
  }

  /** Gives back a request taken with take() that turned out not to count. */
  give(keyId: string): void {
    const b = this.buckets.get(keyId);
    if (b) b.tokens = Math.min(this.perMinute, b.tokens + 1);
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

const failureLimiters = new WeakMap<AppContext, RateLimiter>();

/** One limiter of invalid-key requests per client address, per app context (auth.ts and /mcp share it). */
export function authFailureLimiterFor(ctx: AppContext): RateLimiter {
  let l = failureLimiters.get(ctx);
  if (!l)
    failureLimiters.set(
      ctx,
      (l = new RateLimiter(MAX_AUTH_FAILURES_PER_MINUTE, (s, n) => new AuthFailuresLimited(s, n))),
    );
  return l;
}
