/**
 * The stream load generator (forked by bench/streams-run.mjs; control over IPC, structured
 * clone serialisation). A separate process from the server, 127.0.0.1 only.
 *
 * It holds thousands of GET /api/v1/picks/stream connections on raw TCP sockets (one socket
 * per client, no agent, no keep-alive pool, no http parser): the request is written by hand,
 * the response head is checked (200, text/event-stream), and the body is scanned line by line
 * for `data: ` lines, which carry the pick JSON whose first field is "id". Each frame is
 * stamped with the wall clock (performance.timeOrigin + performance.now(), the same
 * expression the server uses for the commit time) when the read that completes it is handled,
 * before any parsing. Chunked transfer-encoding size lines are simply skipped (each SSE frame
 * is one res.write, hence one chunk, so a data line is never split by a size line).
 *
 * Commands:
 *   init   { port, path, keysFile, perKey, from, to }  clients from..to-1 of the global numbering;
 *          client i uses key floor(i / perKey)
 *   open   { count, batch, timeoutMs }  opens `count` more clients, `batch` at a time, each
 *          batch waiting for every response head (or failure) before the next
 *   reset  forget arrivals (after a warm-up)
 *   progress  frames received so far, per pick id
 *   arrivals  per pick id, a Float64Array of arrival times indexed by local client (NaN: none)
 *   closeAll  destroys every socket
 *   mark / since  CPU and event-loop utilisation of this process over a window
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { HOST, serveCommands, wallNow, windowMeter } from './common.mjs';

let job = null;
let keys = [];
const clients = []; // local index -> client state
let next = 0; // next local index to open
let arrivals = new Map(); // pick id -> Float64Array(local clients), NaN = not yet
let frames = 0;
let duplicates = 0;
let heartbeats = 0;
let unexpectedCloses = 0;
const closeCodes = {};
let closing = false;

const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
const meter = windowMeter(loopDelay);

function slotFor(id) {
  let slot = arrivals.get(id);
  if (!slot) {
    slot = new Float64Array(job.to - job.from).fill(Number.NaN);
    arrivals.set(id, slot);
  }
  return slot;
}

function onBody(client, text, now) {
  let buf = client.buf + text;
  let start = 0;
  for (;;) {
    const nl = buf.indexOf('\n', start);
    if (nl === -1) break;
    if (buf.startsWith('data: ', start)) {
      const k = buf.indexOf('"id":"', start);
      if (k !== -1 && k < nl) {
        const id = buf.slice(k + 6, buf.indexOf('"', k + 6));
        const slot = slotFor(id);
        if (Number.isNaN(slot[client.index])) slot[client.index] = now;
        else duplicates += 1;
        frames += 1;
      }
    } else if (buf.startsWith(': heartbeat', start)) {
      heartbeats += 1;
    }
    start = nl + 1;
  }
  client.buf = start === buf.length ? '' : buf.slice(start);
}

/** Opens one client; resolves with 'ok' once the 200 head arrived, or with a failure label. */
function openClient(index, timeoutMs) {
  const globalIndex = job.from + index;
  const key = keys[Math.floor(globalIndex / job.perKey)];
  if (!key) return Promise.resolve('no_key');
  return new Promise((resolve) => {
    const client = { index, socket: null, buf: '', head: '', open: false, status: 0 };
    clients[index] = client;
    let settled = false;
    const settle = (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const socket = net.connect({ host: HOST, port: job.port });
    client.socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    const timer = setTimeout(() => {
      socket.destroy();
      settle('timeout');
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(
        `GET ${job.path} HTTP/1.1\r\nHost: ${HOST}:${job.port}\r\nAuthorization: Bearer ${key}\r\nAccept: text/event-stream\r\nConnection: keep-alive\r\n\r\n`,
      );
    });
    socket.on('data', (text) => {
      const now = wallNow();
      if (client.open) {
        onBody(client, text, now);
        return;
      }
      client.head += text;
      const end = client.head.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = client.head.slice(0, end);
      const rest = client.head.slice(end + 4);
      client.head = '';
      client.status = Number(head.slice(9, 12));
      if (client.status !== 200 || !/\r\ncontent-type: text\/event-stream/i.test(head)) {
        client.errorBody = rest.slice(0, 300);
        socket.destroy();
        settle(`http_${client.status}${client.status === 200 ? '_wrong_content_type' : ''}`);
        return;
      }
      client.open = true;
      settle('ok');
      if (rest) onBody(client, rest, now);
    });
    socket.on('error', (error) => {
      closeCodes[error.code ?? 'error'] = (closeCodes[error.code ?? 'error'] ?? 0) + 1;
      settle(`error_${error.code ?? 'unknown'}`);
    });
    socket.on('close', () => {
      if (client.open && !closing) unexpectedCloses += 1;
      client.open = false;
      settle('closed_before_head');
    });
  });
}

const commands = {
  init(args) {
    job = args;
    keys = JSON.parse(readFileSync(args.keysFile, 'utf8'));
    clients.length = 0;
    next = 0;
    return { clients: args.to - args.from };
  },
  async open({ count, batch, timeoutMs }) {
    const t0 = performance.now();
    const outcomes = {};
    const failures = [];
    const limit = Math.min(job.to - job.from, next + count);
    while (next < limit) {
      const end = Math.min(limit, next + batch);
      const pending = [];
      for (let i = next; i < end; i += 1) pending.push(openClient(i, timeoutMs ?? 30_000));
      next = end;
      const results = await Promise.all(pending);
      results.forEach((outcome, k) => {
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        if (outcome !== 'ok' && failures.length < 5) {
          const client = clients[end - results.length + k];
          failures.push({ outcome, body: client?.errorBody ?? null });
        }
      });
    }
    return { ms: performance.now() - t0, outcomes, failures, open: clients.filter((c) => c?.open).length };
  },
  reset() {
    arrivals = new Map();
    frames = 0;
    duplicates = 0;
    return true;
  },
  progress() {
    const perPick = {};
    for (const [id, slot] of arrivals) {
      let n = 0;
      for (let i = 0; i < slot.length; i += 1) if (!Number.isNaN(slot[i])) n += 1;
      perPick[id] = n;
    }
    return { frames, duplicates, heartbeats, unexpectedCloses, open: clients.filter((c) => c?.open).length, perPick };
  },
  arrivals() {
    return { arrivals: Object.fromEntries(arrivals), frames, duplicates, heartbeats, unexpectedCloses, closeCodes };
  },
  async closeAll() {
    closing = true;
    for (const client of clients) client?.socket?.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    clients.length = 0;
    next = 0;
    closing = false;
    return true;
  },
  mark() {
    return meter.mark();
  },
  since({ mark }) {
    return meter.since(mark);
  },
};

if (!process.send) {
  process.stderr.write('bench/streams-load.mjs is started by bench/streams-run.mjs (npm run bench:streams), not directly.\n');
  process.exit(2);
}
serveCommands(commands);
process.send({ type: 'ready' });
