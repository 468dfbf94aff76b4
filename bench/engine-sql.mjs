/**
 * What-if for the value engine's write statements (docs/PERFORMANCE.md, "Value engine"). Not
 * part of `npm run bench:engine`; after a build, run by hand:
 *
 *   node bench/engine-sql.mjs                     # PGlite in memory
 *   BENCH_ENGINE_SQL_URL=postgres://postgres@127.0.0.1:25432/picks_enginesql node bench/engine-sql.mjs
 *
 * The schema comes from the migrations (dist/, initORM): PGlite in memory, or the given
 * PostgreSQL database, created when missing and migrated; it must be a scratch database (its
 * odds tables are emptied). It stores 500 events x 8 bookmakers x 3 outcomes, then for
 * ROUNDS rounds moves CHANGE of the prices (and the reference's fair prices of a tenth of the
 * events, while its last_update moves on all) and times each variant in its own transaction,
 * rolled back, so every variant sees the same state:
 *   - the statements as src/persistence/odds-repository.ts runs them: em.execute() with `?`,
 *     which MikroORM formats into the SQL text on the client (the 1-2 MB JSON included);
 *   - the same SQL with the JSON as a bound parameter ($1, through the transaction's Kysely
 *     context), so PostgreSQL receives it as a value;
 *   - bound, and only new or changed rows reaching the upsert / update.
 * Loopback only.
 */
import { CompiledQuery } from 'kysely';
import { initORM } from '../dist/src/persistence/orm.js';
import { assertLoopbackUrl, r1, summarise } from './common.mjs';
import { ensureDatabase, truncateTables } from './server-common.mjs';

const EVENTS = 500;
const BOOKS = 8;
const ROUNDS = Number(process.env.BENCH_ENGINE_SQL_ROUNDS ?? 8);
const CHANGE = Number(process.env.BENCH_ENGINE_SQL_CHANGE ?? 0.05);

const incoming = `incoming as (
  select distinct on (event_id, bookmaker, market, outcome) event_id, bookmaker, market, outcome, price, at
    from jsonb_to_recordset(JSON_PARAM::jsonb) as v (event_id text, bookmaker text, market text, outcome text, price numeric(10,4), at timestamptz)
   order by event_id, bookmaker, market, outcome, at desc)`;
const upsertFrom = (source) => `changed as (
  insert into odds_latest as l (event_id, bookmaker, market, outcome, price, at)
  select event_id, bookmaker, market, outcome, price, at from ${source}
  on conflict (event_id, bookmaker, market, outcome) do update set price = excluded.price, at = excluded.at
  where l.price <> excluded.price and l.at <= excluded.at
  returning l.event_id, l.bookmaker, l.market, l.outcome, l.price, l.at
), written as (
  insert into odds_history (event_id, bookmaker, market, outcome, price, at) select event_id, bookmaker, market, outcome, price, at from changed returning 1
) select count(*)::int as written from written`;

const pricesSql = `with ${incoming}, ${upsertFrom('incoming')}`;
const pricesFilteredSql = `with ${incoming}, fresh as (
   select i.* from incoming i left join odds_latest o using (event_id, bookmaker, market, outcome)
    where o.event_id is null or (o.price <> i.price and o.at <= i.at)
 ), ${upsertFrom('fresh')}`;
// The reference's fair prices per event generation and market (reference_markets, as odds-repository.ts keeps them).
const fairSql = `insert into reference_markets as r (event_id, generation, market, line, fair, prices, updated_at)
   select v.event_id, 0, 'h2h', null, v.fair, '[]'::jsonb, v.updated_at
     from jsonb_to_recordset(JSON_PARAM::jsonb) as v (event_id text, fair jsonb, updated_at timestamptz)
     join odds_events e on e.id = v.event_id
    where v.updated_at < e.commence_time
   on conflict (event_id, generation, market) do update set fair = excluded.fair, updated_at = excluded.updated_at
    where r.updated_at <= excluded.updated_at`;
const fairFilteredSql = `${fairSql} and r.fair is distinct from excluded.fair`;

/** As odds-repository.ts runs it: em.execute with `?` (MikroORM inlines the parameter into the SQL text). */
const inlined = (sql) => async (em, json) => {
  if (!sql.startsWith('with')) return (await em.execute(sql.replace('JSON_PARAM', '?'), [json], 'run')).affectedRows;
  return (await em.execute(sql.replace('JSON_PARAM', '?'), [json]))[0].written;
};
/** The JSON as a bound parameter through the transaction's Kysely context. */
const bound = (sql) => async (em, json) => {
  const result = await em.getTransactionContext().executeQuery(CompiledQuery.raw(sql.replace('JSON_PARAM', '$1'), [json]));
  return result.rows[0]?.written ?? Number(result.numAffectedRows ?? result.numUpdatedOrDeletedRows ?? 0);
};

const VARIANTS = {
  pricesAsIs: { payload: 'prices', run: inlined(pricesSql) },
  pricesBound: { payload: 'prices', run: bound(pricesSql) },
  pricesBoundFiltered: { payload: 'prices', run: bound(pricesFilteredSql) },
  fairAsIs: { payload: 'fair', run: inlined(fairSql) },
  fairBound: { payload: 'fair', run: bound(fairSql) },
  fairBoundFiltered: { payload: 'fair', run: bound(fairFilteredSql) },
};

const url = process.env.BENCH_ENGINE_SQL_URL?.trim();
if (url) {
  assertLoopbackUrl('BENCH_ENGINE_SQL_URL', url);
  await ensureDatabase(url);
}
const orm = await initORM(url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir: 'memory://' }, { migrate: true });
await truncateTables(orm, ['odds_history', 'odds_latest', 'reference_markets', 'odds_events']);
const db = {
  kind: url ? 'postgresql' : 'pglite',
  query: (sql, params = []) => orm.em.fork().execute(sql.replace(/\$\d/g, '?'), params),
};
const now = Date.now();
const kickoff = new Date(now + 86_400_000).toISOString();
const prices = [];
const fair = [];
for (let e = 0; e < EVENTS; e += 1) {
  const id = `event${String(e).padStart(27, '0')}`;
  await db.query(
    `insert into odds_events (id, sport_key, sport, league, home_team, away_team, commence_time, created_at, updated_at) values ($1, 'soccer_epl', 'soccer', 'EPL', $2, $3, $4, now(), now())`,
    [id, `Home ${e}`, `Away ${e}`, kickoff],
  );
  fair.push({ event_id: id, fair: { [`Home ${e}`]: 2.1, [`Away ${e}`]: 3.6, Draw: 3.4 }, updated_at: null });
  for (let b = 0; b < BOOKS; b += 1) for (const outcome of [`Home ${e}`, `Away ${e}`, 'Draw']) prices.push({ event_id: id, bookmaker: `book${b}`, market: 'h2h', outcome, price: 2 + ((e + b) % 50) / 100, at: null });
}
let tick = now - 3_600_000;
const stamp = () => {
  tick += 60_000;
  const at = new Date(tick).toISOString();
  for (const p of prices) p.at = at;
  for (const f of fair) f.updated_at = at;
};
stamp();
const apply = () => orm.em.fork().transactional(async (em) => {
  await VARIANTS.pricesAsIs.run(em, JSON.stringify(prices));
  await VARIANTS.fairAsIs.run(em, JSON.stringify(fair));
});
await apply();

class RolledBack extends Error {}
const times = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
const rows = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  stamp();
  for (let i = 0; i < prices.length; i += 1) if ((i * 7919 + round * 104729) % Math.round(1 / CHANGE) === 0) prices[i].price = Math.round((prices[i].price + 0.01) * 100) / 100;
  // The reference's prices move on some events only; its last_update moves on all.
  for (let i = 0; i < fair.length; i += 1) if ((i + round) % 10 === 0) fair[i].fair = { ...fair[i].fair, Draw: Math.round((fair[i].fair.Draw + 0.01) * 100) / 100 };
  const order = round % 2 === 0 ? Object.keys(VARIANTS) : Object.keys(VARIANTS).reverse();
  for (const name of order) {
    const payload = JSON.stringify(VARIANTS[name].payload === 'prices' ? prices : fair);
    await orm.em
      .fork()
      .transactional(async (em) => {
        const t0 = performance.now();
        rows[name].push(await VARIANTS[name].run(em, payload));
        times[name].push(performance.now() - t0);
        throw new RolledBack();
      })
      .catch((error) => {
        if (!(error instanceof RolledBack)) throw error;
      });
  }
  // Keep the state moving like the engine's: apply the real statements for good.
  await apply();
}
await orm.close();
console.log(`${db.kind}: ${EVENTS * BOOKS * 3} prices a poll (${Math.round(JSON.stringify(prices).length / 1024)} KiB of JSON), ${CHANGE * 100} % changed, ${ROUNDS} rounds (ms, each in a rolled-back transaction; rows = rows written)`);
for (const name of Object.keys(VARIANTS)) {
  const s = summarise(times[name]);
  console.log(`  ${name.padEnd(20)} p50 ${r1(s.p50)}  min ${r1(s.min)}  max ${r1(s.max)}  rows ${rows[name].join(',')}`);
}
