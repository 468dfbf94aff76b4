/**
 * What a string input may contain (docs/DECISIONS.md, "String inputs"). One rule per kind of
 * field, checked before any query, so a character the database refuses (NUL), cannot store
 * faithfully (a lone surrogate) or that breaks a one-line format (SSE frames, logs, CSV) is a
 * 400 `invalid_parameter` naming the field, never a database error.
 *
 * - `multiline`: long free texts (the match analysis). Tab, LF and CR are allowed.
 * - `line`: every other string (league, selection, cursors, ids, URLs, timestamps, ...): one
 *   line, so no tab, LF, CR nor the Unicode line and paragraph separators either.
 * - `name`: what people read and compare by eye (team names, league, bookmaker name, key
 *   labels, emails): a line that also has no invisible or text-direction characters, so
 *   "Arsenal" and "Arse\u200Bnal", or a label reversed by U+202E, cannot pass for each other.
 *
 * Every rule refuses NUL and the other C0 controls, DEL, the C1 controls and lone surrogates.
 */
import { InvalidParameterError } from './errors.js';

export type TextRule = 'multiline' | 'line' | 'name';

// In unicode mode [\uD800-\uDFFF] matches only unpaired surrogates: a pair is one code point.
// eslint-disable-next-line no-control-regex
const MULTILINE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uD800-\uDFFF]/u;
// eslint-disable-next-line no-control-regex
const LINE_FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\uD800-\uDFFF]/u;
/**
 * Plus zero-width characters (U+200B-U+200D, word joiner U+2060, BOM / zero-width no-break
 * space U+FEFF), the directional marks (LRM U+200E, RLM U+200F, ALM U+061C) and the bidi
 * embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
 */
// eslint-disable-next-line no-control-regex
const NAME_FORBIDDEN = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\uD800-\uDFFF\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF\u061C]/u;

const FORBIDDEN: Record<TextRule, RegExp> = { multiline: MULTILINE_FORBIDDEN, line: LINE_FORBIDDEN, name: NAME_FORBIDDEN };

function hex(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `value` breaks `rule` (a sentence completing "<parameter> ..."), or null when it does not. */
export function textViolation(value: string, rule: TextRule): string | null {
  const match = FORBIDDEN[rule].exec(value);
  if (!match) return null;
  const codePoint = match[0].codePointAt(0)!;
  const found = `found ${hex(codePoint)} at position ${match.index}`;
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return `is not valid Unicode text: a lone surrogate (${found})`;
  if (codePoint === 0x09 || codePoint === 0x0a || codePoint === 0x0d || codePoint === 0x2028 || codePoint === 0x2029) {
    return `must be a single line without tabs (${found})`;
  }
  if (codePoint <= 0x1f || (codePoint >= 0x7f && codePoint <= 0x9f)) return `must not contain control characters (${found})`;
  return `must not contain invisible or text-direction characters (${found})`;
}

/** The value unchanged when it obeys `rule`; otherwise 400 `invalid_parameter` naming `parameter`. */
export function checkText(parameter: string, value: string, rule: TextRule): string {
  const violation = textViolation(value, rule);
  if (violation) throw new InvalidParameterError(parameter, `${parameter} ${violation}`);
  return value;
}

/** checkText for an optional input: null and undefined pass through. */
export function checkOptionalText<T extends string | null | undefined>(parameter: string, value: T, rule: TextRule): T {
  if (typeof value === 'string') checkText(parameter, value, rule);
  return value;
}
