/**
 * The log retention job (src/services/retention.ts): what goes after 30 days and what stays.
 * Rows are written with SQL at chosen ages; the job runs on the app's injected clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { REPLAY_MAX_EVENTS } from '../../src/services/events/pick-feed.js';
import { newId } from '../../src/services/ids.js';
import { LOG_RETENTION_DAYS, RetentionJob } from '../../src/services/retention.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY, pickInput, PUBLISH } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/processes.js';

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock('2026-11-22T12:00:00Z');
const daysAgo = (days: number) => new Date(clock.now().getTime() - days * DAY);
let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ clock, runtime: { startDispatcher: false } });
});
afterAll(async () => {
  await t?.close();
});

describe('log retention', () => {
  it('deletes finished deliveries (and their attempts) and unreferenced relayed events past 30 days; keeps the rest', async () => {
    const em = t.runtime.orm.em.fork();
    const pick = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput() })).data!.publishPick.id;
    const apiKeyId = (await t.graphql<{ createApiKey: { apiKey: { id: string } } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.apiKey.id;
    // The published pick's event is fanned out when relayed: wait for that before the
    // subscription exists, so the only deliveries are the ones written below.
    await waitUntil('the published pick relayed', async () => {
      const [row] = await em.execute<{ n: string }[]>('select count(*) as n from outbox_events where relayed_at is null');
      return Number(row!.n) === 0;
    }, 20_000, 20);
    // Then no relay: the unrelayed event written below must stay unrelayed (a relay would fan it
    // out to the subscription and add a delivery the test does not expect; PostgreSQL's relay,
    // woken by NOTIFY, did).
    await t.runtime.relay.stop();
    const subscription = newId();
    await em.execute(
      `insert into webhook_subscriptions (id, api_key_id, url, events, secret_ciphertext, status, created_at, updated_at)
       values (?, ?, 'https://hooks.example/a', '["pick.published"]', 'x', 'active', ?, ?)`,
      [subscription, apiKeyId, daysAgo(90), daysAgo(90)],
    );
    // Old relayed events, more than the replay window keeps, then a recent one and an old unrelayed one.
    const oldEvents = REPLAY_MAX_EVENTS + 40;
    await em.execute(
      `insert into outbox_events (id, type, pick_id, payload, created_at, relayed_at)
       select gen_random_uuid(), 'pick.published', ?, '{}'::jsonb, ?, ? from generate_series(1, ${oldEvents})`,
      [pick, daysAgo(60), daysAgo(60)],
    );
    const unrelayed = newId();
    await em.execute(`insert into outbox_events (id, type, pick_id, payload, created_at, relayed_at) values (?, 'pick.published', ?, '{}'::jsonb, ?, null)`, [
      unrelayed, pick, daysAgo(60),
    ]);
    const recent = newId();
    await em.execute(`insert into outbox_events (id, type, pick_id, payload, created_at, relayed_at) values (?, 'pick.published', ?, '{}'::jsonb, ?, ?)`, [
      recent, pick, daysAgo(1), daysAgo(1),
    ]);
    const oldest = await em.execute<{ id: string }[]>('select id from outbox_events where created_at = ? order by seq limit 6', [daysAgo(60)]);
    const eventIds = oldest.map((row) => row.id);

    const deliveries: Record<string, { status: string; age: number; event: string }> = {
      succeededOld: { status: 'succeeded', age: LOG_RETENTION_DAYS + 1, event: eventIds[0]! },
      failedOld: { status: 'failed', age: LOG_RETENTION_DAYS + 1, event: eventIds[1]! },
      cancelledOld: { status: 'cancelled', age: LOG_RETENTION_DAYS + 1, event: eventIds[2]! },
      succeededRecent: { status: 'succeeded', age: LOG_RETENTION_DAYS - 1, event: eventIds[3]! },
      pendingOld: { status: 'pending', age: 60, event: eventIds[4]! },
    };
    const ids: Record<string, string> = {};
    for (const [name, d] of Object.entries(deliveries)) {
      ids[name] = newId();
      await em.execute(
        `insert into webhook_deliveries (id, subscription_id, event_id, status, attempt_count, next_attempt_at, created_at, updated_at)
         values (?, ?, ?, ?, 1, ?, ?, ?)`,
        [ids[name], subscription, d.event, d.status, d.status === 'pending' ? daysAgo(d.age) : null, daysAgo(d.age), daysAgo(d.age)],
      );
      await em.execute(
        `insert into webhook_delivery_attempts (id, delivery_id, attempt_number, attempted_at, duration_ms, status_code) values (?, ?, 1, ?, 12, 200)`,
        [newId(), ids[name], daysAgo(d.age)],
      );
    }

    const result = await new RetentionJob(t.runtime.orm, clock).prune();

    const remaining = await em.execute<{ id: string }[]>('select id from webhook_deliveries where subscription_id = ?', [subscription]);
    expect(remaining.map((row) => row.id).sort()).toEqual([ids.succeededRecent, ids.pendingOld].sort());
    expect(result.deliveries).toBe(3);
    const attempts = await em.execute<{ n: string }[]>(
      'select count(*) as n from webhook_delivery_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.subscription_id = ?',
      [subscription],
    );
    expect(Number(attempts[0]!.n)).toBe(2);
    const orphanAttempts = await em.execute<{ n: string }[]>(
      'select count(*) as n from webhook_delivery_attempts a where not exists (select 1 from webhook_deliveries d where d.id = a.delivery_id)',
    );
    expect(Number(orphanAttempts[0]!.n)).toBe(0);

    // Events: the newest 1,000 stay whatever their age; of the older ones, those still referenced stay.
    const events = await em.execute<{ id: string }[]>('select id from outbox_events order by seq');
    const kept = new Set(events.map((row) => row.id));
    expect(events.length).toBeGreaterThanOrEqual(REPLAY_MAX_EVENTS);
    for (const id of [recent, unrelayed, eventIds[3]!, eventIds[4]!]) expect(kept.has(id)).toBe(true);
    for (const id of [eventIds[0]!, eventIds[1]!, eventIds[2]!, eventIds[5]!]) expect(kept.has(id)).toBe(false);
    expect(result.events).toBeGreaterThan(0);

    // Idempotent: a second run finds nothing more to delete.
    expect(await new RetentionJob(t.runtime.orm, clock).prune()).toEqual({ deliveries: 0, events: 0, streamTokens: 0, odds: 0 });
  });

  it('deletes odds history past ODDS_HISTORY_DAYS, and old feed events without an open pick with their last prices', async () => {
    const em = t.runtime.orm.em.fork();
    const event = (id: string, kickoff: Date) =>
      em.execute(
        `insert into odds_events (id, sport_key, sport, league, home_team, away_team, commence_time, created_at, updated_at)
         values (?, 'soccer_epl', 'soccer', 'EPL', 'A', 'B', ?, ?, ?)`,
        [id, kickoff, kickoff, kickoff],
      );
    const price = async (eventId: string, at: Date) => {
      await em.execute(`insert into odds_history (event_id, bookmaker, outcome, price, at) values (?, 'tipico', 'A', 2.1, ?)`, [eventId, at]);
      await em.execute(
        `insert into odds_latest (event_id, bookmaker, outcome, price, at) values (?, 'tipico', 'A', 2.1, ?) on conflict do nothing`,
        [eventId, at],
      );
    };
    await event('old', daysAgo(20));
    await event('old-open', daysAgo(20));
    await event('recent', daysAgo(3));
    await price('old', daysAgo(20));
    await price('old-open', daysAgo(20));
    await price('recent', daysAgo(3));
    await price('recent', daysAgo(15));
    // An open engine pick keeps its event (its closing line and settlement need it).
    const pick = (await t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: 'Old FC', selection: 'Old FC' }) })).data!.publishPick.id;
    await em.execute(`update picks set event_id = 'old-open' where id = ?`, [pick]);

    // Deleting odds_latest rows is a write of it: it takes a write epoch (src/domain/price-memory.ts).
    const epoch = async () => {
      const [row] = await em.execute<{ epoch: string | number }[]>('select epoch from odds_latest_epoch');
      return Number(row!.epoch);
    };
    const epochBefore = await epoch();
    const result = await new RetentionJob(t.runtime.orm, clock, { oddsHistoryDays: 14 }).prune();
    expect(await epoch()).toBe(epochBefore + 1);
    // History: the three rows older than 14 days go; events: 'old' and its last price go.
    expect(result.odds).toBe(5);
    const history = await em.execute<{ event_id: string }[]>('select event_id from odds_history order by at');
    expect(history.map((row) => row.event_id)).toEqual(['recent']);
    const events = await em.execute<{ id: string }[]>('select id from odds_events order by id');
    expect(events.map((row) => row.id)).toEqual(['old-open', 'recent']);
    const latest = await em.execute<{ event_id: string }[]>('select event_id from odds_latest order by event_id');
    expect(latest.map((row) => row.event_id)).toEqual(['old-open', 'recent']);
    expect((await new RetentionJob(t.runtime.orm, clock, { oddsHistoryDays: 14 }).prune()).odds).toBe(0);
    // A run that deleted no last price leaves the epoch alone: a writer's memory stays good.
    expect(await epoch()).toBe(epochBefore + 1);
    // A reference's kept market is remembered under the same epoch: deleting one takes it too,
    // even for an event with no last price left.
    await event('old-closes', daysAgo(20));
    await em.execute(
      `insert into reference_markets (event_id, generation, market, bookmaker, line, prices, updated_at) values ('old-closes', 0, 'h2h', 'pinnacle', null, '[]', ?)`,
      [daysAgo(21)],
    );
    expect((await new RetentionJob(t.runtime.orm, clock, { oddsHistoryDays: 14 }).prune()).odds).toBe(2);
    expect(await epoch()).toBe(epochBefore + 2);
  });
});
