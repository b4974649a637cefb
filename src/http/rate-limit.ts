import type { AppContext } from "../context.ts";
import { ApiError } from "./errors.ts";

/** Where a key stands in its bucket after a request: what the RateLimit header fields report. */
export interface RateLimitState {
  /** Requests a minute (the bucket's size). */
  limit: number;
  /** Requests that may be made at once now. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

/**
 * The RateLimit-Policy and RateLimit header fields of draft-ietf-httpapi-ratelimit-headers-10 (IETF
 * httpapi, checked 2026-11-26): one policy named "default", q requests per w seconds, and r requests
 * remaining with t seconds until the quota is whole again. Sent on every authenticated answer, so
 * clients can pace themselves before a 429.
 */
export function rateLimitHeaders(s: RateLimitState): Record<string, string> {
  return {
    "ratelimit-policy": `"default";q=${s.limit};w=60`,
    ratelimit: `"default";r=${s.remaining};t=${s.resetSeconds}`,
  };
}

/** 429 rate_limited with the seconds until the key may call again. */
export class RateLimited extends ApiError {
  constructor(retryAfterSeconds: number, state: RateLimitState) {
    super(
      429,
      "rate_limited",
      `This API key made more than ${state.limit} requests in a minute.`,
      `Wait ${retryAfterSeconds} s (Retry-After) before the next request, or spread requests out (RateLimit says how many remain).`,
      { "retry-after": String(retryAfterSeconds), ...rateLimitHeaders(state) },
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
  constructor(retryAfterSeconds: number, state: RateLimitState) {
    super(
      429,
      "rate_limited",
      `This address sent more than ${state.limit} requests with a missing or invalid API key in a minute.`,
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
    private readonly refuse: (retryAfterSeconds: number, state: RateLimitState) => ApiError = (s, state) =>
      new RateLimited(s, state),
  ) {}

  /** Takes one request from the key's bucket and says where it stands, or throws RateLimited. Null when unlimited. */
  take(keyId: string, now: number): RateLimitState | null {
    if (this.perMinute <= 0) return null;
    const perMs = this.perMinute / 60_000;
    const b = this.buckets.get(keyId) ?? { tokens: this.perMinute, at: now };
    b.tokens = Math.min(this.perMinute, b.tokens + Math.max(0, now - b.at) * perMs);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(keyId, b);
      throw this.refuse(Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000)), this.state(b, perMs));
    }
    b.tokens -= 1;
    this.buckets.set(keyId, b);
    // A full bucket carries no information: drop idle keys so the map stays as small as the active set.
    if (this.buckets.size > 10_000) this.prune(now);
    return this.state(b, perMs);
  }

  private state(b: Bucket, perMs: number): RateLimitState {
    return {
      limit: this.perMinute,
      remaining: Math.max(0, Math.floor(b.tokens)),
      resetSeconds: Math.ceil((this.perMinute - b.tokens) / perMs / 1000),
    };
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
