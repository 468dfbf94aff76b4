/**
 * Leases (engine_leases): one instance of a deployment does a periodic job at a time. A lease is
 * taken when free or expired and renewed by its holder; expiry is decided on the database's
 * clock, so instances with skewed clocks agree on it.
 */
import type { Em } from './orm.js';

/** Takes or renews `name` for `holder` until now + ttlMs; true when `holder` holds it now. */
export async function tryTakeLease(em: Em, name: string, holder: string, ttlMs: number): Promise<boolean> {
  const rows = await em.execute<{ holder: string }[]>(
    `insert into engine_leases (name, holder, expires_at) values (?, ?, clock_timestamp() + ? * interval '1 millisecond')
     on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
     where engine_leases.holder = excluded.holder or engine_leases.expires_at < clock_timestamp()
     returning holder`,
    [name, holder, ttlMs],
  );
  return rows.length === 1;
}

/** Gives the lease up at once (a clean stop), so another instance need not wait for it to expire. */
export async function releaseLease(em: Em, name: string, holder: string): Promise<void> {
  await em.execute(`delete from engine_leases where name = ? and holder = ?`, [name, holder]);
}
