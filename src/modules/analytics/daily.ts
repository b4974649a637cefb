/**
 * The overview's per-day series: the numbers of the copies published on each calendar day of the range,
 * counted in the asker's time zone so a chart's days are the user's days.
 */
import { BadRequest } from "../../http/errors.ts";
import type { Numbers } from "./numbers.ts";

export interface DailyEntry {
  date: string;
  posts: number;
  views: number | null;
  engagement: number | null;
}

/** A YYYY-MM-DD formatter in the zone, or a 400 naming the zone when it is not an IANA name. */
export function dayKeyIn(timeZone: string): (d: Date) => string {
  let f: Intl.DateTimeFormat;
  try {
    f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  } catch {
    throw new BadRequest(
      "invalid_time_zone",
      `time_zone "${timeZone}" is not an IANA time zone.`,
      'Use a name from the IANA time zone database, such as "Europe/Berlin", "America/New_York" or "UTC".',
    );
  }
  return (d) => f.format(d);
}

// Steps shorter than the shortest day (23 h at a DST change) meet every calendar day of the range.
const STEP_MS = 6 * 3600_000;

/** Sums of the numbers a platform gives: null when no copy of the day gives that kind of number. */
const add = (sum: number | null, v: number | null) => (v === null ? sum : (sum ?? 0) + v);

export function dailySeries(
  items: (Numbers & { publishedAt: Date })[],
  start: Date,
  end: Date,
  dayKey: (d: Date) => string,
): DailyEntry[] {
  const days = new Map<string, DailyEntry>();
  for (let t = start.getTime(); t < end.getTime(); t += STEP_MS) {
    const date = dayKey(new Date(t));
    if (!days.has(date)) days.set(date, { date, posts: 0, views: null, engagement: null });
  }
  const last = dayKey(end);
  if (!days.has(last)) days.set(last, { date: last, posts: 0, views: null, engagement: null });
  for (const i of items) {
    const day = days.get(dayKey(i.publishedAt));
    if (!day) continue;
    day.posts += 1;
    day.views = add(day.views, i.views);
    for (const v of [i.likes, i.comments, i.shares, i.saves]) day.engagement = add(day.engagement, v);
  }
  return [...days.values()];
}
