/**
 * RFC 3339 date-times as the API takes them: a real calendar date, a time and an offset, in years
 * 1970–9999. `Date.parse` alone is too lenient (it rolls 30 February over to 2 March and takes a date
 * without a time) and covers years PostgreSQL's timestamptz cannot hold.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

export const MIN_YEAR = 1970;
export const MAX_YEAR = 9999;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** The instant a strict RFC 3339 date-time names, or null when the text is not one. */
export function parseDateTime(text: string): Date | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  // Every response's date-times pass through here too (the format check): no arrays made per call.
  const year = +m[1];
  const month = +m[2];
  const day = +m[3];
  if (year < MIN_YEAR || year > MAX_YEAR) return null;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (+m[4] > 23 || +m[5] > 59 || +m[6] > 59) return null;
  if (m[9] !== undefined && (+m[9] > 23 || +m[10] > 59)) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * Texts already found valid. The format check runs on every date-time of every answer too (a list of
 * accounts has two per account), and the regex and Date parse were a few per cent of a request's CPU.
 */
const valid = new Set<string>();

export function isDateTime(text: string): boolean {
  if (valid.has(text)) return true;
  if (parseDateTime(text) === null) return false;
  if (valid.size >= 10_000) valid.clear();
  valid.add(text);
  return true;
}
