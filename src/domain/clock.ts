/**
 * Time source. Everything time-dependent (windows, retries, month boundaries) takes a
 * Clock so tests can pin and move time (docs/ARCHITECTURE.md).
 */
export interface Clock {
  now(): Date;
}

/** The only place in the codebase allowed to read the wall clock. */
export const systemClock: Clock = {
  now: () => new Date(),
};

function toValidDate(at: Date | string): Date {
  const date = typeof at === 'string' ? new Date(at) : new Date(at.getTime());
  if (Number.isNaN(date.getTime())) {
    throw new RangeError(`ManualClock: invalid time ${String(at)}`);
  }
  return date;
}

/** A clock that only moves when told to; hands out copies so callers cannot mutate it. */
export class ManualClock implements Clock {
  private current: number;

  constructor(start: Date | string) {
    this.current = toValidDate(start).getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  set(at: Date | string): void {
    this.current = toValidDate(at).getTime();
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms)) {
      throw new RangeError(`ManualClock: cannot advance by ${ms} ms`);
    }
    const next = new Date(this.current + ms);
    if (Number.isNaN(next.getTime())) {
      throw new RangeError(`ManualClock: advancing by ${ms} ms leaves the representable range`);
    }
    this.current = next.getTime();
  }
}
