/**
 * Recurring posts: the subset of RFC 5545 recurrence rules Crier takes, and when a series' occurrences
 * fall. Pure: the posts and series modules check rules with it, the engine's series job
 * (src/engine/series.ts) asks it for the next occurrence.
 *
 * The rule is expanded by the rrule library on "floating" times: the wall-clock time of day in the
 * series' zone written as if it were UTC, so the library never meets a daylight-saving change. Each
 * floating time is then read back as that wall-clock time in the zone with luxon: 09:00 in Berlin stays
 * 09:00 in summer and in winter. A wall-clock time a spring-forward change skips (02:30 on that night)
 * becomes the first time after the gap (03:30), as luxon resolves it.
 */
import { DateTime, IANAZone } from "luxon";
import { RRule, Weekday, type Options } from "rrule";

export const REPEAT_FREQUENCIES = ["DAILY", "WEEKLY", "MONTHLY"] as const;
export const REPEAT_PARTS = ["FREQ", "INTERVAL", "BYDAY", "COUNT", "UNTIL"] as const;
/** Bounds that keep an expansion cheap: a rule asking for more is refused, not truncated. */
export const MAX_COUNT = 1000;
export const MAX_INTERVAL = 366;

const DAYS = { MO: RRule.MO, TU: RRule.TU, WE: RRule.WE, TH: RRule.TH, FR: RRule.FR, SA: RRule.SA, SU: RRule.SU };
const FREQ = { DAILY: RRule.DAILY, WEEKLY: RRule.WEEKLY, MONTHLY: RRule.MONTHLY };

/** Why a repeat is refused: the API answers it as a 400 with this code, naming the part. */
export class RepeatProblem extends Error {
  constructor(
    readonly code: "invalid_repeat_rule" | "invalid_time_zone",
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const ruleProblem = (message: string) =>
  new RepeatProblem(
    "invalid_repeat_rule",
    message,
    'Use FREQ=DAILY|WEEKLY|MONTHLY with optional INTERVAL, BYDAY (MO..SU; for MONTHLY also 1MO..5MO, -1FR) and COUNT or UNTIL, e.g. "FREQ=WEEKLY;BYDAY=MO;COUNT=10".',
  );

export interface ParsedRule {
  freq: (typeof REPEAT_FREQUENCIES)[number];
  interval: number;
  byday: { day: keyof typeof DAYS; n: number | null }[] | null;
  count: number | null;
  /** UNTIL as written: a UTC instant, or a date (the end of that day in the series' zone). */
  until: { instant: Date } | { date: { year: number; month: number; day: number } } | null;
}

/** Checks the zone: an IANA name such as Europe/Berlin or UTC. */
export function checkTimeZone(zone: string): void {
  if (!IANAZone.isValidZone(zone))
    throw new RepeatProblem(
      "invalid_time_zone",
      `time_zone "${zone}" is not an IANA time zone.`,
      'Use a name from the IANA time zone database, such as "Europe/Berlin", "America/New_York" or "UTC".',
    );
}

function positive(part: string, value: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max)
    throw ruleProblem(`${part}=${value}: ${part} must be a whole number from 1 to ${max}.`);
  return Number(value);
}

function parseUntil(value: string): ParsedRule["until"] {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(value);
  if (!m) throw ruleProblem(`UNTIL=${value}: UNTIL must be a date (20261231) or a UTC time (20261231T090000Z).`);
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = DateTime.utc(year, month, day, Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
  if (!date.isValid || date.month !== month || date.day !== day) throw ruleProblem(`UNTIL=${value}: not a real date.`);
  if (m[4] === undefined) return { date: { year, month, day } };
  // RFC 5545: with a zone, UNTIL is given in UTC.
  if (!m[7]) throw ruleProblem(`UNTIL=${value}: a time in UNTIL must be UTC, ending in Z (20261231T090000Z).`);
  return { instant: date.toJSDate() };
}

function parseByDay(value: string, freq: ParsedRule["freq"]): ParsedRule["byday"] {
  return value.split(",").map((item) => {
    const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(item);
    if (!m) throw ruleProblem(`BYDAY=${value}: "${item}" is not a weekday (MO, TU, WE, TH, FR, SA, SU).`);
    if (m[1] === undefined) return { day: m[2] as keyof typeof DAYS, n: null };
    const n = Number(m[1]);
    if (freq !== "MONTHLY") throw ruleProblem(`BYDAY=${value}: a numbered weekday (${item}) needs FREQ=MONTHLY.`);
    if (n === 0 || n < -5 || n > 5) throw ruleProblem(`BYDAY=${value}: "${item}": the number must be 1..5 or -1..-5.`);
    return { day: m[2] as keyof typeof DAYS, n };
  });
}

/** Reads a rule of the subset Crier takes; anything else is a RepeatProblem naming the part. */
export function parseRule(rule: string): ParsedRule {
  const text = rule.trim().replace(/^RRULE:/i, "");
  if (!text) throw ruleProblem("The rule is empty.");
  const parts = new Map<string, string>();
  for (const part of text.split(";")) {
    const eq = part.indexOf("=");
    const key = (eq === -1 ? part : part.slice(0, eq)).trim().toUpperCase();
    const value =
      eq === -1
        ? ""
        : part
            .slice(eq + 1)
            .trim()
            .toUpperCase();
    if (!(REPEAT_PARTS as readonly string[]).includes(key))
      throw ruleProblem(
        `${key || part}: Crier takes only ${REPEAT_PARTS.join(", ")}` +
          (key === "BYHOUR" || key === "BYMINUTE" || key === "BYSECOND"
            ? " (the time of day is publish_at's, in time_zone)."
            : "."),
      );
    if (parts.has(key)) throw ruleProblem(`${key} is given twice.`);
    if (!value) throw ruleProblem(`${key} has no value.`);
    parts.set(key, value);
  }
  const freq = parts.get("FREQ");
  if (!freq) throw ruleProblem("FREQ is missing.");
  if (!(REPEAT_FREQUENCIES as readonly string[]).includes(freq))
    throw ruleProblem(`FREQ=${freq}: Crier repeats DAILY, WEEKLY or MONTHLY.`);
  const f = freq as ParsedRule["freq"];
  if (parts.has("COUNT") && parts.has("UNTIL")) throw ruleProblem("COUNT and UNTIL together: give one of them.");
  return {
    freq: f,
    interval: parts.has("INTERVAL") ? positive("INTERVAL", parts.get("INTERVAL")!, MAX_INTERVAL) : 1,
    byday: parts.has("BYDAY") ? parseByDay(parts.get("BYDAY")!, f) : null,
    count: parts.has("COUNT") ? positive("COUNT", parts.get("COUNT")!, MAX_COUNT) : null,
    until: parts.has("UNTIL") ? parseUntil(parts.get("UNTIL")!) : null,
  };
}

/** A series: its rule, its zone and its start (the first occurrence's earliest time, the time of day). */
export interface Recurrence {
  rule: string;
  timeZone: string;
  start: Date;
}

/** An instant as a floating time: its wall-clock time in the zone, written as UTC (seconds kept, no ms). */
function floating(at: Date, zone: string): Date {
  const d = DateTime.fromJSDate(at, { zone });
  return new Date(Date.UTC(d.year, d.month - 1, d.day, d.hour, d.minute, d.second));
}

/** A floating time read back as that wall-clock time in the zone. */
function instant(f: Date, zone: string): Date {
  return DateTime.fromObject(
    {
      year: f.getUTCFullYear(),
      month: f.getUTCMonth() + 1,
      day: f.getUTCDate(),
      hour: f.getUTCHours(),
      minute: f.getUTCMinutes(),
      second: f.getUTCSeconds(),
    },
    { zone },
  ).toJSDate();
}

function expander(rec: Recurrence): RRule {
  checkTimeZone(rec.timeZone);
  const p = parseRule(rec.rule);
  const opts: Partial<Options> = {
    freq: FREQ[p.freq],
    interval: p.interval,
    dtstart: floating(rec.start, rec.timeZone),
    wkst: RRule.MO,
  };
  if (p.byday)
    opts.byweekday = p.byday.map((b) => (b.n === null ? DAYS[b.day] : new Weekday(DAYS[b.day].weekday, b.n)));
  if (p.count !== null) opts.count = p.count;
  if (p.until)
    opts.until =
      "instant" in p.until
        ? floating(p.until.instant, rec.timeZone)
        : new Date(Date.UTC(p.until.date.year, p.until.date.month - 1, p.until.date.day, 23, 59, 59));
  return new RRule(opts);
}

/** The first occurrence: the first time the rule gives at or after the start; null when it gives none. */
export function firstOccurrence(rec: Recurrence): Date | null {
  const rule = expander(rec);
  const f = rule.after(floating(rec.start, rec.timeZone), true);
  return f ? instant(f, rec.timeZone) : null;
}

function nextWith(rule: RRule, zone: string, after: Date): Date | null {
  // Floating times have whole seconds: an instant inside the same second as an occurrence is that
  // occurrence, not before it.
  let f = rule.after(floating(after, zone), false);
  while (f && instant(f, zone).getTime() <= after.getTime()) f = rule.after(f, false);
  return f ? instant(f, zone) : null;
}

/** The first occurrence strictly after `after`; null when the rule has ended (COUNT, UNTIL). */
export function nextOccurrence(rec: Recurrence, after: Date): Date | null {
  return nextWith(expander(rec), rec.timeZone, after);
}

/** Up to `limit` occurrences strictly after `after`. */
export function occurrencesAfter(rec: Recurrence, after: Date, limit: number): Date[] {
  const rule = expander(rec);
  const out: Date[] = [];
  for (let at = nextWith(rule, rec.timeZone, after); at && out.length < limit;) {
    out.push(at);
    at = nextWith(rule, rec.timeZone, at);
  }
  return out;
}

/** Checks a rule and zone together with a start; answers the first occurrence, refusing a rule with none. */
export function checkRecurrence(rec: Recurrence): Date {
  checkTimeZone(rec.timeZone);
  const first = firstOccurrence(rec);
  if (!first)
    throw ruleProblem(
      `"${rec.rule}" gives no occurrence at or after ${rec.start.toISOString()} (UNTIL is before the start).`,
    );
  return first;
}
