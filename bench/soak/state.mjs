/**
 * The soak's run state, shared by its jobs: the instances and every process life, every
 * client call, the keys, the picks the admin got back, the fault timeline, the SSE clients and
 * connections, and the flags that stop the loops.
 */

export const run = {
  startedAt: Date.now(),
  adminToken: '',
  trafficStop: false,
  streamsStop: false,
  schedulerStop: false,
  /** The private PostgreSQL and Redis (bench/lib/launcher.mjs) and the instances' environment. */
  pg: null,
  redis: null,
  serverEnv: null,
};

/** Seconds since the run started (one decimal), or null. */
export const rel = (ms) => (ms === null || ms === undefined ? null : Math.round((ms - run.startedAt) / 100) / 10);

export const instances = [];
/** Every instance process ever started: its port, pid, when it was spawned, ready, exited, and why. */
export const lives = [];

/** Every client call: key, kind, endpoint, port, status ('lost' when no answer), code, sent, answered. */
export const calls = [];

export const keys = [];
export const knownPickIds = [];
export const adminPicks = { published: [], settled: new Set(), publishAnswers: 0 };
export const timeline = [];
export const streamClients = [];
export const streamConnections = [];
export const activeStreams = new Map();

export function rememberPick(id) {
  if (!id) return;
  knownPickIds.push(id);
  if (knownPickIds.length > 300) knownPickIds.splice(0, knownPickIds.length - 300);
}

export const ports = () => instances.map((i) => i.port);
