import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/domain/redaction.js';

const KEY = `service_${'ab12'.repeat(16)}`;

describe('redactUrl', () => {
  it.each([
    [`/api/v1/picks?api_key=${KEY}&limit=5`, '/api/v1/picks?api_key=[redacted]&limit=5'],
    ['/api/v1/picks?limit=5&apiKey=abc', '/api/v1/picks?limit=5&apiKey=[redacted]'],
    ['/api/v1/picks?ACCESS_TOKEN=abc', '/api/v1/picks?ACCESS_TOKEN=[redacted]'],
    ['/x?password=hunter2&sport=soccer', '/x?password=[redacted]&sport=soccer'],
    ['/x?sig=abc&client_secret=def', '/x?sig=[redacted]&client_secret=[redacted]'],
    ['/x?api%5Fkey=abc', '/x?api%5Fkey=[redacted]'],
    ['https://odds.example/v4/sports/soccer_epl/odds?apiKey=abc123&regions=eu', 'https://odds.example/v4/sports/soccer_epl/odds?apiKey=[redacted]&regions=eu'],
    [`/api/v1/match-analyses/${KEY}`, '/api/v1/match-analyses/service_[redacted]'],
    [`/x?note=${KEY.toUpperCase()}`, '/x?note=service_[redacted]'],
    ['/x?token=abc#frag', '/x?token=[redacted]#frag'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('leaves ordinary URLs alone', () => {
    for (const url of ['/api/v1/picks?limit=50&sport=soccer&cursor=abc', '/healthz', '/x?', '/x?a&b=', '/x?%E0%A4%A=1']) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  it('never throws and never leaves an API key behind, whatever the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (before, after) => {
        const redacted = redactUrl(`${before}${KEY}${after}`);
        expect(redacted).not.toContain(KEY);
      }),
      { numRuns: 300 },
    );
  });
});
