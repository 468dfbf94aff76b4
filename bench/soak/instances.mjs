/**
 * The soak's instances: three `node dist/src/main.js` on consecutive ports, started (and
 * restarted after a SIGKILL) through the shared launcher (bench/lib/launcher.mjs), every
 * process life recorded: its port, pid, when it was spawned, ready, signalled, exited, and why.
 */
import { HOST, log } from '../common.mjs';
import { launcher, startInstance, waitUntil } from '../lib/launcher.mjs';
import { instances, lives, rel } from './state.mjs';

export async function readyz(instance) {
  try {
    const response = await fetch(`http://${HOST}:${instance.port}/readyz`, { signal: AbortSignal.timeout(2_000) });
    return { status: response.status, body: await response.json() };
  } catch {
    return null;
  }
}

/** Starts (or restarts) `instance` on its port with `env`; resolves once it answers /healthz. */
export async function startLife(instance, env) {
  const proc = await startInstance({ name: instance.name, port: instance.port, env });
  const life = { name: instance.name, port: instance.port, pid: proc.pid, spawnedAt: Date.now(), readyAt: null, killedAt: null, exitedAt: null, exit: null, killedByUs: false, stoppedByUs: false, proc };
  lives.push(life);
  instance.proc = proc;
  instance.life = life;
  proc.exited.then((exit) => {
    life.exitedAt = Date.now();
    life.exit = exit;
    if (!life.killedByUs && !life.stoppedByUs && !launcher.interrupted) log(`  [+${rel(life.exitedAt)} s] UNEXPECTED: ${instance.name} (pid ${life.pid}) exited ${JSON.stringify(exit)}; its last lines:\n${proc.tail(12)}`);
  });
  await proc.ready;
  life.readyAt = Date.now();
  return life;
}

export async function waitInstancesReady(what, predicate, timeoutMs = 30_000) {
  return waitUntil(what, async () => {
    const running = instances.filter((i) => i.proc?.running());
    const answers = await Promise.all(running.map((i) => readyz(i)));
    return answers.every((a) => a && predicate(a));
  }, timeoutMs, 200).then(() => true, () => false);
}

/** When a process stopped serving: the signal we sent (its clients may see the reset before we see the exit), or its exit. */
export const lifeEnd = (life) => life.killedAt ?? life.exitedAt;

/** Whether a process of `port` was up (ready, not yet signalled or exited) for the whole of [from, to]. */
export function instanceUpThroughout(port, from, to) {
  return lives.some((life) => life.port === port && life.readyAt !== null && life.readyAt <= from && (lifeEnd(life) === null || lifeEnd(life) >= to));
}
