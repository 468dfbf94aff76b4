/**
 * What the start banner says about the data a start found (src/server/banner.ts): when this
 * database was set up (the deployment row, written by the migration that created it) and how
 * many picks it holds.
 */
import type { Orm } from './orm.js';

export interface DataSummary {
  createdAt: Date;
  picks: number;
}

export async function dataSummary(orm: Orm): Promise<DataSummary> {
  const rows = await orm.em.fork().execute<{ created_at: Date | string; picks: string | number }[]>(
    'select d.created_at, (select count(*) from picks) as picks from deployment d',
  );
  const row = rows[0];
  if (!row) throw new Error('The database has no deployment row: run `npm run migrate` first.');
  return { createdAt: new Date(row.created_at), picks: Number(row.picks) };
}
