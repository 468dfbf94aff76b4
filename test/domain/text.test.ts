/** The string rules of docs/DECISIONS.md "String inputs", character by character. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import { checkOptionalText, checkText, textViolation, type TextRule } from '../../src/domain/text.js';

type Verdict = 'ok' | 'refused';

// [name, character, multiline, line, name]
const TABLE: [string, string, Verdict, Verdict, Verdict][] = [
  ['NUL', '\u0000', 'refused', 'refused', 'refused'],
  ['SOH', '\u0001', 'refused', 'refused', 'refused'],
  ['backspace', '\u0008', 'refused', 'refused', 'refused'],
  ['tab', '\t', 'ok', 'refused', 'refused'],
  ['line feed', '\n', 'ok', 'refused', 'refused'],
  ['vertical tab', '\u000B', 'refused', 'refused', 'refused'],
  ['form feed', '\u000C', 'refused', 'refused', 'refused'],
  ['carriage return', '\r', 'ok', 'refused', 'refused'],
  ['escape', '\u001B', 'refused', 'refused', 'refused'],
  ['unit separator', '\u001F', 'refused', 'refused', 'refused'],
  ['DEL', '\u007F', 'refused', 'refused', 'refused'],
  ['C1 PAD', '\u0080', 'refused', 'refused', 'refused'],
  ['C1 NEL', '\u0085', 'refused', 'refused', 'refused'],
  ['C1 APC', '\u009F', 'refused', 'refused', 'refused'],
  ['lone high surrogate', '\uD800', 'refused', 'refused', 'refused'],
  ['lone low surrogate', '\uDFFF', 'refused', 'refused', 'refused'],
  ['line separator', '\u2028', 'ok', 'refused', 'refused'],
  ['paragraph separator', '\u2029', 'ok', 'refused', 'refused'],
  ['zero-width space', '\u200B', 'ok', 'ok', 'refused'],
  ['zero-width non-joiner', '\u200C', 'ok', 'ok', 'refused'],
  ['zero-width joiner', '\u200D', 'ok', 'ok', 'refused'],
  ['left-to-right mark', '\u200E', 'ok', 'ok', 'refused'],
  ['right-to-left mark', '\u200F', 'ok', 'ok', 'refused'],
  ['arabic letter mark', '\u061C', 'ok', 'ok', 'refused'],
  ['LRE', '\u202A', 'ok', 'ok', 'refused'],
  ['RLO', '\u202E', 'ok', 'ok', 'refused'],
  ['word joiner', '\u2060', 'ok', 'ok', 'refused'],
  ['LRI', '\u2066', 'ok', 'ok', 'refused'],
  ['PDI', '\u2069', 'ok', 'ok', 'refused'],
  ['BOM / zero-width no-break space', '\uFEFF', 'ok', 'ok', 'refused'],
  ['space', ' ', 'ok', 'ok', 'ok'],
  ['no-break space', '\u00A0', 'ok', 'ok', 'ok'],
  ['accented letter', 'é', 'ok', 'ok', 'ok'],
  ['CJK', '東京', 'ok', 'ok', 'ok'],
  ['Arabic', 'الهلال', 'ok', 'ok', 'ok'],
  ['emoji (a surrogate pair)', '\u{1F600}', 'ok', 'ok', 'ok'],
  ['supplementary plane letter', '\u{20000}', 'ok', 'ok', 'ok'],
];

const RULES: TextRule[] = ['multiline', 'line', 'name'];

describe('textViolation', () => {
  it.each(TABLE)('%s', (_name, character, ...verdicts) => {
    RULES.forEach((rule, i) => {
      for (const value of [character, `a${character}`, `${character}b`, `ab${character}cd`]) {
        expect(textViolation(value, rule) === null ? 'ok' : 'refused', `${rule}: ${JSON.stringify(value)}`).toBe(verdicts[i]);
      }
    });
  });

  it('names the character and says why', () => {
    expect(textViolation('ab\u0000', 'line')).toBe('must not contain control characters (found U+0000 at position 2)');
    expect(textViolation('a\uD800', 'multiline')).toBe('is not valid Unicode text: a lone surrogate (found U+D800 at position 1)');
    expect(textViolation('a\nb', 'line')).toBe('must be a single line without tabs (found U+000A at position 1)');
    expect(textViolation('a\u202Eb', 'name')).toBe('must not contain invisible or text-direction characters (found U+202E at position 1)');
  });

  it('refuses every lone surrogate and accepts every well-formed string without controls or invisibles (property)', () => {
    const invisible = /[\p{Cc}\u2028\u2029\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF\u061C]/u;
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (value) => {
        const verdict = textViolation(value, 'name');
        if (/[\uD800-\uDFFF]/u.test(value) || invisible.test(value)) expect(verdict).not.toBeNull();
        else expect(verdict).toBeNull();
        // The rules nest: name is stricter than line, line than multiline.
        if (textViolation(value, 'multiline') !== null) expect(textViolation(value, 'line')).not.toBeNull();
        if (textViolation(value, 'line') !== null) expect(verdict).not.toBeNull();
      }),
      { numRuns: 500 },
    );
  });
});

describe('checkText', () => {
  it('returns the value when it passes', () => {
    expect(checkText('analysis', 'Line one\n\tLine two\r\n', 'multiline')).toBe('Line one\n\tLine two\r\n');
    expect(checkOptionalText('label', null, 'name')).toBeNull();
    expect(checkOptionalText('label', undefined, 'name')).toBeUndefined();
  });

  it('throws invalid_parameter naming the field', () => {
    let thrown: unknown;
    try {
      checkText('homeTeam', 'Arse\u200Bnal', 'name');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidParameterError);
    expect((thrown as InvalidParameterError).code).toBe('invalid_parameter');
    expect((thrown as InvalidParameterError).extras).toEqual({ parameter: 'homeTeam' });
    expect((thrown as InvalidParameterError).message).toBe('homeTeam must not contain invisible or text-direction characters (found U+200B at position 4)');
    expect(() => checkOptionalText('league', 'a\u0000', 'line')).toThrow(InvalidParameterError);
  });
});
