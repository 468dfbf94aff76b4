import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openUsageDatabase, type UsageDatabase } from './support.js';

let database: UsageDatabase;

beforeAll(async () => {
  database = await openUsageDatabase();
});

afterAll(async () => {
  await database.close();
});

describe('UsageStore', () => {
  it('loads zeros for a key-month without usage', async () => {
    expect(await database.usageStore.load(await database.createApiKey(), '2026-11')).toEqual({ count: 0, refunded: 0 });
  });

  it('keeps the latest state (most admitted, then most refunded), so retried and concurrent flushes never add twice', async () => {
    const key = await database.createApiKey();
    const flush = (count: number, refunded: number) => database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count, refunded }]);
    await flush(5, 0);
    await flush(5, 0);
    expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 5, refunded: 0 });
    // A slower instance flushing an older state does not move it back.
    await flush(3, 0);
    expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 5, refunded: 0 });
    // One of the 5 taken back (a 5xx answer): the count goes down, as one refunded.
    await flush(4, 1);
    expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 4, refunded: 1 });
    // The state before the refund, flushed late by another instance, does not undo it.
    await flush(5, 0);
    expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 4, refunded: 1 });
    await flush(9, 1);
    expect(await database.usageStore.load(key, '2026-11')).toEqual({ count: 9, refunded: 1 });
    expect(await database.storedCount(key, '2026-11')).toBe(9);
    expect(await database.usageStore.load(key, '2026-12')).toEqual({ count: 0, refunded: 0 });
  });

  it('writes a large batch with repeated key-months, keeping the latest of each', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => database.createApiKey()));
    const rows = Array.from({ length: 3_000 }, (_, index) => ({
      apiKeyId: keys[index % keys.length]!,
      month: `2026-${String((index % 12) + 1).padStart(2, '0')}`,
      count: index,
      refunded: index % 7,
    }));
    await database.usageStore.flush(rows);
    for (const key of keys) {
      for (let month = 1; month <= 12; month += 1) {
        const monthKey = `2026-${String(month).padStart(2, '0')}`;
        // The latest state of each, computed here: the most admitted (count + refunded).
        const [latest] = rows.filter((row) => row.apiKeyId === key && row.month === monthKey).sort((a, b) => b.count + b.refunded - (a.count + a.refunded));
        expect(await database.usageStore.load(key, monthKey)).toEqual({ count: latest!.count, refunded: latest!.refunded });
      }
    }
  });

  it('skips ids without an api_keys row instead of failing the batch', async () => {
    const key = await database.createApiKey();
    const unknown = randomUUID();
    await database.usageStore.flush([
      { apiKeyId: unknown, month: '2026-11', count: 4, refunded: 0 },
      { apiKeyId: key, month: '2026-11', count: 2, refunded: 0 },
    ]);
    expect(await database.storedCount(key, '2026-11')).toBe(2);
    expect(await database.storedCount(unknown, '2026-11')).toBeNull();
  });

  it.each([
    [{ apiKeyId: 'not-a-uuid', month: '2026-11', count: 1, refunded: 0 }],
    [{ apiKeyId: randomUUID(), month: '2026-13', count: 1, refunded: 0 }],
    [{ apiKeyId: randomUUID(), month: '2026-11', count: -1, refunded: 0 }],
    [{ apiKeyId: randomUUID(), month: '2026-11', count: 1.5, refunded: 0 }],
    [{ apiKeyId: randomUUID(), month: '2026-11', count: 1, refunded: -1 }],
  ])('refuses a malformed row %o', async (row) => {
    await expect(database.usageStore.flush([row])).rejects.toThrow(RangeError);
  });
});
