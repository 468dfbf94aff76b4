/**
 * Scratch databases booted from a migrated dump (initORM's `template`): each copy holds the
 * whole schema, is a deployment of its own, and is independent of the other copies.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.js';
import { deploymentId, dumpMigratedPglite, initORM, type Orm } from '../../src/persistence/orm.js';

const opened: Orm[] = [];
afterAll(async () => {
  for (const orm of opened) await orm.close(true);
});

/** Not migrated: the schema must come from the dump itself. */
async function copy(template: Blob): Promise<Orm> {
  const orm = await initORM({ kind: 'pglite', dataDir: 'memory://', template }, { migrate: false });
  opened.push(orm);
  return orm;
}

describe('a PGlite database booted from a migrated dump', () => {
  it('has every migration applied, its own deployment id, and rows of its own', async () => {
    const template = await dumpMigratedPglite();
    const [first, second] = [await copy(template), await copy(template)];
    for (const orm of [first, second]) {
      const applied = await orm.em.fork().execute<{ name: string }[]>('select name from mikro_orm_migrations order by id');
      expect(applied.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
    }
    expect(await deploymentId(first)).not.toBe(await deploymentId(second));
    await first.em.fork().execute(`create table copy_probe (n int)`);
    await first.em.fork().execute(`insert into copy_probe values (1)`);
    const [row] = await first.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from copy_probe`);
    expect(row!.n).toBe(1);
    await expect(second.em.fork().execute('select 1 from copy_probe')).rejects.toThrow(/copy_probe/);
  });
});
