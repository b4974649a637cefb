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
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The instant a strict RFC 3339 date-time names, or null when the text is not one. */
export function parseDateTime(text: string): Date | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < MIN_YEAR || year > MAX_YEAR) return null;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return null;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}

export const isDateTime = (text: string): boolean => parseDateTime(text) !== null;
