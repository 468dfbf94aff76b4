import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SPORT_SLUGS } from '../../src/domain/sports.js';
import { seedDemo, type SeedResult } from '../../src/seed/demo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let seeded: SeedResult | null;

beforeAll(async () => {
  t = await createTestApp();
  seeded = await seedDemo(t.runtime.services, t.runtime.orm, t.runtime.clock);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

async function rows<T>(sql: string): Promise<T[]> {
  return t.runtime.orm.em.fork().execute<T[]>(sql);
}

describe('demo seed', () => {
  it('creates a realistic history across every sport', async () => {
    expect(seeded).not.toBeNull();
    expect(seeded!.picks).toBeGreaterThanOrEqual(60);
    const sports = await rows<{ sport: string }>('select distinct sport from picks order by sport');
    expect(sports.map((r) => r.sport)).toEqual([...SPORT_SLUGS].sort());
    const span = await rows<{ days: number }>(`select extract(day from max(kickoff_at) - min(kickoff_at))::int as days from picks`);
    expect(span[0]!.days).toBeGreaterThanOrEqual(89);
  });

  it('settles most picks with every result kind and holds a few for review', async () => {
    const byStatus = await rows<{ status: string; n: string }>('select status, count(*) as n from picks group by status');
    const count = Object.fromEntries(byStatus.map((r) => [r.status, Number(r.n)]));
    const total = count.published! + count.settled! + count.admin_review!;
    expect(count.settled! / total).toBeGreaterThan(0.5);
    expect(count.admin_review).toBeGreaterThanOrEqual(2);
    const results = await rows<{ result: string }>('select distinct result from picks where result is not null order by result');
    expect(results.map((r) => r.result)).toEqual(['half_lost', 'half_won', 'lost', 'void', 'won']);
  });

  it('writes analyses for most picks, today picks for the public endpoint and one key per tier', async () => {
    const analyses = await rows<{ with_analysis: string; total: string }>(
      'select (select count(*) from match_analyses) as with_analysis, (select count(*) from picks) as total',
    );
    expect(Number(analyses[0]!.with_analysis) / Number(analyses[0]!.total)).toBeGreaterThan(0.6);
    expect(await t.runtime.services.picks.today({ limit: 50 })).toHaveLength(SPORT_SLUGS.length);
    expect(Object.keys(seeded!.keys).sort()).toEqual(['enterprise', 'growth', 'starter']);
    for (const [tier, key] of Object.entries(seeded!.keys)) {
      const principal = await t.runtime.services.auth.principalFor(`Bearer ${key}`);
      expect(principal).toMatchObject({ kind: 'apiKey', tier });
    }
  });

  it('seeds nothing on a second start', async () => {
    const before = await rows<{ n: string }>('select count(*) as n from picks');
    expect(await seedDemo(t.runtime.services, t.runtime.orm, t.runtime.clock)).toBeNull();
    const after = await rows<{ n: string }>('select count(*) as n from picks');
    expect(after).toEqual(before);
  });
});
