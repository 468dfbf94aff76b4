/** Which errors mean "the database cannot be reached now" (503 service_unavailable) and which are bugs (500). */
import { ConnectionException, DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/persistence/availability.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['admin shutdown (fast shutdown, restart)', withCode('terminating connection due to administrator command', '57P01')],
    ['starting up', withCode('the database system is starting up', '57P03')],
    ['too many connections', withCode('sorry, too many clients already', '53300')],
    ['connection exception class 08', withCode('connection failure', '08006')],
    ['pool acquire / connect timeout', new Error('timeout exceeded when trying to connect')],
    ['connection terminated', new Error('Connection terminated unexpectedly')],
    ['wrapped by MikroORM', new DriverException(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))],
    ['MikroORM connection exception', new ConnectionException(withCode('terminating connection due to administrator command', '57P01'))],
    ['in a cause chain', new Error('query failed', { cause: withCode('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED') })],
    ['several addresses refused', new AggregateError([withCode('a', 'ECONNREFUSED'), withCode('b', 'ECONNREFUSED')], 'connect failed')],
  ])('%s: unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new UniqueConstraintViolationException(withCode('duplicate key value', '23505'))],
    ['a syntax error', withCode('syntax error at or near "selec"', '42601')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['not an error', 'ECONNREFUSED'],
    ['null', null],
  ])('%s: not unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
