import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidParameterError } from '../../src/domain/errors.js';
import type { PickSnapshot } from '../../src/domain/pick-view.js';
import { afterFailedAttempt, maxAttempts, parseEventTypes, webhookBody, webhookHeaders } from '../../src/domain/webhook.js';

const SCHEDULE = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

describe('parseEventTypes', () => {
  it('accepts known types in any order and returns them in a stable order', () => {
    expect(parseEventTypes(['pick.settled', 'pick.published'])).toEqual(['pick.published', 'pick.settled']);
    expect(parseEventTypes(['pick.settled'])).toEqual(['pick.settled']);
  });

  it.each([[undefined], [null], ['pick.published'], [[]], [['pick.created']], [['PICK_PUBLISHED']], [[1]], [[null]], [['pick.published', 'pick.published']], [{}]])(
    'refuses %j with invalid_parameter events',
    (raw) => {
      try {
        parseEventTypes(raw);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidParameterError);
        expect((error as InvalidParameterError).extras).toEqual({ parameter: 'events' });
      }
    },
  );
});

describe('retry schedule', () => {
  it('retries after 1 min, 5 min, 30 min, 2 h, 12 h, then exhausts: six attempts in all', () => {
    const failedAt = new Date('2026-11-22T12:00:00Z');
    const delays = [1, 2, 3, 4, 5].map((attempt) => {
      const next = afterFailedAttempt(attempt, SCHEDULE, failedAt);
      if (next.kind !== 'retry') throw new Error('expected a retry');
      return next.at.getTime() - failedAt.getTime();
    });
    expect(delays).toEqual(SCHEDULE);
    expect(afterFailedAttempt(6, SCHEDULE, failedAt)).toEqual({ kind: 'exhausted' });
    expect(maxAttempts(SCHEDULE)).toBe(6);
  });

  it('rejects attempt numbers below 1', () => {
    expect(() => afterFailedAttempt(0, SCHEDULE, new Date())).toThrow(RangeError);
    expect(() => afterFailedAttempt(1.5, SCHEDULE, new Date())).toThrow(RangeError);
  });
});

describe('delivery body and headers', () => {
  const pick = {
    id: '01930000-0000-7000-8000-000000000001',
    sport: 'soccer',
    league: 'Premier League',
    homeTeam: 'Arsenal',
    awayTeam: 'Chelsea',
    kickoffAt: '2026-12-01T15:00:00.000Z',
    description: 'Arsenal to win',
    odds: 2.2,
    edgePct: 10,
    confidence: 70,
    status: 'published',
    settledAt: null,
    result: null,
    publishedAt: '2026-11-22T12:00:00.000Z',
  } as unknown as PickSnapshot;
  const event = { id: '01930000-0000-7000-8000-0000000000e1', type: 'pick.published' as const, createdAt: '2026-11-22T12:00:00.000Z', pick };

  it('is DESIGN 3 body with the Pick of spec 2.1, identical bytes every time', () => {
    const body = webhookBody(event);
    expect(webhookBody(event)).toBe(body);
    const parsed = JSON.parse(body);
    expect(Object.keys(parsed)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(parsed).toMatchObject({ id: event.id, type: 'pick.published', created_at: event.createdAt, data: { id: pick.id, home_team: 'Arsenal', pick: 'Arsenal to win' } });
  });

  it('signs exactly the body bytes, and carries the delivery id in both header families', () => {
    const body = webhookBody(event);
    const headers = webhookHeaders({ deliveryId: 'd-1', eventType: 'pick.published', secret: 'whsec_c2VjcmV0', body, timestampSeconds: 1_700_000_000 });
    expect(headers['x-service-signature']).toBe(`sha256=${createHmac('sha256', 'whsec_c2VjcmV0').update(body).digest('hex')}`);
    expect(headers['x-service-delivery']).toBe('d-1');
    expect(headers['webhook-id']).toBe('d-1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['webhook-signature']).toBe(`v1,${createHmac('sha256', Buffer.from('c2VjcmV0', 'base64')).update(`d-1.1700000000.${body}`).digest('base64')}`);
    expect(headers['x-service-event']).toBe('pick.published');
    expect(headers['content-type']).toBe('application/json');
  });
});
