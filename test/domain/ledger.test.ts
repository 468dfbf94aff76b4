import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, checkpointTimes, commitmentOf, entryHash, GENESIS_HASH, isRevealed, nextEntry, revealAfterOf, revealTime, type CommittedPick } from '../../src/domain/ledger.js';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('canonicalJson (RFC 8785)', () => {
  it("serialises the RFC's section 3.2.2 example byte for byte", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it("sorts keys by UTF-16 code units (section 3.2.3's example)", () => {
    const input = JSON.parse('{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control", "\\u00f6": "Latin Small Letter O With Diaeresis"}');
    // JavaScript would list the key "1" first when parsed back: the order is checked on the text.
    const text = canonicalJson(input);
    const order = ['Carriage Return', 'One', 'Control', 'Latin Small Letter O With Diaeresis', 'Euro Sign', 'Emoji: Grinning Face', 'Hebrew Letter Dalet With Dagesh'];
    expect(order.map((value) => text.indexOf(value))).toEqual([...order.map((value) => text.indexOf(value))].sort((a, b) => a - b));
    expect(text.startsWith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"')).toBe(true);
  });

  it("prints numbers as Appendix B does", () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [295147905179352830000, '295147905179352830000'],
      [1e21, '1e+21'],
      [0.000001, '0.000001'],
      [1e-7, '1e-7'],
    ];
    for (const [value, text] of cases) expect(canonicalJson(value)).toBe(text);
  });
});

describe('the chain', () => {
  const pick = { id: 'p1', odds: 2.2, selection: 'Arsenal' } as unknown as CommittedPick;
  const salt = 'ab'.repeat(32);
  const at = new Date('2026-11-25T10:00:00.000Z');
  const kickoff = new Date('2026-11-25T15:00:00.000Z');

  it('commits to the canonical {pick, salt} and hashes the seven clear fields, the first after 64 zeros', () => {
    expect(commitmentOf(pick, salt)).toBe(sha(`{"pick":{"id":"p1","odds":2.2,"selection":"Arsenal"},"salt":"${salt}"}`));
    const first = nextEntry(null, { type: 'pick.published', at, pickId: 'p1', revealAfter: kickoff, pick, salt });
    expect(first).toMatchObject({ seq: 1, prev_hash: GENESIS_HASH, at: '2026-11-25T10:00:00.000Z', reveal_after: '2026-11-25T15:00:00.000Z' });
    expect(first.hash).toBe(
      sha(`{"at":"2026-11-25T10:00:00.000Z","commitment":"${first.commitment}","pick_id":"p1","prev_hash":"${GENESIS_HASH}","reveal_after":"2026-11-25T15:00:00.000Z","seq":1,"type":"pick.published"}`),
    );
    const second = nextEntry(first, { type: 'pick.settled', at, pickId: 'p1', revealAfter: kickoff, pick, salt: 'cd'.repeat(32) });
    expect(second).toMatchObject({ seq: 2, prev_hash: first.hash });
    expect(entryHash(second)).toBe(second.hash);
    // Another salt, another commitment: the same pick cannot be recognised before its reveal.
    expect(second.commitment).not.toBe(first.commitment);
  });

  it("never dates an entry before the previous one, whose clock may have been read later", () => {
    const first = nextEntry(null, { type: 'pick.published', at, pickId: 'p1', revealAfter: kickoff, pick, salt });
    const earlier = new Date(at.getTime() - 5);
    const second = nextEntry(first, { type: 'pick.published', at: earlier, pickId: 'p2', revealAfter: kickoff, pick, salt });
    expect(second.at).toBe(first.at);
    const later = nextEntry(second, { type: 'pick.published', at: new Date(at.getTime() + 5), pickId: 'p3', revealAfter: kickoff, pick, salt });
    expect(later.at).toBe('2026-11-25T10:00:00.005Z');
  });

  it('reveals from reveal_after on, not while the current kickoff is ahead', () => {
    expect(isRevealed(kickoff, kickoff, new Date(kickoff.getTime() - 1))).toBe(false);
    expect(isRevealed(kickoff, kickoff, kickoff)).toBe(true);
    const postponed = new Date(kickoff.getTime() + 86_400_000);
    expect(isRevealed(kickoff, postponed, new Date(kickoff.getTime() + 1))).toBe(false);
    expect(isRevealed(kickoff, postponed, postponed)).toBe(true);
    // The time it reveals at: the later of the two (a match brought forward waits for reveal_after).
    expect([revealTime(kickoff, kickoff), revealTime(kickoff, postponed), revealTime(postponed, kickoff)]).toEqual([kickoff, postponed, postponed]);
  });

  it('publishes reveal_after on the quarter hour (UTC), never before kickoff', () => {
    const at = (iso: string) => revealAfterOf(new Date(iso)).toISOString();
    expect(at('2026-11-23T15:00:00.000Z')).toBe('2026-11-23T15:00:00.000Z');
    expect(at('2026-11-23T15:00:00.001Z')).toBe('2026-11-23T15:15:00.000Z');
    expect(at('2026-11-23T19:50:00.000Z')).toBe('2026-11-23T20:00:00.000Z');
    expect(at('2026-11-23T23:59:00.000Z')).toBe('2026-11-24T00:00:00.000Z');
    expect(at('2026-11-23T17:44:59.999Z')).toBe('2026-11-23T17:45:00.000Z');
  });

  it('checkpoints at every midnight after the first entry', () => {
    expect(checkpointTimes(new Date('2026-11-23T18:00:00Z'), new Date('2026-11-25T00:00:00Z')).map((d) => d.toISOString())).toEqual([
      '2026-11-24T00:00:00.000Z',
      '2026-11-25T00:00:00.000Z',
    ]);
    expect(checkpointTimes(new Date('2026-11-25T01:00:00Z'), new Date('2026-11-25T23:00:00Z'))).toEqual([]);
  });
});
