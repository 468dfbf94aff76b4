/**
 * isDatabaseUnavailable on the errors the drivers really raise (PGlite by default, PostgreSQL
 * with DATABASE_URL): a value the server refuses (a NUL byte, a lone surrogate in JSON) is a
 * bug or bad input, an internal error; only a database that cannot be reached is an outage.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initORM, type Orm } from '../../src/persistence/orm.js';
import { isDatabaseUnavailable } from '../../src/persistence/availability.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let orm: Orm;

beforeAll(async () => {
  database = await createTestDatabase();
  orm = await initORM(database.target);
});
afterAll(async () => {
  await orm?.close(true);
  await database?.drop();
});

async function errorOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected the query to fail');
}

describe('errors the database answers', () => {
  it.each([
    // MikroORM inlines parameters into the query text; the NUL cuts the protocol message short:
    // 08P01 "insufficient data left in message" (PGlite) / "invalid message format" (PostgreSQL).
    ['a NUL byte in a text parameter', 'select ?::text as v', ['a\u0000b'], '08P01'],
    ['a lone surrogate in a JSON parameter', 'select ?::jsonb as v', [JSON.stringify({ a: '\uD800' })], '22P02'],
    ['an escaped NUL in a JSON parameter', 'select ?::jsonb as v', [JSON.stringify({ a: '\u0000' })], '22P05'],
  ])('%s is not an outage', async (_name, sql, params, code) => {
    const error = await errorOf(() => orm.em.fork().execute(sql, params));
    expect((error as { code?: string }).code).toBe(code);
    expect(isDatabaseUnavailable(error)).toBe(false);
    // The connection is still good: the next query answers.
    await expect(orm.em.fork().execute('select 1 as one')).resolves.toEqual([{ one: 1 }]);
  });
});

describe('errors of a database that cannot be reached', () => {
  it('a refused connection is an outage', async () => {
    // A loopback port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const unreachable = await initORM({ kind: 'postgres', url: `postgres://postgres@127.0.0.1:${port}/none`, poolMax: 1 });
    try {
      const error = await errorOf(() => unreachable.em.fork().execute('select 1'));
      expect(isDatabaseUnavailable(error)).toBe(true);
    } finally {
      await unreachable.close(true);
    }
  });
});
