/**
 * Reading a platform's non-2xx answers: the reason and code in its error body, Retry-After, and the
 * default mapping of an HTTP status to an Outcome kind. The provider HTTP client (src/platform/host)
 * applies them to every call; plugins use them where a platform answers in its own way.
 */
import type { FailureOutcome, ProviderResponse } from "./sdk.ts";
import { parseRetryAfter } from "./retry-after.ts";

export type { FailureOutcome, ProviderResponse };
export { parseRetryAfter };

/**
 * A plugin may recognise its platform's way of saying "expired token" or "slow down" (Bluesky answers
 * 400 ExpiredToken, Telegram puts retry_after in the body). Returning undefined keeps the default.
 */
export type ResponseClassifier = (res: ProviderResponse) => FailureOutcome | undefined;

const MAX_REASON = 500;

/** Pulls a human-readable reason out of the error bodies platforms send. */
export function reasonOf(body: unknown, status: number): string {
  const pick = (o: unknown): string | undefined => {
    if (typeof o === "string") return o.trim() || undefined;
    if (!o || typeof o !== "object") return undefined;
    const r = o as Record<string, unknown>;
    for (const k of [
      "message",
      "error_description",
      "description",
      "detail",
      "developer_message",
      "display_message",
      "title",
      "error_message",
    ]) {
      if (typeof r[k] === "string" && r[k]) return r[k] as string;
    }
    if (r.error && typeof r.error === "object") return pick(r.error);
    if (typeof r.error === "string") return r.error;
    if (Array.isArray(r.errors) && r.errors.length) return pick(r.errors[0]);
    return undefined;
  };
  const text = pick(body) ?? `HTTP ${status}`;
  return text.length > MAX_REASON ? text.slice(0, MAX_REASON) + "…" : text;
}

/** A machine code from the error body when the platform gives one (`error: "ExpiredToken"`, `code: 190`). */
export function codeOf(body: unknown): string | undefined {
  if (!body || typeof body !== "object") return undefined;
  const r = body as Record<string, unknown>;
  if (typeof r.error === "string") return r.error;
  if (r.error && typeof r.error === "object") {
    const e = r.error as Record<string, unknown>;
    if (typeof e.code === "string" || typeof e.code === "number") return String(e.code);
  }
  if (typeof r.code === "string" || typeof r.code === "number") return String(r.code);
  if (typeof r.error_code === "string" || typeof r.error_code === "number") return String(r.error_code);
  return undefined;
}

/** The default mapping of a non-2xx answer; plugins refine it through `classify`. */
export function classifyStatus(res: ProviderResponse, now: Date): FailureOutcome {
  const reason = reasonOf(res.body, res.status);
  if (res.status === 429) {
    return {
      kind: "retryable",
      reason: `rate limited: ${reason}`,
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), now),
    };
  }
  if (res.status >= 500) {
    // A 5xx to the creating call does not say the post was not made (it may fail after writing it),
    // unless the platform honours an idempotency key on it.
    if (res.creates && !res.idempotent)
      return { kind: "unknown", reason: `platform error ${res.status} after the creating call was sent: ${reason}` };
    return {
      kind: "retryable",
      reason: `platform error ${res.status}: ${reason}`,
      retryAfterMs: parseRetryAfter(res.headers.get("retry-after"), now),
    };
  }
  if (res.status === 401) return { kind: "auth_expired", reason };
  const code = codeOf(res.body);
  return { kind: "permanent", reason, ...(code !== undefined && { code }) };
}
