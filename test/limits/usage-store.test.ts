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
  it('loads 0 for a key-month without usage', async () => {
    expect(await database.usageStore.load(await database.createApiKey(), '2026-11')).toBe(0);
  });

  it('keeps the greatest absolute count, so retried and concurrent flushes never add twice', async () => {
    const key = await database.createApiKey();
    await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 5 }]);
    await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 5 }]);
    expect(await database.usageStore.load(key, '2026-11')).toBe(5);
    // A slower instance flushing an older value does not move it back.
    await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 3 }]);
    expect(await database.usageStore.load(key, '2026-11')).toBe(5);
    await database.usageStore.flush([{ apiKeyId: key, month: '2026-11', count: 9 }]);
    expect(await database.usageStore.load(key, '2026-11')).toBe(9);
    expect(await database.usageStore.load(key, '2026-12')).toBe(0);
  });

  it('writes a large batch with repeated key-months, keeping the greatest of each', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, () => database.createApiKey()));
    const rows = Array.from({ length: 3_000 }, (_, index) => ({
      apiKeyId: keys[index % keys.length]!,
      month: `2026-${String((index % 12) + 1).padStart(2, '0')}`,
      count: index,
    }));
    await database.usageStore.flush(rows);
    for (const key of keys) {
      for (let month = 1; month <= 12; month += 1) {
        const monthKey = `2026-${String(month).padStart(2, '0')}`;
        const expected = Math.max(...rows.filter((row) => row.apiKeyId === key && row.month === monthKey).map((row) => row.count));
        expect(await database.usageStore.load(key, monthKey)).toBe(expected);
      }
    }
  });

  it('skips ids without an api_keys row instead of failing the batch', async () => {
    const key = await database.createApiKey();
    const unknown = randomUUID();
    await database.usageStore.flush([
      { apiKeyId: unknown, month: '2026-11', count: 4 },
      { apiKeyId: key, month: '2026-11', count: 2 },
    ]);
    expect(await database.storedCount(key, '2026-11')).toBe(2);
    expect(await database.storedCount(unknown, '2026-11')).toBeNull();
  });

  it.each([
    [{ apiKeyId: 'not-a-uuid', month: '2026-11', count: 1 }],
    [{ apiKeyId: randomUUID(), month: '2026-13', count: 1 }],
    [{ apiKeyId: randomUUID(), month: '2026-11', count: -1 }],
    [{ apiKeyId: randomUUID(), month: '2026-11', count: 1.5 }],
  ])('refuses a malformed row %o', async (row) => {
    await expect(database.usageStore.flush([row])).rejects.toThrow(RangeError);
  });
});
