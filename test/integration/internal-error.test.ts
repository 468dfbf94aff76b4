/**
 * An unexpected failure (here: the picks table is gone under the running service; the error is logged
 * at level error, as every unexpected failure is) answers 500 internal_error with a generic
 * message: no stack, no SQL, no driver text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CREATE_KEY } from '../helpers/fixtures.js';

let t: TestApp;
let key = '';
beforeAll(async () => {
  t = await createTestApp({ captureLogs: true });
  key = (await t.graphql<{ createApiKey: { key: string } }>(CREATE_KEY, { input: { tier: 'GROWTH' } })).data!.createApiKey.key;
  // Warm the key cache, then take the table away under the running service.
  await t.app.inject({ method: 'GET', url: '/api/v1/picks', headers: { authorization: `Bearer ${key}` } });
  await t.runtime.relay.stop();
  await t.runtime.orm.em.fork().execute('alter table picks rename to picks_moved_away');
});
afterAll(async () => {
  await t?.close();
});

describe('500 internal_error', () => {
  it('answers REST with the documented body and nothing internal', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/track-record?days_back=7', headers: { authorization: `Bearer ${key}` } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'internal_error', message: 'Unexpected server error; retry with exponential backoff.' });
    expect(res.body).not.toMatch(/select|picks|stack|at \//i);
    expect(res.headers['x-request-id']).toBeTruthy();
    // The details go to the log, at level error, for the operator.
    expect(t.logs.some((record) => record.level === 50 && JSON.stringify(record.err).includes('picks'))).toBe(true);
  });

  it('answers GraphQL with extensions.code internal_error', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${key}` }, payload: { query: '{ trackRecord(daysBack: 7) { overall { roiPct } } }' } });
    const body = res.json();
    expect(body.errors[0]).toMatchObject({ message: 'Unexpected server error; retry with exponential backoff.', extensions: { code: 'internal_error' } });
    expect(JSON.stringify(body)).not.toMatch(/select|stack/i);
    expect(t.logs.filter((record) => record.level === 50 && record.msg === 'unexpected GraphQL error').length).toBeGreaterThanOrEqual(2);
  });
});
