/**
 * A queue's weekly slots as instants: each occurrence is built from a local date and the slot's HH:MM in
 * the queue's IANA zone, never by adding weeks to an instant, so a 09:00 slot stays 09:00 local on both
 * sides of a daylight-saving change (its UTC time moves instead). Pure: no I/O.
 */
import { IANAZone } from "luxon";

export const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"] as const;
export type Day = (typeof DAYS)[number];

export interface Slot {
  day: Day;
  time: string;
}

/** One coming occurrence of a slot. */
export interface Occurrence {
  at: Date;
  /** The wall-clock reading of `at` in the zone (yyyy-MM-ddTHH:mm): the slot's time, or later in a gap. */
  local: string;
  day: Day;
  time: string;
}

const HOUR = 3_600_000;

/**
 * The instant a local date and time denote in a zone. A time the zone repeats (the hour clocks go back)
 * is its first occurrence; a time the zone skips (the hour clocks go forward) is moved forward by the
 * length of the gap, so 02:30 on a spring-forward night in Berlin is 03:30 CEST.
 */
export function localInstant(zone: IANAZone, y: number, m: number, d: number, hh: number, mm: number): Date {
  const naive = Date.UTC(y, m - 1, d, hh, mm);
  const offsets = [...new Set([zone.offset(naive - 24 * HOUR), zone.offset(naive + 24 * HOUR)])];
  const valid = offsets
    .map((o) => naive - o * 60_000)
    .filter((at, i) => zone.offset(at) === offsets[i])
    .sort((a, b) => a - b);
  if (valid.length) return new Date(valid[0]);
  // In the gap: read with the offset before the change, which lands the gap's length later on the clock.
  return new Date(naive - offsets[0] * 60_000);
}

/** A slot's occurrence before its wall-clock reading is written out (only the ones kept need it). */
interface Instant {
  at: Date;
  day: Day;
  time: string;
  /** The zone's offset at `at` in minutes, when the day had no change (else looked up). */
  offset: number | null;
}

/**
 * Per zone and local date: its offset, or null on a date with a change. Asking the runtime for an offset
 * costs microseconds, and every queued post walks the same coming weeks; a few thousand dates are kept.
 */
const dayOffsets = new Map<string, number | null>();

function dayOffset(zone: IANAZone, midnight: number): number | null {
  const key = `${zone.name}|${midnight}`;
  let offset = dayOffsets.get(key);
  if (offset === undefined) {
    // The same offset a day before and two days after: no change in between (zones change at most twice a year).
    const before = zone.offset(midnight - 24 * HOUR);
    offset = before === zone.offset(midnight + 48 * HOUR) ? before : null;
    if (dayOffsets.size >= 5000) dayOffsets.clear();
    dayOffsets.set(key, offset);
  }
  return offset;
}

/** The instants of the slots on one local date, in order: a date without a change uses its one offset. */
function dayInstants(zone: IANAZone, midnight: number, slots: Slot[]): Instant[] {
  const offset = dayOffset(zone, midnight);
  const date = new Date(midnight);
  return slots
    .map((slot) => {
      const [hh, mm] = slot.time.split(":").map(Number);
      const at =
        offset !== null
          ? new Date(midnight + (hh * 60 + mm - offset) * 60_000)
          : localInstant(zone, date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), hh, mm);
      return { at, day: slot.day, time: slot.time, offset };
    })
    .sort((a, b) => a.at.getTime() - b.at.getTime());
}

function* instants(timeZone: string, slots: Slot[], from: Date): Generator<Instant> {
  if (!slots.length) return;
  const zone = IANAZone.create(timeZone);
  // Local dates are walked as UTC midnights of the same calendar date (a day is always 24 hours there).
  const byDay = new Map<number, Slot[]>();
  for (const s of slots) {
    const weekday = (DAYS.indexOf(s.day) + 1) % 7; // getUTCDay: Sunday is 0
    byDay.set(weekday, [...(byDay.get(weekday) ?? []), s]);
  }
  const local = new Date(from.getTime() + zone.offset(from.getTime()) * 60_000);
  // A day early: an odd offset may put an occurrence of the previous local day after `from`.
  let midnight = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - 24 * HOUR;
  let last = -Infinity;
  for (;;) {
    const today = byDay.get(new Date(midnight).getUTCDay());
    for (const o of today ? dayInstants(zone, midnight, today) : []) {
      if (o.at.getTime() < from.getTime() || o.at.getTime() <= last) continue;
      last = o.at.getTime();
      yield o;
    }
    midnight += 24 * HOUR;
  }
}

/** The instant's wall-clock reading in the zone: the instant moved by the zone's offset then, written as UTC. */
const withLocal = (zone: IANAZone, { at, day, time, offset }: Instant): Occurrence => ({
  at,
  day,
  time,
  local: new Date(at.getTime() + (offset ?? zone.offset(at.getTime())) * 60_000).toISOString().slice(0, 16),
});

/** Slot occurrences at or after `from`, in order, without end (instants two slots share come once). */
export function* occurrences(timeZone: string, slots: Slot[], from: Date): Generator<Occurrence> {
  const zone = IANAZone.create(timeZone);
  for (const o of instants(timeZone, slots, from)) yield withLocal(zone, o);
}

/** The first `count` occurrences at or after `from` whose instant is not in `taken` (epoch ms). */
export function freeOccurrences(
  timeZone: string,
  slots: Slot[],
  from: Date,
  taken: Set<number>,
  count: number,
): Occurrence[] {
  const out: Occurrence[] = [];
  if (count <= 0) return out;
  const zone = IANAZone.create(timeZone);
  for (const o of instants(timeZone, slots, from)) {
    if (taken.has(o.at.getTime())) continue;
    out.push(withLocal(zone, o));
    if (out.length === count) break;
  }
  return out;
}

/** The zone's name as the runtime spells it when only the letter case differs, else as given. */
export function zoneName(timeZone: string): string | null {
  // Offsets such as "+01:00" pass the runtime's check but are not zones: no daylight saving to follow.
  if (!/^[A-Za-z]/.test(timeZone) || !IANAZone.isValidZone(timeZone)) return null;
  const resolved = new Intl.DateTimeFormat("en-US", { timeZone }).resolvedOptions().timeZone;
  return resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
}
