/**
 * When numbers are read again. Recent posts move fast and old ones hardly at all, so the reads favour
 * the young: hourly for the first two days, daily until thirty days, weekly after. Followers weekly.
 */
const HOUR = 3600_000;
const DAY = 24 * HOUR;

export const ANALYTICS_SCHEDULE = [
  { until: 2 * DAY, every: HOUR, text: "hourly for the first 2 days" },
  { until: 30 * DAY, every: DAY, text: "daily until 30 days" },
  { until: Infinity, every: 7 * DAY, text: "weekly after that" },
] as const;

export const FOLLOWERS_EVERY_MS = 7 * DAY;
/** Posts made on the platform itself are looked for this often (one page of fetchRecent). */
export const NATIVE_EVERY_MS = 6 * HOUR;
/** After a failed read (5xx, timeout) the next try comes sooner than the regular schedule. */
export const RETRY_AFTER_FAILURE_MS = 15 * 60_000;

/** The next read of a post's numbers, from its age now. */
export function nextMetricsRead(publishedAt: Date, now: Date): Date {
  const age = Math.max(0, now.getTime() - publishedAt.getTime());
  const step = ANALYTICS_SCHEDULE.find((s) => age < s.until)!;
  return new Date(now.getTime() + step.every);
}

/** The next read after one that failed: soon for a passing failure, else the regular schedule. */
export function nextReadAfterFailure(regular: Date, now: Date, passing: boolean): Date {
  return passing ? new Date(Math.min(regular.getTime(), now.getTime() + RETRY_AFTER_FAILURE_MS)) : regular;
}
