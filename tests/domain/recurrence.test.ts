/**
 * The recurrence subset: what is refused (naming the part), and when occurrences fall, as local
 * wall-clock times in the series' zone across daylight-saving changes.
 */
import { describe, expect, test } from "bun:test";
import {
  checkRecurrence,
  firstOccurrence,
  nextOccurrence,
  occurrencesAfter,
  parseRule,
  RepeatProblem,
} from "../../src/domain/recurrence.ts";

const refused = (rule: string): RepeatProblem => {
  try {
    parseRule(rule);
  } catch (e) {
    if (e instanceof RepeatProblem) return e;
    throw e;
  }
  throw new Error(`accepted: ${rule}`);
};
const iso = (ds: Date[]) => ds.map((d) => d.toISOString());

describe("the subset", () => {
  test("FREQ, INTERVAL, BYDAY, COUNT and UNTIL are taken; an RRULE: prefix too", () => {
    expect(parseRule("FREQ=WEEKLY;BYDAY=MO;COUNT=10")).toMatchObject({ freq: "WEEKLY", count: 10, interval: 1 });
    expect(parseRule("RRULE:FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20271231").byday).toEqual([{ day: "FR", n: -1 }]);
    expect(parseRule("freq=daily;interval=2").interval).toBe(2);
  });

  test.each([
    ["FREQ=YEARLY", "FREQ=YEARLY"],
    ["FREQ=HOURLY", "FREQ=HOURLY"],
    ["FREQ=DAILY;BYHOUR=9", "BYHOUR"],
    ["FREQ=MONTHLY;BYMONTHDAY=1", "BYMONTHDAY"],
    ["FREQ=WEEKLY;WKST=SU", "WKST"],
    ["FREQ=WEEKLY;COUNT=3;UNTIL=20271231", "COUNT and UNTIL"],
    ["FREQ=WEEKLY;BYDAY=1MO", "FREQ=MONTHLY"],
    ["FREQ=WEEKLY;BYDAY=XX", '"XX"'],
    ["FREQ=WEEKLY;COUNT=0", "COUNT=0"],
    ["FREQ=WEEKLY;INTERVAL=-1", "INTERVAL=-1"],
    ["FREQ=WEEKLY;UNTIL=20270101T090000", "UTC"],
    ["FREQ=WEEKLY;UNTIL=20270230", "not a real date"],
    ["BYDAY=MO", "FREQ is missing"],
    ["FREQ=WEEKLY;FREQ=DAILY", "twice"],
    ["", "empty"],
  ])("%s is refused, naming %s", (rule, part) => {
    const e = refused(rule);
    expect(e.code).toBe("invalid_repeat_rule");
    expect(e.message).toContain(part);
  });

  test("a zone that is not IANA is invalid_time_zone; a rule with no occurrence after its start is refused", () => {
    const start = new Date("2027-01-04T08:00:00Z");
    expect(() => checkRecurrence({ rule: "FREQ=DAILY", timeZone: "Mars/Olympus", start })).toThrow(
      expect.objectContaining({ code: "invalid_time_zone" }),
    );
    expect(() => checkRecurrence({ rule: "FREQ=DAILY;UNTIL=20261231", timeZone: "UTC", start })).toThrow(
      expect.objectContaining({ code: "invalid_repeat_rule" }),
    );
  });
});

describe("occurrences", () => {
  test("weekly on Monday at 09:00 Berlin stays 09:00 local across the spring and autumn changes", () => {
    const rec = { rule: "FREQ=WEEKLY;BYDAY=MO", timeZone: "Europe/Berlin", start: new Date("2027-03-22T08:00:00Z") };
    expect(iso(occurrencesAfter(rec, new Date("2027-03-21T00:00:00Z"), 3))).toEqual([
      "2027-03-22T08:00:00.000Z", // CET, UTC+1
      "2027-03-29T07:00:00.000Z", // CEST, UTC+2 after 28 March
      "2027-04-05T07:00:00.000Z",
    ]);
    expect(iso(occurrencesAfter(rec, new Date("2027-10-20T00:00:00Z"), 2))).toEqual([
      "2027-10-25T07:00:00.000Z", // still CEST
      "2027-11-01T08:00:00.000Z", // CET again after 31 October
    ]);
  });

  test("the first occurrence is the rule's first time at or after the start; COUNT counts from there", () => {
    // A Wednesday start with BYDAY=MO begins the next Monday, at the start's time of day.
    const rec = { rule: "FREQ=WEEKLY;BYDAY=MO;COUNT=2", timeZone: "UTC", start: new Date("2027-01-06T10:30:00Z") };
    expect(firstOccurrence(rec)?.toISOString()).toBe("2027-01-11T10:30:00.000Z");
    expect(nextOccurrence(rec, new Date("2027-01-11T10:30:00Z"))?.toISOString()).toBe("2027-01-18T10:30:00.000Z");
    expect(nextOccurrence(rec, new Date("2027-01-18T10:30:00Z"))).toBeNull();
  });

  test("monthly on the last Friday, until a date (inclusive, in the zone)", () => {
    const rec = {
      rule: "FREQ=MONTHLY;BYDAY=-1FR;UNTIL=20270430",
      timeZone: "America/New_York",
      start: new Date("2027-01-01T14:00:00Z"), // 09:00 EST
    };
    expect(iso(occurrencesAfter(rec, new Date("2027-01-01T00:00:00Z"), 10))).toEqual([
      "2027-01-29T14:00:00.000Z",
      "2027-02-26T14:00:00.000Z",
      "2027-03-26T13:00:00.000Z", // EDT from 14 March: still 09:00 local
      "2027-04-30T13:00:00.000Z",
    ]);
  });

  test("a time the spring-forward night skips moves to the first time after the gap", () => {
    const rec = { rule: "FREQ=DAILY;COUNT=3", timeZone: "Europe/Berlin", start: new Date("2027-03-27T01:30:00Z") }; // 02:30 CET
    expect(iso(occurrencesAfter(rec, new Date("2027-03-27T00:00:00Z"), 3))).toEqual([
      "2027-03-27T01:30:00.000Z",
      "2027-03-28T01:30:00.000Z", // 02:30 does not exist that night: 03:30 CEST
      "2027-03-29T00:30:00.000Z",
    ]);
  });

  test("every other day, by INTERVAL", () => {
    const rec = { rule: "FREQ=DAILY;INTERVAL=2", timeZone: "UTC", start: new Date("2027-01-01T09:00:00Z") };
    expect(iso(occurrencesAfter(rec, new Date("2027-01-01T09:00:00Z"), 2))).toEqual([
      "2027-01-03T09:00:00.000Z",
      "2027-01-05T09:00:00.000Z",
    ]);
  });
});
