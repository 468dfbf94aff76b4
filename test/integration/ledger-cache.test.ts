/**
 * The public ledger's kept bodies (adapters/public/ledger.ts, docs/DECISIONS.md "Ledger cache"):
 * a read that hits runs no query, an announced append drops what it changes, a reveal or a
 * midnight passing on the app's clock makes a body stale without any append, errors are never
 * kept, ETags revalidate, keys are the parsed parameters, and a render that finds the chain
 * longer than a kept head drops it. Queries are counted by wrapping the real LedgerService's
 * methods (they still run); appends made without their announcement use the real append.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { AppError, ErrorCode } from '../../src/domain/errors.js';
import type { CommittedPick } from '../../src/domain/ledger.js';
import { appendLedgerEntries } from '../../src/persistence/ledger-repository.js';
import { dateOf, executeBound, jsonOf } from '../../src/persistence/sql.js';
import { announceChange } from '../helpers/announce.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { HOLD, PUBLISH, pickInput } from '../helpers/fixtures.js';

const LEDGER = '/api/public/ledger';

interface Page {
  entries: { seq: number; type: string; pick_id: string; pick?: { kickoff_at: string }; salt?: string }[];
  next_after: number | null;
}

async function boot(start = '2026-11-22T12:00:00Z'): Promise<{ t: TestApp; clock: ManualClock }> {
  const clock = new ManualClock(start);
  const t = await createTestApp({ clock });
  onTestFinished(() => t.close());
  return { t, clock };
}

/**
 * Runs a change the service announces and waits until its announcement has come back: the
 * instance drops its caches at once, and again when the bus delivers the message it sent (on
 * Redis a few milliseconds later), which must not land in the middle of the next read.
 */
async function announced<T>(t: TestApp, change: () => Promise<T>): Promise<T> {
  let heard = 0;
  let echoed!: () => void;
  const both = new Promise<void>((resolve) => (echoed = resolve));
  t.runtime.onVisibilityChange(() => {
    heard += 1;
    if (heard === 2) echoed();
  });
  const result = await change();
  await both;
  return result;
}

let team = 0;
/** Publishes a pick (one ledger entry, announced); a new home team each time. */
async function publish(t: TestApp, overrides: Record<string, unknown> = {}): Promise<string> {
  team += 1;
  const res = await announced(t, () => t.graphql<{ publishPick: { id: string } }>(PUBLISH, { input: pickInput({ homeTeam: `Home ${team}`, selection: `Home ${team}`, ...overrides }) }));
  expect(res.errors).toBeUndefined();
  return res.data!.publishPick.id;
}

const get = (t: TestApp, url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

/** How often the real service method ran (a request answered from a kept body does not reach it). */
function countCalls(t: TestApp, method: 'page' | 'head' | 'checkpoints'): { calls: number } {
  const service = t.runtime.services.ledger as unknown as Record<typeof method, (...args: unknown[]) => Promise<unknown>>;
  const real = service[method];
  const counter = { calls: 0 };
  service[method] = (...args: unknown[]) => {
    counter.calls += 1;
    return real.apply(service, args);
  };
  onTestFinished(() => {
    service[method] = real;
  });
  return counter;
}

/**
 * An append made elsewhere whose announcement has not arrived (another instance's, before the
 * bus delivers it): the real append, a pick.settled copy of the last entry's pick, unannounced.
 */
async function appendUnannounced(t: TestApp): Promise<void> {
  const em = t.runtime.orm.em.fork();
  const [last] = await executeBound<Record<string, unknown>>(em, 'select pick_id, reveal_after, pick, salt from ledger_entries order by seq desc limit 1', []);
  await em.transactional((tx) =>
    appendLedgerEntries(tx, [
      { type: 'pick.settled', at: t.clock.now(), pickId: String(last!.pick_id), revealAfter: dateOf(last!.reveal_after), pick: jsonOf<CommittedPick>(last!.pick), salt: String(last!.salt) },
    ]),
  );
}

describe('the public ledger keeps its rendered bodies', () => {
  it('answers a second read from the kept body: no query, and an unannounced append stays unseen until a change is announced', async () => {
    const { t } = await boot();
    await publish(t);
    await publish(t);
    const pages = countCalls(t, 'page');
    const miss = await get(t, LEDGER);
    expect(miss.statusCode).toBe(200);
    expect((miss.json() as Page).entries.map((entry) => entry.seq)).toEqual([1, 2]);
    expect(pages.calls).toBe(1);

    await appendUnannounced(t);
    const hit = await get(t, LEDGER);
    expect(hit.rawPayload.equals(miss.rawPayload)).toBe(true);
    expect(hit.headers.etag).toBe(miss.headers.etag);
    expect(pages.calls).toBe(1);

    await announceChange(t);
    expect((((await get(t, LEDGER)).json()) as Page).entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(pages.calls).toBe(2);
  });

  it('drops the page, the head and the checkpoints with an announced append (a publication, a hold)', async () => {
    const { t, clock } = await boot();
    await publish(t, { kickoffAt: '2026-11-23T15:00:00Z' });
    clock.set('2026-11-23T01:00:00Z'); // a midnight has passed: one checkpoint
    const checkpointCalls = countCalls(t, 'checkpoints');
    const before = { page: (await get(t, LEDGER)).json() as Page, head: (await get(t, `${LEDGER}/head`)).json(), checkpoints: (await get(t, `${LEDGER}/checkpoints`)).json() };
    expect(before.head).toMatchObject({ seq: 1 });
    expect(before.checkpoints.checkpoints).toMatchObject([{ checkpoint: '2026-11-23T00:00:00.000Z', seq: 1 }]);
    expect((await get(t, `${LEDGER}/checkpoints`)).statusCode).toBe(200);
    expect(checkpointCalls.calls).toBe(1);

    const id = await publish(t, { kickoffAt: '2026-11-25T15:00:00Z' });
    expect((await get(t, `${LEDGER}/head`)).json()).toMatchObject({ seq: 2 });
    expect(((await get(t, LEDGER)).json() as Page).entries.map((entry) => entry.seq)).toEqual([1, 2]);
    // Rendered again (an append after the last midnight leaves the list as it was).
    expect((await get(t, `${LEDGER}/checkpoints`)).json()).toEqual(before.checkpoints);
    expect(checkpointCalls.calls).toBe(2);

    expect((await announced(t, () => t.graphql(HOLD, { id }))).errors).toBeUndefined();
    expect((await get(t, `${LEDGER}/head`)).json()).toMatchObject({ seq: 3 });
    expect(((await get(t, LEDGER)).json() as Page).entries.map((entry) => [entry.seq, entry.type])).toEqual([[1, 'pick.published'], [2, 'pick.published'], [3, 'pick.held']]);
  });

  it('shows a pick and its salt once its reveal time passes on the app clock, without any append', async () => {
    const { t, clock } = await boot();
    await publish(t, { kickoffAt: '2026-11-23T15:00:00Z' });
    await publish(t, { kickoffAt: '2026-11-23T17:30:00Z' });
    const pages = countCalls(t, 'page');
    const revealedSeqs = async () => ((await get(t, `${LEDGER}?limit=500`)).json() as Page).entries.filter((entry) => entry.pick && entry.salt).map((entry) => entry.seq);
    const hidden = await get(t, `${LEDGER}?limit=500`);
    expect(await revealedSeqs()).toEqual([]);
    // Nothing reveals before the first kickoff: the kept body holds until then.
    clock.set('2026-11-23T14:59:59.999Z');
    expect((await get(t, `${LEDGER}?limit=500`)).rawPayload.equals(hidden.rawPayload)).toBe(true);
    expect(pages.calls).toBe(1);

    clock.set('2026-11-23T15:00:00.000Z');
    const first = await get(t, `${LEDGER}?limit=500`);
    expect((first.json() as Page).entries[0]).toMatchObject({ pick: { kickoff_at: '2026-11-23T15:00:00.000Z' }, salt: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((first.json() as Page).entries[1]).not.toHaveProperty('pick');
    expect(first.headers.etag).not.toBe(hidden.headers.etag);
    expect(pages.calls).toBe(2);
    clock.set('2026-11-23T17:29:59.999Z');
    expect(await revealedSeqs()).toEqual([1]);
    expect(pages.calls).toBe(2);
    clock.set('2026-11-23T17:30:00.000Z');
    expect(await revealedSeqs()).toEqual([1, 2]);
    expect(pages.calls).toBe(3);
  });

  it('lists a checkpoint once midnight (UTC) passes on the app clock, without any append', async () => {
    const { t, clock } = await boot();
    await publish(t, { kickoffAt: '2026-11-25T15:00:00Z' });
    const checkpointCalls = countCalls(t, 'checkpoints');
    expect((await get(t, `${LEDGER}/checkpoints`)).json()).toEqual({ checkpoints: [] });
    clock.set('2026-11-22T23:59:59.999Z');
    expect((await get(t, `${LEDGER}/checkpoints`)).json()).toEqual({ checkpoints: [] });
    expect(checkpointCalls.calls).toBe(1);
    clock.set('2026-11-23T00:00:00.000Z');
    expect((await get(t, `${LEDGER}/checkpoints`)).json().checkpoints).toMatchObject([{ checkpoint: '2026-11-23T00:00:00.000Z', seq: 1 }]);
    expect(checkpointCalls.calls).toBe(2);
  });

  it('runs one query for concurrent misses of one key, and answers them all with the same bytes', async () => {
    const { t } = await boot();
    await publish(t);
    const pages = countCalls(t, 'page');
    const heads = countCalls(t, 'head');
    const answers = await Promise.all([
      ...Array.from({ length: 12 }, () => get(t, `${LEDGER}?limit=500`)),
      ...Array.from({ length: 12 }, () => get(t, `${LEDGER}/head`)),
    ]);
    expect(answers.map((res) => res.statusCode)).toEqual(Array(24).fill(200));
    expect(new Set(answers.slice(0, 12).map((res) => res.body)).size).toBe(1);
    expect(new Set(answers.slice(12).map((res) => res.body)).size).toBe(1);
    expect([pages.calls, heads.calls]).toEqual([1, 1]);
  });

  it('never keeps an error: a failed render is answered no-store, and the next request renders again', async () => {
    const { t } = await boot();
    await publish(t);
    const service = t.runtime.services.ledger;
    const real = service.page.bind(service);
    let failures = 1;
    // The database unreachable for one query.
    service.page = (...args) => (failures-- > 0 ? Promise.reject(new AppError(ErrorCode.serviceUnavailable)) : real(...args));
    onTestFinished(() => {
      service.page = real;
    });
    const failed = await get(t, LEDGER);
    expect(failed.statusCode).toBe(503);
    expect(failed.headers).toMatchObject({ 'cache-control': 'no-store', 'access-control-allow-origin': '*' });
    expect(failed.json()).toMatchObject({ error: 'service_unavailable' });
    const next = await get(t, LEDGER);
    expect(next.statusCode).toBe(200);
    expect((next.json() as Page).entries).toHaveLength(1);
  });

  it('revalidates with the ETag of a kept body (304 with its headers), and not with one an append made stale', async () => {
    const { t } = await boot();
    await publish(t);
    const pages = countCalls(t, 'page');
    const miss = await get(t, LEDGER);
    const { date: _date, 'x-request-id': _id, ...missHeaders } = miss.headers;
    const notModified = await get(t, LEDGER, { 'if-none-match': String(miss.headers.etag) });
    expect(notModified.statusCode).toBe(304);
    expect(notModified.body).toBe('');
    expect(notModified.headers).toMatchObject({ etag: miss.headers.etag, 'cache-control': 'public, s-maxage=300, stale-while-revalidate=600', 'access-control-allow-origin': '*' });
    expect(notModified.headers['content-type']).toBeUndefined();
    const hit = await get(t, LEDGER);
    const { date: _date2, 'x-request-id': _id2, ...hitHeaders } = hit.headers;
    expect(hitHeaders).toEqual(missHeaders);
    expect(pages.calls).toBe(1);

    await publish(t);
    const changed = await get(t, LEDGER, { 'if-none-match': String(miss.headers.etag) });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(miss.headers.etag);
    expect((changed.json() as Page).entries).toHaveLength(2);
    expect((await get(t, LEDGER, { 'if-none-match': String(changed.headers.etag) })).statusCode).toBe(304);
  });

  it('keys on the parsed after and limit: spellings of one page share a body, other pages and refusals stay apart', async () => {
    const { t } = await boot();
    await publish(t);
    await publish(t);
    const pages = countCalls(t, 'page');
    const bodies = await Promise.all([LEDGER, `${LEDGER}?limit=100`, `${LEDGER}?after=0&limit=100`, `${LEDGER}?limit=+100`, `${LEDGER}?limit=0100&after=00`].map(async (url) => (await get(t, url)).body));
    expect(new Set(bodies).size).toBe(1);
    expect(pages.calls).toBe(1);
    expect(((await get(t, `${LEDGER}?limit=1`)).json() as Page)).toMatchObject({ entries: [{ seq: 1 }], next_after: 1 });
    expect(((await get(t, `${LEDGER}?after=1&limit=1`)).json() as Page)).toMatchObject({ entries: [{ seq: 2 }], next_after: 2 });
    expect(pages.calls).toBe(3);
    for (const query of ['limit=501', 'limit=0', 'after=-1', 'limit=1&limit=1', 'limit=1x']) {
      const refused = await get(t, `${LEDGER}?${query}`);
      expect([refused.statusCode, refused.json().error, refused.headers['cache-control']], query).toEqual([400, 'invalid_parameter', 'no-store']);
    }
    expect(((await get(t, `${LEDGER}?limit=500`)).json() as Page).entries).toHaveLength(2);
  });

  it('keeps a full page of revealed entries through appends; a page with a hidden entry, or not full, is rendered again', async () => {
    const { t } = await boot();
    // Imported picks kicked off already: their entries are revealed from the start.
    await publish(t, { kickoffAt: '2026-11-20T15:00:00Z', publishedAt: '2026-11-19T10:00:00Z' });
    await publish(t, { kickoffAt: '2026-11-20T18:00:00Z', publishedAt: '2026-11-19T10:00:00Z' });
    await publish(t, { kickoffAt: '2026-11-30T15:00:00Z' }); // seq 3, hidden until its kickoff
    const pages = countCalls(t, 'page');
    const revealedFull = (await get(t, `${LEDGER}?limit=2`)).body;
    await get(t, `${LEDGER}?after=2&limit=1`); // full, hidden entry
    await get(t, `${LEDGER}?limit=100`); // the end of the chain
    expect(pages.calls).toBe(3);

    await publish(t, { kickoffAt: '2026-11-30T18:00:00Z' });
    expect((await get(t, `${LEDGER}?limit=2`)).body).toBe(revealedFull);
    expect(pages.calls).toBe(3);
    await get(t, `${LEDGER}?after=2&limit=1`);
    expect(((await get(t, `${LEDGER}?limit=100`)).json() as Page).entries).toHaveLength(4);
    expect(pages.calls).toBe(5);
  });

  it('drops a kept head when a render finds the chain longer (an append whose announcement is still on its way)', async () => {
    const { t } = await boot();
    await publish(t);
    await publish(t);
    expect((await get(t, `${LEDGER}/head`)).json()).toMatchObject({ seq: 2 });
    expect(((await get(t, LEDGER)).json() as Page).entries).toHaveLength(2);
    await appendUnannounced(t);
    expect((await get(t, `${LEDGER}/head`)).json()).toMatchObject({ seq: 2 });
    // A page not kept yet shows entry 3: the head and the last page kept must not stay behind it.
    expect(((await get(t, `${LEDGER}?after=2`)).json() as Page).entries.map((entry) => entry.seq)).toEqual([3]);
    expect((await get(t, `${LEDGER}/head`)).json()).toMatchObject({ seq: 3 });
    expect(((await get(t, LEDGER)).json() as Page).entries).toHaveLength(3);
  });
});
