import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html } from '../../adapters/dashboard/html.js';
import { normalizeEmail, validateNewPassword } from '../../src/domain/account.js';
import { InvalidParameterError } from '../../src/domain/errors.js';
import { combineVerdicts, LOGIN_THROTTLE, throttleSubject, throttleVerdict } from '../../src/domain/login-throttle.js';
import { DEFAULT_SCRYPT_PARAMS, hashPassword, parsePasswordHash, verifyPassword } from '../../src/domain/password.js';
import { generateSessionToken, hashSessionToken, isSessionTokenShape, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, sessionState } from '../../src/domain/session.js';

const CHEAP = { ln: 10, r: 8, p: 1 };

describe('email and password rules', () => {
  it('normalises emails and refuses what is not an address', () => {
    expect(normalizeEmail('  Dana@Example.COM ')).toBe('dana@example.com');
    for (const bad of ['', 'dana', 'dana@', '@example.com', 'da na@example.com', 'dana@example', `${'a'.repeat(250)}@example.com`, 42]) {
      expect(() => normalizeEmail(bad)).toThrow(InvalidParameterError);
    }
  });

  it('asks 12 to 256 characters of a password, counted in code points, never trimmed', () => {
    expect(validateNewPassword('  twelve chr ')).toBe('  twelve chr ');
    expect(() => validateNewPassword('elevenchars')).toThrow(/12 to 256/);
    expect(validateNewPassword('🔑'.repeat(12))).toHaveLength(24);
    expect(() => validateNewPassword('x'.repeat(257))).toThrow(InvalidParameterError);
  });
});

describe('password hashing (scrypt)', () => {
  it('uses OWASP-equivalent defaults, a salt per hash, and verifies only the right password', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(parsePasswordHash(stored)?.params).toEqual(DEFAULT_SCRYPT_PARAMS);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).toBe(false);
    expect(await hashPassword('correct horse battery staple')).not.toBe(stored);
  });

  it('keeps the parameters with the hash and treats Unicode forms alike', async () => {
    const stored = await hashPassword('caf\u00e9 au lait!!', CHEAP);
    expect(stored).toMatch(/^scrypt\$ln=10,r=8,p=1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('cafe\u0301 au lait!!', stored)).toBe(true);
  });

  it('never matches a malformed or tampered hash', async () => {
    const stored = await hashPassword('password password', CHEAP);
    for (const bad of ['', 'plain', stored.replace('ln=10', 'ln=99'), stored.slice(0, -2), stored.replace('scrypt$', 'bcrypt$')]) {
      expect(await verifyPassword('password password', bad)).toBe(false);
    }
  });
});

describe('login throttle', () => {
  const policy = LOGIN_THROTTLE.account;
  const now = 1_800_000_000_000;

  it('allows up to limit - 1 failures in the window and says when the next attempt is allowed', () => {
    expect(throttleVerdict([], policy, now)).toEqual({ allowed: true });
    const four = [1, 2, 3, 4].map((i) => now - i * 60_000);
    expect(throttleVerdict(four, policy, now)).toEqual({ allowed: true });
    const five = [...four, now - 10 * 60_000];
    // The oldest failure (10 min ago) leaves the 15-minute window in 5 minutes.
    expect(throttleVerdict(five, policy, now)).toEqual({ allowed: false, retryAfterSeconds: 300 });
    expect(throttleVerdict(five, policy, now + 300_000).allowed).toBe(true);
    // Failures outside the window (or in the future) do not count.
    expect(throttleVerdict([...four, now - policy.windowMs], policy, now)).toEqual({ allowed: true });
  });

  it('is never allowed with limit failures inside the window, always allowed with fewer (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 * policy.windowMs }), { maxLength: 12 }), (ages) => {
        const times = ages.map((age) => now - age);
        const inWindow = ages.filter((age) => age < policy.windowMs).length;
        const verdict = throttleVerdict(times, policy, now);
        expect(verdict.allowed).toBe(inWindow < policy.limit);
        if (!verdict.allowed) {
          expect(verdict.retryAfterSeconds).toBeGreaterThanOrEqual(1);
          expect(verdict.retryAfterSeconds).toBeLessThanOrEqual(policy.windowMs / 1000);
          expect(throttleVerdict(times, policy, now + verdict.retryAfterSeconds * 1000).allowed).toBe(true);
        }
      }),
    );
  });

  it('combines verdicts by the longest wait and hashes subjects per scope', () => {
    expect(combineVerdicts([{ allowed: true }, { allowed: false, retryAfterSeconds: 9 }, { allowed: false, retryAfterSeconds: 4 }])).toEqual({ allowed: false, retryAfterSeconds: 9 });
    expect(combineVerdicts([{ allowed: true }])).toEqual({ allowed: true });
    expect(throttleSubject('ip', '10.0.0.1')).toMatch(/^[0-9a-f]{64}$/);
    expect(throttleSubject('ip', 'x')).not.toBe(throttleSubject('account', 'x'));
  });
});

describe('sessions', () => {
  it('tokens are 32 random bytes (base64url); only their SHA-256 is stored', () => {
    const token = generateSessionToken();
    expect(isSessionTokenShape(token)).toBe(true);
    expect(generateSessionToken()).not.toBe(token);
    expect(hashSessionToken(token)).toMatch(/^[0-9a-f]{64}$/);
    for (const bad of [undefined, '', 'short', `${token}x`, token.replace(/.$/, '+')]) expect(isSessionTokenShape(bad)).toBe(false);
  });

  it('expire when idle for 30 minutes or 12 hours after sign-in', () => {
    const signedIn = new Date('2026-11-22T08:00:00Z');
    const session = { lastSeenAt: signedIn, expiresAt: new Date(signedIn.getTime() + SESSION_ABSOLUTE_MS) };
    expect(sessionState(session, new Date(signedIn.getTime() + SESSION_IDLE_MS - 1))).toBe('active');
    expect(sessionState(session, new Date(signedIn.getTime() + SESSION_IDLE_MS))).toBe('idle_expired');
    const busy = { ...session, lastSeenAt: new Date(signedIn.getTime() + SESSION_ABSOLUTE_MS - 1_000) };
    expect(sessionState(busy, new Date(signedIn.getTime() + SESSION_ABSOLUTE_MS))).toBe('expired');
  });
});

describe('dashboard HTML templates', () => {
  it('escape every interpolated value, arrays included; nested templates stay markup', () => {
    const label = `<script>alert("x")</script>' & \``;
    expect(escapeHtml(label)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; &#96;');
    const inner = html`<b>${label}</b>`;
    expect(html`<p title="${label}">${inner}${[label, null, false, 3]}</p>`.value).toBe(
      `<p title="${escapeHtml(label)}"><b>${escapeHtml(label)}</b>${escapeHtml(label)}3</p>`,
    );
  });
});
