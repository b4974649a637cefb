/**
 * Retry-After as platforms send it: delay-seconds or an HTTP date (RFC 9110 §10.2.3). The provider client
 * reads it for every 429 and 5xx; plugins whose platforms use other status codes for "slow down" read it
 * here too, so the header is parsed in one place.
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
