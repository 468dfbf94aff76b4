/**
 * How the record page says its numbers: pure text helpers (no HTML), so they are tested alone.
 * Figures keep the API's rounding (2 decimals; p-values and the Brier score 4); profit and
 * drawdown are in units of stake, as the API's `*_units` figures (docs/API.md, "Units").
 */

/** The typographic minus sign (U+2212). */
export const MINUS_SIGN = '\u2212';
const integerFormat = new Intl.NumberFormat('en-US');
const fixedFormats = new Map<number, Intl.NumberFormat>();

function fixed(value: number, decimals: number): string {
  let format = fixedFormats.get(decimals);
  if (!format) {
    format = new Intl.NumberFormat('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    fixedFormats.set(decimals, format);
  }
  // A typographic minus, and never "-0.00".
  const text = format.format(Math.abs(value));
  return value < 0 && /[1-9]/.test(text) ? `${MINUS_SIGN}${text}` : text;
}

/** 1234 -> "1,234". */
export function formatInteger(value: number): string {
  return integerFormat.format(value);
}

/** A number with `decimals` decimals, a typographic minus when negative: "2.20", "−0.31". */
export function formatNumber(value: number, decimals = 2): string {
  return fixed(value, decimals);
}

/** A number with its sign always shown: "+3.10", "−1.00", "0.00". */
export function formatSigned(value: number, decimals = 2): string {
  const text = fixed(value, decimals);
  return value > 0 && /[1-9]/.test(text) ? `+${text}` : text;
}

/** A percentage: "55.00 %"; `signed` shows a plus sign too ("+4.21 %"). */
export function formatPercent(value: number, options: { signed?: boolean; decimals?: number } = {}): string {
  const decimals = options.decimals ?? 2;
  return `${options.signed ? formatSigned(value, decimals) : formatNumber(value, decimals)} %`;
}

/** An amount in units of stake: 3.5 -> "+3.50 units" (signed by default), -1 -> "−1.00 unit". */
export function formatUnits(units: number, options: { signed?: boolean } = { signed: true }): string {
  const text = options.signed === false ? formatNumber(units) : formatSigned(units);
  return `${text} ${Math.abs(units) === 1 ? 'unit' : 'units'}`;
}

/** "—" for a figure the API gives as null (undefined for this sample). */
export const NOT_AVAILABLE = '\u2014';

export function orNotAvailable<T>(value: T | null | undefined, format: (value: T) => string): string {
  return value === null || value === undefined ? NOT_AVAILABLE : format(value);
}

/** A short verdict beside the sentence; null when there is no p-value. */
export function significanceVerdict(pValue: number | null): string | null {
  if (pValue === null) return null;
  if (pValue < 0.01) return 'Very unlikely to be luck alone';
  if (pValue < 0.05) return 'Unlikely to be luck alone';
  if (pValue < 0.2) return 'Could still be luck';
  return 'Consistent with luck';
}

const SPORT_NAMES: Readonly<Record<string, string>> = {
  soccer: 'Soccer',
  basketball: 'Basketball',
  americanfootball: 'American football',
  icehockey: 'Ice hockey',
  baseball: 'Baseball',
  tennis: 'Tennis',
  esports: 'Esports',
  mma: 'MMA',
  boxing: 'Boxing',
  rugbyunion: 'Rugby union',
  cricket: 'Cricket',
};

export function sportName(slug: string): string {
  return Object.hasOwn(SPORT_NAMES, slug) ? SPORT_NAMES[slug]! : slug;
}

const MARKET_NAMES: Readonly<Record<string, string>> = {
  h2h: 'Match winner',
  spreads: 'Handicap',
  totals: 'Total',
};

export function marketName(code: string): string {
  return Object.hasOwn(MARKET_NAMES, code) ? MARKET_NAMES[code]! : code;
}

/** The selection as a bettor reads it: "Arsenal", "Chelsea +0.75", "Over 2.5". */
export function selectionText(market: string, selection: string, line: number | null): string {
  if (line === null || market === 'h2h') return selection;
  const point = market === 'spreads' && line > 0 ? `+${line}` : line < 0 ? `${MINUS_SIGN}${Math.abs(line)}` : String(line);
  return `${selection} ${point}`;
}

const RESULT_NAMES: Readonly<Record<string, string>> = {
  won: 'Won',
  lost: 'Lost',
  void: 'Void',
  half_won: 'Half won',
  half_lost: 'Half lost',
};

export function resultName(result: string | null): string {
  if (result === null) return 'Pending';
  return Object.hasOwn(RESULT_NAMES, result) ? RESULT_NAMES[result]! : result;
}

/** A ledger entry's type without the "pick." prefix: "published", "held", ... */
export function entryTypeName(type: string): string {
  return type.startsWith('pick.') ? type.slice('pick.'.length) : type;
}

/** The first 10 hex digits of a hash: enough to recognise it, the whole of it goes in a title. */
export function shortHash(hash: string): string {
  return hash.slice(0, 10);
}

const dateTimeFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false, timeZone: 'UTC' });
const dayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const shortDayFormat = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** "1 Dec 2026, 15:00 UTC". */
export function formatDateTime(iso: string): string {
  return `${dateTimeFormat.format(new Date(iso))} UTC`;
}

/** A UTC date (YYYY-MM-DD) as "1 Dec 2026", or "1 Dec" when short. */
export function formatDay(date: string, options: { short?: boolean } = {}): string {
  const day = new Date(`${date}T00:00:00.000Z`);
  return (options.short ? shortDayFormat : dayFormat).format(day);
}

/** The window in words: "the last 30 days", "the last day". */
export function windowName(daysBack: number): string {
  return daysBack === 1 ? 'the last day' : `the last ${formatInteger(daysBack)} days`;
}
