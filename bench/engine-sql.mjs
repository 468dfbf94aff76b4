/**
 * What-if for the value engine's write statements (docs/PERFORMANCE.md, "Value engine"). Not
 * part of `npm run bench:engine`; after a build, run by hand:
 *
 *   node bench/engine-sql.mjs                     # PGlite in memory
 *   BENCH_ENGINE_SQL_URL=postgres://postgres@127.0.0.1:25432/picks_enginesql node bench/engine-sql.mjs
 *
 * The schema comes from the migrations (dist/, initORM): PGlite in memory, or the given
 * PostgreSQL database, created when missing and migrated; it must be a scratch database (its
 * odds tables are emptied). It stores the bench feed's shape: 500 events x 8 bookmakers x 7
 * prices (h2h 3-way, spreads and totals with their points) and the markets of 2 references
 * (reference_markets: one row per event, generation, market and bookmaker), then for ROUNDS
 * rounds moves CHANGE of the prices (and the references' prices of a tenth of the events,
 * while their last_update moves on all) and times each variant in its own transaction, rolled
 * back, so every variant sees the same state:
 *   - `*AsIs`: the statements as src/persistence/odds-repository.ts runs them
 *     (recordPriceChanges, recordReferenceMarkets): the JSON bound as $1 (executeBound, through
 *     the transaction's Kysely), unchanged rows dropped before the upsert / update;
 *   - `*Inlined`: the same SQL through em.execute() with `?`, which MikroORM formats into the
 *     SQL text on the client (the 1-5 MB JSON included): how the engine first ran them;
 *   - `*Unfiltered`: bound, every row reaching the upsert (prices) or rewritten whenever its
 *     last_update moved (reference markets): before the unchanged-row filters.
 * The `reference*` variants are the statement bench/engine-server.mjs names "upsert
 * reference_markets". Loopback only.
 */
import { CompiledQuery } from 'kysely';
import { initORM } from '../dist/src/persistence/orm.js';
import { assertLoopbackUrl } from './common.mjs';
import { r1, summarise } from './lib/stats.mjs';
import { ensureDatabase, truncateTables } from './server-common.mjs';

const EVENTS = 500;
const BOOKS = 8;
const REFERENCES = ['pinnacle', 'betfair_ex_eu'];
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

const pricesUnfilteredSql = `with ${incoming}, ${upsertFrom('incoming')}`;
// As recordPriceChanges runs it: unchanged prices dropped (a join with odds_latest) before the upsert.
const pricesSql = `with ${incoming}, moved as (
   select i.* from incoming i
     left join odds_latest l on l.event_id = i.event_id and l.bookmaker = i.bookmaker and l.market = i.market and l.outcome = i.outcome
    where l.price is null or (l.price <> i.price and l.at <= i.at)
 ), ${upsertFrom('moved')}`;
// Each reference's latest pre-kickoff market per event generation (reference_markets, as recordReferenceMarkets keeps it).
const referenceUnfilteredSql = `insert into reference_markets as r (event_id, generation, market, bookmaker, line, prices, updated_at)
   select v.event_id, v.generation, v.market, v.bookmaker, v.line, v.prices, v.updated_at
     from jsonb_to_recordset(JSON_PARAM::jsonb) as v (event_id text, generation integer, market text, bookmaker text, line numeric(6,2), prices jsonb, updated_at timestamptz)
     join odds_events e on e.id = v.event_id and e.generation = v.generation
    where v.updated_at < e.commence_time
   on conflict (event_id, generation, market, bookmaker) do update
      set line = excluded.line, prices = excluded.prices, updated_at = excluded.updated_at
    where r.updated_at <= excluded.updated_at`;
const referenceSql = `${referenceUnfilteredSql}
      and (r.line is distinct from excluded.line or r.prices is distinct from excluded.prices
           or r.updated_at < excluded.updated_at - interval '60 seconds')`;

/** em.execute with `?` (MikroORM inlines the parameter into the SQL text). */
const inlined = (sql) => async (em, json) => {
  if (!sql.startsWith('with')) return (await em.execute(sql.replace('JSON_PARAM', '?'), [json], 'run')).affectedRows;
  return (await em.execute(sql.replace('JSON_PARAM', '?'), [json]))[0].written;
};
/** The JSON as a bound parameter through the transaction's Kysely context (src/persistence/sql.ts executeBound). */
const bound = (sql) => async (em, json) => {
  const result = await em.getKysely().executeQuery(CompiledQuery.raw(sql.replace('JSON_PARAM', '$1'), [json]));
  return result.rows[0]?.written ?? Number(result.numAffectedRows ?? result.numUpdatedOrDeletedRows ?? 0);
};

const VARIANTS = {
  pricesAsIs: { payload: 'prices', run: bound(pricesSql) },
  pricesInlined: { payload: 'prices', run: inlined(pricesSql) },
  pricesUnfiltered: { payload: 'prices', run: bound(pricesUnfilteredSql) },
  referenceAsIs: { payload: 'references', run: bound(referenceSql) },
  referenceInlined: { payload: 'references', run: inlined(referenceSql) },
  referenceUnfiltered: { payload: 'references', run: bound(referenceUnfilteredSql) },
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
const references = [];
for (let e = 0; e < EVENTS; e += 1) {
  const id = `event${String(e).padStart(27, '0')}`;
  const [home, away] = [`Home ${e}`, `Away ${e}`];
  const spread = ((e % 13) - 6) / 4;
  const total = 2.25 + (e % 4) / 4;
  await db.query(
    `insert into odds_events (id, sport_key, sport, league, home_team, away_team, commence_time, created_at, updated_at) values ($1, 'soccer_epl', 'soccer', 'EPL', $2, $3, $4, now(), now())`,
    [id, home, away, kickoff],
  );
  // The feed's markets, with the outcome names odds_latest gives a line market ("Home 1 -0.5", "Over 2.5").
  const markets = [
    { market: 'h2h', line: null, outcomes: [{ name: home, price: 2.1 }, { name: away, price: 3.6 }, { name: 'Draw', price: 3.4 }] },
    { market: 'spreads', line: spread, outcomes: [{ name: home, price: 1.95, point: spread }, { name: away, price: 1.92, point: -spread || 0 }] },
    { market: 'totals', line: total, outcomes: [{ name: 'Over', price: 1.9, point: total }, { name: 'Under', price: 1.97, point: total }] },
  ];
  const label = (market, o) => (o.point === undefined ? o.name : `${o.name} ${market === 'spreads' && o.point > 0 ? '+' : ''}${o.point}`);
  for (const bookmaker of REFERENCES) for (const m of markets) references.push({ event_id: id, generation: 0, market: m.market, bookmaker, line: m.line, prices: m.outcomes.map((o) => ({ ...o })), updated_at: null });
  for (let b = 0; b < BOOKS; b += 1) {
    for (const m of markets) for (const o of m.outcomes) prices.push({ event_id: id, bookmaker: `book${b}`, market: m.market, outcome: label(m.market, o), price: o.price + ((e + b) % 50) / 100, at: null });
  }
}
let tick = now - 3_600_000;
const stamp = () => {
  tick += 60_000;
  const at = new Date(tick).toISOString();
  for (const p of prices) p.at = at;
  for (const r of references) r.updated_at = at;
};
stamp();
const apply = () => orm.em.fork().transactional(async (em) => {
  await VARIANTS.pricesAsIs.run(em, JSON.stringify(prices));
  await VARIANTS.referenceAsIs.run(em, JSON.stringify(references));
});
await apply();

class RolledBack extends Error {}
const times = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
const rows = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  stamp();
  for (let i = 0; i < prices.length; i += 1) if ((i * 7919 + round * 104729) % Math.round(1 / CHANGE) === 0) prices[i].price = Math.round((prices[i].price + 0.01) * 100) / 100;
  // The references' prices move on some events only; their last_update moves on all.
  const per = REFERENCES.length * 3;
  for (let i = 0; i < references.length; i += 1) {
    if ((Math.floor(i / per) + round) % 10 !== 0) continue;
    const [first, ...rest] = references[i].prices;
    references[i].prices = [{ ...first, price: Math.round((first.price + 0.01) * 1000) / 1000 }, ...rest];
  }
  const order = round % 2 === 0 ? Object.keys(VARIANTS) : Object.keys(VARIANTS).reverse();
  for (const name of order) {
    const payload = JSON.stringify(VARIANTS[name].payload === 'prices' ? prices : references);
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
console.log(
  `${db.kind}: ${prices.length} prices a poll (${Math.round(JSON.stringify(prices).length / 1024)} KiB of JSON) and ${references.length} reference markets (${Math.round(JSON.stringify(references).length / 1024)} KiB), ${CHANGE * 100} % of prices changed, ${ROUNDS} rounds (ms, each in a rolled-back transaction; rows = rows written)`,
);
for (const name of Object.keys(VARIANTS)) {
  const s = summarise(times[name]);
  console.log(`  ${name.padEnd(20)} p50 ${r1(s.p50)}  min ${r1(s.min)}  max ${r1(s.max)}  rows ${rows[name].join(',')}`);
}
