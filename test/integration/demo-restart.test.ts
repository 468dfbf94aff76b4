/**
 * The embedded demo restarted (`npm start` on the same DATA_DIR): the engine picks published
 * before the restart are settled from the simulated feed's finals after it, none left published
 * past its match. The runtime runs on an embedded database in a directory, as `npm start` does,
 * on a manual clock, polled by hand a minute at a time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { ADMIN_TOKEN, LEDGER_SIGNING_KEY, WEBHOOK_SECRET_KEY } from '../helpers/app.js';

const MINUTE = 60_000;
/** The simulated feed's longest match: a pick is settled at the first scores poll after it. */
const LONGEST_MATCH = 20 * MINUTE;
/** This test polls scores every minute (SCORES_POLL_SECONDS is 300 by default: add that instead). */
const POLL_EVERY = MINUTE;
const SETTLED_WITHIN = LONGEST_MATCH + POLL_EVERY;

const dataDir = mkdtempSync(path.join(tmpdir(), 'demo-restart-'));
const clock = new ManualClock('2026-11-24T18:00:00Z');
let runtime: Runtime | null = null;

/** A demo start on the same directory: embedded database, simulated feed, nothing seeded. */
async function start(): Promise<Runtime> {
  const config = loadConfig({ ADMIN_TOKEN, WEBHOOK_SECRET_KEY, LEDGER_SIGNING_KEY, DATA_DIR: dataDir, DEMO_SEED: 'false', DEMO_FEED: 'true', LOG_LEVEL: 'silent' });
  return createRuntime(config, { adminToken: ADMIN_TOKEN, clock, database: { kind: 'pglite', dataDir: path.join(dataDir, 'db') }, startPoller: false, startDispatcher: false });
}

interface EnginePickRow {
  id: string;
  status: string;
  kickoffAt: number;
  result: string | null;
  event_id: string;
  settled_from: string | null;
}

async function enginePicks(current: Runtime): Promise<EnginePickRow[]> {
  const rows = await current.orm.em.fork().execute<(Omit<EnginePickRow, 'kickoffAt'> & { kickoff_at: string | Date })[]>(
    `select id, status, kickoff_at, result, event_id, provenance -> 'settlement' ->> 'eventId' as settled_from
       from picks where event_id is not null order by kickoff_at`,
  );
  return rows.map(({ kickoff_at, ...row }) => ({ ...row, kickoffAt: new Date(kickoff_at).getTime() }));
}

afterAll(async () => {
  await runtime?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the simulated demo feed across a restart', () => {
  it('settles the engine picks of before the restart from the finals after it, none published past its match', async () => {
    runtime = await start();
    // Ten minutes of feed: engine picks of fixtures kicking off 5 to 30 minutes later.
    for (let minute = 0; minute < 10; minute++, clock.advance(POLL_EVERY)) {
      expect(await runtime.poller!.pollNow(['odds', 'scores'])).toBe(true);
    }
    const before = (await enginePicks(runtime)).filter((pick) => pick.status === 'published');
    expect(before.length).toBeGreaterThan(3);
    await runtime.close();
    runtime = null;

    // Down for a quarter of an hour: some of those matches start, or end, meanwhile.
    clock.advance(15 * MINUTE);
    runtime = await start();
    const lastKickoff = Math.max(...before.map((pick) => pick.kickoffAt));
    while (clock.now().getTime() <= lastKickoff + SETTLED_WITHIN + POLL_EVERY) {
      expect(await runtime.poller!.pollNow(['odds', 'scores'])).toBe(true);
      const now = clock.now().getTime();
      const overdue = (await enginePicks(runtime)).filter((pick) => pick.status === 'published' && pick.kickoffAt + SETTLED_WITHIN < now);
      expect(overdue, `at ${clock.now().toISOString()}`).toEqual([]);
      clock.advance(POLL_EVERY);
    }
    const after = new Map((await enginePicks(runtime)).map((pick) => [pick.id, pick]));
    for (const pick of before) {
      // Settled through the settle path, from a final of its own event.
      expect(after.get(pick.id)).toMatchObject({ status: 'settled', settled_from: pick.event_id, result: expect.any(String) });
    }
  }, 300_000);
});
