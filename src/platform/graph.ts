/**
 * What Meta's Graph APIs (Facebook, Instagram, Threads) share: the error body
 * `{error:{message, type, code, error_subcode}}` and what its codes mean for an attempt.
 */
import type { FailureOutcome, ProviderResponse } from "./sdk.ts";

interface GraphError { message?: string; type?: string; code?: number; error_subcode?: number; error_user_msg?: string }

// Throttling codes: application, user and page request limits, and the newer business-use-case one.
const THROTTLED = new Set([4, 17, 32, 613, 80001, 80002, 80004]);

export function classifyGraph(res: ProviderResponse): FailureOutcome | undefined {
  const err = (res.body as { error?: GraphError } | null)?.error;
  if (!err || typeof err.code !== "number") return undefined;
  const reason = err.error_user_msg ?? err.message ?? `Graph error ${err.code}`;
  if (err.code === 190 || err.code === 102) return { kind: "auth_expired", reason };
  if (THROTTLED.has(err.code)) return { kind: "retryable", reason: `rate limited: ${reason}`, retryAfterMs: 10 * 60_000 };
  if (err.code === 1 || err.code === 2) return { kind: "retryable", reason };
  if (res.status >= 500) return undefined;
  return { kind: "permanent", reason, code: String(err.error_subcode ?? err.code) };
}
