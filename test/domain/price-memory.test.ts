/**
 * The engine's memory of the prices it wrote (src/domain/price-memory.ts): what a poll sends,
 * what a committed write confirms, and when the memory may be used at all.
 */
import { describe, expect, it } from 'vitest';
import { PRICE_MEMORY_IDLE_MS, PRICE_MEMORY_REFRESH_MS, PriceMemory, ReferenceMemory, type ReferenceMarketRow } from '../../src/domain/price-memory.js';

const AT = new Date('2026-11-24T12:00:00Z');
const price = (eventId: string, outcome: string, value: number, at = AT) => ({ eventId, bookmaker: 'tipico', market: 'h2h', outcome, price: value, at });
const NONE = new Set<string>();

describe('PriceMemory', () => {
  it('sends everything when empty, then only the prices that differ from those confirmed', () => {
    const memory = new PriceMemory();
    const first = [price('e1', 'Arsenal', 1.9), price('e1', 'Chelsea', 4.6), price('e2', 'Draw', 3.8)];
    expect(memory.toSend(first).send).toEqual(first);
    memory.confirm(first, NONE, 1n, 0, ['e1', 'e2']);
    const second = [price('e1', 'Arsenal', 1.9), price('e1', 'Chelsea', 4.5), price('e2', 'Draw', 3.8), price('e3', 'Arsenal', 2.0)];
    expect(memory.toSend(second).send).toEqual([second[1], second[3]]);
    expect(memory.size()).toBe(3);
  });

  it('is used only by the write whose epoch follows its last confirmed one, and for a limited time', () => {
    const memory = new PriceMemory();
    expect(memory.follows(1n, 0)).toBe(false);
    memory.confirm([price('e1', 'Arsenal', 1.9)], NONE, 7n, 1_000, ['e1']);
    expect(memory.follows(8n, 1_000)).toBe(true);
    // Another writer committed 8: this instance's next write gets 9.
    expect(memory.follows(9n, 1_000)).toBe(false);
    expect(memory.follows(7n, 1_000)).toBe(false);
    // A writer that takes no epoch is caught by the refresh: the memory's age counts from the
    // write that sent every price, not from the last one.
    memory.confirm([], NONE, 8n, 1_000 + PRICE_MEMORY_REFRESH_MS - 1, ['e1']);
    expect(memory.follows(9n, 1_000 + PRICE_MEMORY_REFRESH_MS - 1)).toBe(true);
    expect(memory.follows(9n, 1_000 + PRICE_MEMORY_REFRESH_MS)).toBe(false);
    memory.forget();
    expect(memory.follows(9n, 1_000)).toBe(false);
    expect(memory.size()).toBe(0);
    expect(memory.toSend([price('e1', 'Arsenal', 1.9)]).send).toHaveLength(1);
    // Started again by a full write: trusted for another period from then.
    memory.confirm([price('e1', 'Arsenal', 1.9)], NONE, 12n, 5_000_000, ['e1']);
    expect(memory.follows(13n, 5_000_000 + PRICE_MEMORY_REFRESH_MS - 1)).toBe(true);
  });

  it('forgets the prices the database did not vouch for, and never remembers a key given twice in one batch', () => {
    const memory = new PriceMemory();
    memory.confirm([price('e1', 'Arsenal', 1.9), price('e1', 'Chelsea', 4.6)], NONE, 1n, 0, ['e1']);
    // The table kept a newer Chelsea price than the one sent.
    const sent = [price('e1', 'Chelsea', 4.4)];
    memory.confirm(sent, new Set([PriceMemory.keyOf(sent[0]!)]), 2n, 0, ['e1']);
    expect(memory.toSend([price('e1', 'Chelsea', 4.6)]).send).toHaveLength(1);
    expect(memory.toSend([price('e1', 'Chelsea', 4.4)]).send).toHaveLength(1);
    // Arsenal twice in one batch, once at the remembered price: both go, and the database decides.
    const twice = [price('e1', 'Arsenal', 1.9, new Date(AT.getTime() + 1_000)), price('e1', 'Arsenal', 2.0, AT)];
    const { send, repeated } = memory.toSend(twice);
    expect(send).toEqual(twice);
    expect([...repeated]).toEqual([PriceMemory.keyOf(twice[0]!)]);
    memory.confirm(send, repeated, 3n, 0, ['e1']);
    expect(memory.toSend([price('e1', 'Arsenal', 1.9)]).send).toHaveLength(1);
  });

  it('agrees with a plain map of full keys over many batches: events out of order, keys named twice or thrice, writes not confirmed', () => {
    // The expectation is a plain map from PriceMemory.keyOf to the confirmed price, the memory's
    // contract written the simplest way; a seeded generator makes the batches.
    let seed = 45;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const pick = <T,>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const memory = new PriceMemory();
    const model = new Map<string, number>();
    for (let round = 0; round < 300; round += 1) {
      const batch = Array.from({ length: 1 + Math.floor(random() * 12) }, () => ({
        eventId: pick(['e1', 'e2', 'e3']),
        bookmaker: pick(['tipico', 'bet365']),
        market: pick(['h2h', 'totals']),
        outcome: pick(['Over 2.5', 'Under 2.5', 'Draw']),
        price: pick([1.8, 1.9, 2.0]),
        at: AT,
      }));
      const named = new Map<string, number>();
      for (const point of batch) named.set(PriceMemory.keyOf(point), (named.get(PriceMemory.keyOf(point)) ?? 0) + 1);
      const expected = batch.filter((point) => named.get(PriceMemory.keyOf(point))! > 1 || model.get(PriceMemory.keyOf(point)) !== point.price);
      const { send, repeated } = memory.toSend(batch);
      expect(send).toEqual(expected);
      expect(send.every((point, index) => point === expected[index])).toBe(true);
      expect([...repeated].sort()).toEqual([...named].filter(([, times]) => times > 1).map(([key]) => key).sort());
      if (random() < 0.05) {
        memory.forget(); // another writer came between: everything is sent again
        model.clear();
        continue;
      }
      if (random() < 0.2) continue; // the write failed: nothing confirmed
      const unconfirmed = new Set([...repeated, ...send.filter(() => random() < 0.1).map((point) => PriceMemory.keyOf(point))]);
      memory.confirm(send, unconfirmed, BigInt(round), 0, ['e1', 'e2', 'e3']);
      for (const point of send) {
        const key = PriceMemory.keyOf(point);
        if (unconfirmed.has(key)) model.delete(key);
        else model.set(key, point.price);
      }
      expect(memory.size()).toBe(model.size);
    }
  });

  it('keeps what a write confirmed for an event the poll did not mention, for an hour from that write', () => {
    const memory = new PriceMemory();
    memory.confirm([price('e1', 'Arsenal', 1.9)], NONE, 1n, 0, []);
    expect(memory.toSend([price('e1', 'Arsenal', 1.9)]).send).toHaveLength(0);
    memory.confirm([], NONE, 2n, PRICE_MEMORY_IDLE_MS, []);
    expect(memory.size()).toBe(1);
    memory.confirm([], NONE, 3n, PRICE_MEMORY_IDLE_MS + 1, []);
    expect(memory.size()).toBe(0);
  });

  it('drops an event no poll mentioned for an hour, keeps one a poll mentioned without a change', () => {
    const memory = new PriceMemory();
    memory.confirm([price('e1', 'Arsenal', 1.9), price('e2', 'Arsenal', 2.5)], NONE, 1n, 0, ['e1', 'e2']);
    // e1 is in every poll but unchanged (nothing sent for it); e2 left the feed.
    memory.confirm([], NONE, 2n, PRICE_MEMORY_IDLE_MS, ['e1']);
    memory.confirm([], NONE, 3n, PRICE_MEMORY_IDLE_MS + 1, ['e1']);
    expect(memory.toSend([price('e1', 'Arsenal', 1.9)]).send).toHaveLength(0);
    expect(memory.toSend([price('e2', 'Arsenal', 2.5)]).send).toHaveLength(1);
    expect(memory.size()).toBe(1);
  });
});

describe('ReferenceMemory', () => {
  const market = (change: Partial<ReferenceMarketRow> = {}): ReferenceMarketRow => ({
    eventId: 'e1',
    generation: 0,
    bookmaker: 'pinnacle',
    market: 'totals',
    line: 2.5,
    prices: [
      { name: 'Over', price: 1.95, point: 2.5 },
      { name: 'Under', price: 1.91, point: 2.5 },
    ],
    updatedAt: AT,
    ...change,
  });

  it('sends a reference market again when anything the upsert compares moved: prices, their order, line or last_update', () => {
    const memory = new ReferenceMemory();
    memory.confirm([market()], NONE, 1n, 0, ['e1']);
    expect(memory.toSend([market()]).send).toHaveLength(0);
    const [over, under] = market().prices;
    const changes: Partial<ReferenceMarketRow>[] = [
      { prices: [{ ...over!, price: 1.96 }, under!] },
      { prices: [under!, over!] },
      { line: 2.75 },
      { updatedAt: new Date(AT.getTime() + 1) },
      // Another generation or another book is another row.
      { generation: 1 },
      { bookmaker: 'betfair_ex_eu' },
    ];
    for (const change of changes) expect(memory.toSend([market(change)]).send).toEqual([market(change)]);
  });

  it('forgets only the generation the table did not store', () => {
    const memory = new ReferenceMemory();
    memory.confirm([market({ generation: 1 }), market({ generation: 11 })], new Set([ReferenceMemory.keyOf(market({ generation: 1 }))]), 1n, 0, ['e1']);
    expect(memory.toSend([market({ generation: 1 }), market({ generation: 11 })]).send).toEqual([market({ generation: 1 })]);
    expect(memory.size()).toBe(1);
  });

  it('forgets a market the table did not store as sent', () => {
    const memory = new ReferenceMemory();
    memory.confirm([market()], new Set([ReferenceMemory.keyOf(market())]), 1n, 0, ['e1']);
    expect(memory.toSend([market()]).send).toHaveLength(1);
    expect(memory.size()).toBe(0);
  });
});
