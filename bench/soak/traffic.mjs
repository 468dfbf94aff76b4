/**
 * The soak's traffic, every call recorded in state.calls (its key, kind, endpoint, port, when
 * sent and answered, its status or `lost` with the reason): REST loops (picks, track record,
 * match analyses, usage, webhooks list, bad cursors, bad parameters, unknown paths, the public
 * endpoint) and GraphQL loops over the API keys, the admin publishing and settling picks
 * through the admin GraphQL mutations, and SSE streams (`GET /api/v1/picks/stream`) that
 * disconnect now and then and resume with `Last-Event-ID`. Each loop draws from its own
 * seeded generator.
 */
import http from 'node:http';
import { HOST, sleep } from '../common.mjs';
import { between, choose } from '../lib/prng.mjs';
import { round3, settings } from './settings.mjs';
import { activeStreams, adminPicks, calls, keys, knownPickIds, ports, rememberPick, run, streamConnections } from './state.mjs';

export function lostKind(error) {
  if (error?.name === 'TimeoutError' || error?.name === 'AbortError') return 'timeout';
  const cause = error?.cause ?? error;
  const code = cause?.code ?? '';
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || /other side closed|socket hang up/i.test(String(cause?.message))) return 'reset';
  return `error:${code || String(cause?.message ?? error).slice(0, 60)}`;
}

export function errorCode(json) {
  if (!json || typeof json !== 'object') return null;
  if (typeof json.error === 'string') return json.error;
  return json.errors?.[0]?.extensions?.code ?? null;
}

/** One HTTP call, recorded. `key`: { label, key } or null (public) or 'admin'. */
export async function call({ key, kind, ep, port, method = 'GET', path: urlPath, headers = {}, body }) {
  const rec = { key: key === 'admin' ? 'admin' : key ? key.label : null, kind, ep, port, sent: Date.now(), answered: null, status: null, code: null, lost: null, internal: false };
  calls.push(rec);
  const auth = key === 'admin' ? { authorization: `Bearer ${run.adminToken}` } : key ? { authorization: `Bearer ${key.key}` } : {};
  try {
    const response = await fetch(`http://${HOST}:${port}${urlPath}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(settings.requestTimeoutMs),
    });
    const text = await response.text();
    rec.answered = Date.now();
    rec.status = response.status;
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON
    }
    rec.code = errorCode(json);
    if (Array.isArray(json?.errors) && json.errors.some((e) => e?.extensions?.code === 'internal_error')) rec.internal = true;
    return { rec, status: response.status, json };
  } catch (error) {
    rec.answered = Date.now();
    rec.status = 'lost';
    rec.lost = lostKind(error);
    return { rec, status: 'lost', json: null };
  }
}

export const graphql = (key, port, query, variables = {}, kind = 'graphql', ep = 'graphql') => call({ key, kind, ep, port, method: 'POST', path: '/graphql', body: { query, variables } });

export async function restLoop(r) {
  const trafficKeys = keys.filter((k) => !k.streamOnly);
  while (!run.trafficStop) {
    const key = choose(r, trafficKeys);
    const port = choose(r, ports());
    const x = r();
    let request;
    if (x < 0.34) request = { ep: 'picks', path: `/api/v1/picks?limit=${1 + Math.floor(r() * 20)}${r() < 0.3 ? '&sport=soccer' : ''}` };
    else if (x < 0.5) request = { ep: 'track-record', path: `/api/v1/track-record?days_back=${1 + Math.floor(r() * 60)}` };
    else if (x < 0.6) request = { ep: 'match-analysis', path: `/api/v1/match-analyses/${knownPickIds.length && r() < 0.8 ? choose(r, knownPickIds) : '00000000-0000-7000-8000-000000000000'}` };
    else if (x < 0.63) request = { ep: 'usage', kind: 'usage', path: '/api/v1/usage' };
    else if (x < 0.7) request = { ep: 'webhooks-list', path: '/api/v1/webhooks' };
    else if (x < 0.75) request = { ep: 'bad-cursor', path: '/api/v1/picks?cursor=not-a-cursor' };
    else if (x < 0.78) request = { ep: 'bad-param', path: '/api/v1/picks?limit=0' };
    else if (x < 0.81) request = { ep: 'unknown-path', path: '/api/v1/no-such-thing' };
    else if (x < 0.86) request = { ep: 'public', public: true, path: `/api/public/picks/today?limit=${1 + Math.floor(r() * 20)}` };
    else request = { ep: 'picks-page', path: `/api/v1/picks?limit=5&since=${encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())}` };
    const { json } = await call({ key: request.public ? null : key, kind: request.kind ?? (request.public ? 'public' : 'rest'), ep: request.ep, port, path: request.path });
    if (request.ep === 'picks' && Array.isArray(json?.data)) for (const pick of json.data.slice(0, 3)) rememberPick(pick.id);
    await sleep(between(r, ...settings.clientSleepMs));
  }
}

const GQL_PICKS = 'query { picks(first: 5) { nodes { id status } } }';
const GQL_USAGE = 'query { apiKeyUsage { tier hourly { used limit remaining } monthly { used limit remaining } } }';
const GQL_PICK = 'query($id: ID!) { pick(id: $id) { id status } }';
const GQL_TRACK = 'query { trackRecord(daysBack: 30) { overall { totalSettled roiPct } } }';

export async function graphqlLoop(r) {
  const trafficKeys = keys.filter((k) => !k.streamOnly);
  while (!run.trafficStop) {
    const key = choose(r, trafficKeys);
    const port = choose(r, ports());
    const x = r();
    if (x < 0.4) {
      const { json } = await graphql(key, port, GQL_PICKS, {}, 'graphql', 'gql-picks');
      for (const node of json?.data?.picks?.nodes?.slice(0, 2) ?? []) rememberPick(node.id);
    } else if (x < 0.6) await graphql(key, port, GQL_USAGE, {}, 'graphql', 'gql-usage');
    else if (x < 0.8) await graphql(key, port, GQL_PICK, { id: knownPickIds.length ? choose(r, knownPickIds) : '00000000-0000-7000-8000-000000000000' }, 'graphql', 'gql-pick');
    else await graphql(key, port, GQL_TRACK, {}, 'graphql', 'gql-track-record');
    await sleep(between(r, ...settings.clientSleepMs));
  }
}

const PUBLISH = 'mutation($input: PublishPickInput!) { publishPick(input: $input) { id status } }';
const SETTLE = 'mutation($input: SettlePickInput!) { settlePick(input: $input) { id status } }';
export const CREATE_KEY = 'mutation($input: CreateApiKeyInput!) { createApiKey(input: $input) { key apiKey { id tier } } }';

export async function adminLoop(r) {
  let n = 0;
  while (!run.trafficStop) {
    const port = choose(r, ports());
    const unsettled = adminPicks.published.filter((id) => !adminPicks.settled.has(id));
    if (r() < 0.2 && unsettled.length > 3) {
      const id = choose(r, unsettled.slice(0, -2));
      const { json } = await graphql('admin', port, SETTLE, { input: { id, result: choose(r, ['WON', 'LOST', 'VOID', 'HALF_WON']), closingOdds: 2.05 } }, 'admin', 'settle');
      // Settled now, or already (a lost answer earlier): either way it is done.
      if (json?.data?.settlePick || json?.errors?.[0]?.extensions?.code === 'invalid_transition') adminPicks.settled.add(id);
    } else {
      n += 1;
      const team = `Soak ${settings.seed.toString(16)} ${n}`;
      const input = {
        sport: 'soccer',
        league: 'Soak League',
        homeTeam: `${team} Home`,
        awayTeam: `${team} Away`,
        kickoffAt: new Date(Date.now() + between(r, 1, 48) * 3_600_000).toISOString(),
        selection: `${team} Home`,
        bookmaker: { name: 'Bet365', slug: 'bet365' },
        odds: round3(between(r, 1.8, 3.2)),
        referenceFairOdds: 1.7,
        confidence: 50 + Math.floor(r() * 40),
      };
      const { json } = await graphql('admin', port, PUBLISH, { input }, 'admin', 'publish');
      const id = json?.data?.publishPick?.id;
      if (id) {
        adminPicks.published.push(id);
        adminPicks.publishAnswers += 1;
        rememberPick(id);
      }
    }
    await sleep(between(r, ...settings.publishEveryMs));
  }
}

export function handleFrame(client, conn, frame) {
  let id = null;
  let event = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (id === null || event !== 'pick.published') return;
  const seq = Number(id);
  let pickId = null;
  try {
    pickId = JSON.parse(data.join('\n')).id ?? null;
  } catch {
    conn.badFrames += 1;
  }
  const last = conn.seqs.at(-1);
  if (last !== undefined && seq <= last) {
    if (seq === last || conn.seqs.includes(seq)) conn.duplicates += 1;
    else conn.outOfOrder += 1;
    return;
  }
  conn.seqs.push(seq);
  conn.pickIds.push(pickId);
  client.lastSeq = seq;
}

export function openStream(client, port, resumeFrom, plannedMs) {
  return new Promise((resolve) => {
    const rec = { key: client.key.label, kind: 'sse', ep: 'stream', port, sent: Date.now(), answered: null, status: null, code: null, lost: null, internal: false };
    calls.push(rec);
    const conn = { client: client.index, key: client.key.label, port, resumeFrom, sent: rec.sent, headersAt: null, status: null, endedAt: null, end: null, seqs: [], pickIds: [], duplicates: 0, outOfOrder: 0, badFrames: 0, closing: false };
    streamConnections.push(conn);
    const headers = { authorization: `Bearer ${client.key.key}`, accept: 'text/event-stream' };
    if (resumeFrom !== null) headers['last-event-id'] = String(resumeFrom);
    let finished = false;
    let planned = null;
    const req = http.request({ host: HOST, port, path: '/api/v1/picks/stream', headers, agent: false });
    const headerTimer = setTimeout(() => {
      if (rec.status !== null) return;
      rec.status = 'lost';
      rec.lost = 'timeout';
      rec.answered = Date.now();
      req.destroy();
    }, settings.requestTimeoutMs);
    const finish = (end) => {
      if (finished) return;
      finished = true;
      clearTimeout(headerTimer);
      clearTimeout(planned);
      conn.endedAt = Date.now();
      conn.end = end;
      activeStreams.delete(req);
      resolve(conn);
    };
    activeStreams.set(req, conn);
    req.on('response', (res) => {
      clearTimeout(headerTimer);
      rec.answered = conn.headersAt = Date.now();
      rec.status = conn.status = res.statusCode;
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => {
          try {
            rec.code = errorCode(JSON.parse(body));
          } catch {
            // not JSON
          }
          finish('refused');
        });
        res.on('error', () => finish('refused'));
        return;
      }
      let buffer = '';
      res.on('data', (chunk) => {
        buffer += chunk;
        let at;
        while ((at = buffer.indexOf('\n\n')) !== -1) {
          handleFrame(client, conn, buffer.slice(0, at));
          buffer = buffer.slice(at + 2);
        }
      });
      res.on('end', () => finish(conn.closing ? 'client-closed' : 'server-ended'));
      res.on('error', () => finish(conn.closing ? 'client-closed' : 'reset'));
      res.on('close', () => finish(conn.closing ? 'client-closed' : 'closed'));
      planned = setTimeout(() => {
        conn.closing = true;
        req.destroy();
      }, plannedMs);
    });
    req.on('error', (error) => {
      if (rec.status === null) {
        rec.status = 'lost';
        rec.lost = lostKind(error);
        rec.answered = Date.now();
      }
      finish(conn.closing ? 'client-closed' : 'error');
    });
    req.end();
  });
}

export async function streamLoop(client, r) {
  while (!run.streamsStop) {
    const conn = await openStream(client, choose(r, ports()), client.lastSeq, between(r, 10_000, 40_000));
    if (run.streamsStop) break;
    await sleep(conn.status === 200 ? between(r, 300, 2_000) : between(r, 1_000, 3_000));
  }
}

export function stopStreams() {
  run.streamsStop = true;
  for (const [req, conn] of activeStreams) {
    conn.closing = true;
    req.destroy();
  }
}
