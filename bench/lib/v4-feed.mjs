/**
 * The one local The Odds API v4 feed of the benches and the soak: a node:http server on
 * 127.0.0.1 and a free port answering `GET /v4/sports/{sport}/odds` and `.../scores` with
 * what the caller's `odds(sport)` / `scores(sport)` return (a value, sent as JSON, or a ready
 * string or Buffer), with the quota headers the real API sends; anything else, or a sport not
 * in `sports` (when given), is 404 {"message":"Unknown sport"} as the real API answers.
 * `onServe({ kind, sport, receivedAt, bytes, res })` sees every 200 before it is written
 * (receivedAt: wall clock when the handler ran, as every bench process measures it).
 * What the feed says (matches, prices, moves) is the caller's: engine-feed.mjs (an efficient
 * market with injected edges), season-replay.mjs (a season's recorded prices), soak/feed.mjs
 * (a market that keeps changing, and results).
 */
import { createServer } from 'node:http';
import { HOST, wallNow } from '../common.mjs';

const QUOTA_HEADERS = { 'x-requests-remaining': '19000', 'x-requests-used': '1000' };

export async function startV4Feed({ odds, scores = () => [], sports = null, onServe = null }) {
  const server = createServer((req, res) => {
    const receivedAt = wallNow();
    const match = /^\/v4\/sports\/([^/]+)\/(odds|scores)$/.exec(new URL(req.url ?? '/', `http://${HOST}`).pathname);
    if (!match || (sports && !sports.includes(match[1]))) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Unknown sport"}');
      return;
    }
    const [, sport, kind] = match;
    const body = kind === 'odds' ? odds(sport) : scores(sport);
    const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const bytes = Buffer.byteLength(payload);
    onServe?.({ kind, sport, receivedAt, bytes, res });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes, ...QUOTA_HEADERS });
    res.end(payload);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: HOST }, resolve);
  });
  const { port } = server.address();
  return {
    port,
    url: `http://${HOST}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
