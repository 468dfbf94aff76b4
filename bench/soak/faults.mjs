/**
 * The soak's fault scheduler: one fault at a time, every SOAK_FAULT_EVERY_SECONDS, drawn from
 * its seeded generator (every draw in every round, so one seed gives one schedule): SIGKILL of
 * Redis (restarted after SOAK_FAULT_DOWN_SECONDS; its AOF keeps every acknowledged write), a
 * fast stop of PostgreSQL (started again likewise), SIGKILL of one instance (restarted on its
 * port). Every fault's start, restart and recovery goes into state.timeline.
 */
import { log, sleep } from '../common.mjs';
import { between, choose } from '../lib/prng.mjs';
import { startLife, waitInstancesReady } from './instances.mjs';
import { INSTANCES, fmtS, settings } from './settings.mjs';
import { instances, rel, run, timeline } from './state.mjs';

export async function runFault(kind, targetIndex, downMs) {
  const fault = { kind, target: kind === 'instance' ? instances[targetIndex].name : kind, startedAt: Date.now(), restartedAt: null, recoveredAt: null, plannedDownMs: Math.round(downMs), recovered: false, note: null };
  timeline.push(fault);
  try {
    if (kind === 'redis') {
      fault.redisKeysBefore = await run.redis.dbsize();
      fault.startedAt = Date.now();
      await run.redis.kill();
      log(`  [+${rel(fault.startedAt)} s] fault: SIGKILL Redis (${fault.redisKeysBefore} keys); restart in ${fmtS(downMs)}`);
      await sleep(downMs);
      await run.redis.start();
      fault.restartedAt = Date.now();
      fault.redisKeysAfter = await run.redis.dbsize();
      fault.recovered = await waitInstancesReady('every instance back on Redis', (a) => a.status === 200 && a.body?.limiter === 'redis' && a.body?.status === 'ready');
    } else if (kind === 'postgres') {
      fault.startedAt = Date.now();
      const exit = await run.pg.stop();
      log(`  [+${rel(fault.startedAt)} s] fault: PostgreSQL fast stop (exit ${JSON.stringify(exit)}); start in ${fmtS(downMs)}`);
      await sleep(downMs);
      await run.pg.start();
      fault.restartedAt = Date.now();
      fault.recovered = await waitInstancesReady('every instance ready again', (a) => a.status === 200);
    } else {
      const instance = instances[targetIndex];
      fault.startedAt = Date.now();
      fault.pid = instance.life.pid;
      instance.life.killedByUs = true;
      instance.life.killedAt = Date.now();
      await instance.proc.stop('SIGKILL', 5_000);
      log(`  [+${rel(fault.startedAt)} s] fault: SIGKILL ${instance.name} (pid ${fault.pid}); restart in ${fmtS(downMs)}`);
      await sleep(downMs);
      const life = await startLife(instance, run.serverEnv);
      fault.restartedAt = Date.now();
      fault.newPid = life.pid;
      fault.recovered = await waitInstancesReady(`${instance.name} ready`, (a) => a.status === 200);
    }
  } catch (error) {
    fault.note = String(error?.message ?? error).slice(0, 2_000);
    log(`  [+${rel(Date.now())} s] fault ${kind} went wrong: ${fault.note}`);
  }
  fault.recoveredAt = Date.now();
  log(`  [+${rel(fault.recoveredAt)} s] ${fault.target} ${fault.recovered ? 'recovered' : 'NOT recovered'}: down ${fmtS((fault.restartedAt ?? fault.recoveredAt) - fault.startedAt)}, service back ${fmtS(fault.recoveredAt - (fault.restartedAt ?? fault.startedAt))} after the restart${kind === 'redis' ? `; AOF kept ${fault.redisKeysAfter} of ${fault.redisKeysBefore} keys` : ''}`);
  return fault;
}

export async function scheduler(r, endAt) {
  if (!settings.faultEverySeconds || settings.faultKinds.length === 0) return;
  while (!run.schedulerStop) {
    // Every draw happens in every round, whatever the branch, so one seed gives one schedule.
    const waitMs = between(r, ...settings.faultEverySeconds) * 1000;
    const kind = choose(r, settings.faultKinds);
    const target = Math.floor(r() * INSTANCES);
    const downMs = between(r, ...settings.faultDownSeconds) * 1000;
    const at = Date.now() + waitMs;
    if (at >= endAt) break;
    while (Date.now() < at && !run.schedulerStop) await sleep(Math.min(250, at - Date.now()));
    if (run.schedulerStop) break;
    await runFault(kind, target, downMs);
  }
}
