/** UTC calendar helpers. The service reasons in UTC only (days, months, quotas). */

const MS_PER_DAY = 86_400_000;

/**
 * Extended ISO 8601 date-time with a mandatory zone: YYYY-MM-DDThh:mm[:ss[.fraction]](Z|±hh:mm).
 * A zone is required because a local time is ambiguous for a service used worldwide.
 */
const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

const MIN_YEAR = 1970;
const MAX_YEAR = 9999;

/** Parses a strict ISO 8601 timestamp; null for anything else (caller maps to invalid_parameter). */
export function parseIsoTimestamp(value: string): Date | null {
  if (typeof value !== 'string' || value.length > 40) return null;
  const m = ISO_TIMESTAMP.exec(value);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  // Date has millisecond resolution; finer digits are truncated, not rounded, so a
  // timestamp never moves into the next second.
  const millis = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0').slice(0, 3));
  if (year < MIN_YEAR || year > MAX_YEAR) return null;
  if (month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  // No hour 24 and no leap second 60: both are legal in some profiles but JS Date cannot
  // represent them faithfully.
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[8] === undefined) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (offsetHours * 60 + offsetMins) * (m[9] === '-' ? -1 : 1);
  }
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  const date = new Date(utc);
  return Number.isNaN(date.getTime()) ? null : date;
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one.
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

export function startOfUtcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/** UTC has no DST, so a day is always 24 h. */
export function addDays(at: Date, days: number): Date {
  return new Date(at.getTime() + days * MS_PER_DAY);
}

/** YYYY-MM-DD of the UTC calendar date. */
export function utcDateString(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** Monthly quotas reset here (docs/API.md, "Rate limits"). Date.UTC rolls December into January. */
export function startOfNextUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** YYYY-MM, the key monthly usage is stored under. */
export function utcMonthKey(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/**
 * A value that is the same for every instant of a UTC calendar period (a day's or a month's
 * key), asked on every request: computed once per period and kept with the period's bounds,
 * so an instant inside them costs two comparisons. Any order of instants gives the right value.
 */
export function perUtcPeriod<T>(period: 'day' | 'month', value: (at: Date) => T): (ms: number) => T {
  let startMs = 0;
  let endMs = 0;
  let last!: T;
  return (ms) => {
    if (ms >= startMs && ms < endMs) return last;
    const at = new Date(ms);
    const start = period === 'day' ? startOfUtcDay(at) : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
    startMs = start.getTime();
    endMs = (period === 'day' ? addDays(start, 1) : startOfNextUtcMonth(at)).getTime();
    last = value(at);
    return last;
  };
}
