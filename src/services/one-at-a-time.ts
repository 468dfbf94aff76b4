/**
 * Runs tasks one at a time, in the order given: each starts once the one before it settled,
 * whatever its outcome. A task's failure is its caller's, never the next task's.
 */
export function oneAtATime(): <T>(task: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const run = last.then(task);
    last = run.catch(() => undefined);
    return run;
  };
}
