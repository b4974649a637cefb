/**
 * Compose's repeat choices as the RFC 5545 rule POST /v1/posts takes in `repeat.rule` (the subset Crier
 * accepts: FREQ daily, weekly or monthly, INTERVAL, BYDAY, COUNT or UNTIL).
 */
export type Frequency = "none" | "daily" | "weekly" | "monthly";
export const WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface RepeatChoice {
  frequency: Frequency;
  interval: number;
  /** Weekly only; empty means the weekday of the first occurrence. */
  days: Weekday[];
  end: { kind: "count"; count: number } | { kind: "until"; date: string };
}

export const noRepeat = (): RepeatChoice => ({
  frequency: "none",
  interval: 1,
  days: [],
  end: { kind: "count", count: 10 },
});

/** "20261231": UNTIL as a date, which Crier reads as the end of that day in the series' time zone. */
const untilOf = (date: string) => date.replace(/-/g, "");

/** The rule string, or null for "does not repeat". */
export function buildRule(c: RepeatChoice): string | null {
  if (c.frequency === "none") return null;
  const parts = [`FREQ=${c.frequency.toUpperCase()}`];
  if (c.interval > 1) parts.push(`INTERVAL=${Math.floor(c.interval)}`);
  if (c.frequency === "weekly" && c.days.length)
    parts.push(`BYDAY=${WEEKDAYS.filter((d) => c.days.includes(d)).join(",")}`);
  parts.push(c.end.kind === "count" ? `COUNT=${Math.max(1, Math.floor(c.end.count))}` : `UNTIL=${untilOf(c.end.date)}`);
  return parts.join(";");
}
