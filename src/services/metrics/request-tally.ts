/**
 * The HTTP families (picks_http_requests_total, picks_http_request_duration_seconds) counted in
 * plain numbers on the request path and handed to prom-client's registry when it is scraped:
 * every request pays two additions and a bucket search, not prom-client's label validation and
 * hashing per call. The registry still writes the exposition: these are registered as metrics
 * whose get() answers prom-client's own shape (name, help, type, values with their labels).
 */
import type { Registry } from 'prom-client';
import { METRICS } from './catalog.js';
import type { HttpSurface } from './catalog.js';

export interface RouteLabels {
  surface: HttpSurface;
  route: string;
  method: string;
}

/** One route template and method: its answers by status and, unless a stream, its latencies. */
export class RouteTally {
  readonly byStatus = new Map<number, number>();
  /** Per bucket (the catalog's bounds, then +Inf): observations at most that bound, not cumulative. */
  readonly buckets: number[] | null;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: RouteLabels,
    private readonly bounds: readonly number[],
    timed: boolean,
  ) {
    this.buckets = timed ? new Array<number>(bounds.length + 1).fill(0) : null;
  }

  answered(status: number): void {
    this.byStatus.set(status, (this.byStatus.get(status) ?? 0) + 1);
  }

  took(seconds: number): void {
    if (!this.buckets) return;
    let index = 0;
    while (index < this.bounds.length && seconds > this.bounds[index]!) index += 1;
    this.buckets[index]! += 1;
    this.sum += seconds;
    this.count += 1;
  }
}

interface PromValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

export class RequestTally {
  private readonly routes: RouteTally[] = [];
  private readonly bounds = METRICS.httpDuration.buckets;

  constructor(registry: Registry) {
    const { httpRequests, httpDuration } = METRICS;
    registry.registerMetric(this.metric(httpRequests.name, httpRequests.help, 'counter', () => this.requestValues()));
    registry.registerMetric(this.metric(httpDuration.name, httpDuration.help, 'histogram', () => this.durationValues()));
  }

  /** A new route series (the caller keeps it: one per template and method). */
  route(labels: RouteLabels, timed: boolean): RouteTally {
    const tally = new RouteTally(labels, this.bounds, timed);
    this.routes.push(tally);
    return tally;
  }

  private requestValues(): PromValue[] {
    return this.routes.flatMap((route) => [...route.byStatus].map(([status, value]) => ({ value, labels: { ...route.labels, status: String(status) } })));
  }

  private durationValues(): PromValue[] {
    const { name } = METRICS.httpDuration;
    return this.routes.flatMap((route) => {
      if (!route.buckets || route.count === 0) return [];
      let cumulative = 0;
      const buckets = route.buckets.map((inBucket, index) => {
        cumulative += inBucket;
        return { metricName: `${name}_bucket`, labels: { ...route.labels, le: index < this.bounds.length ? this.bounds[index]! : '+Inf' }, value: cumulative };
      });
      return [...buckets, { metricName: `${name}_sum`, labels: { ...route.labels }, value: route.sum }, { metricName: `${name}_count`, labels: { ...route.labels }, value: route.count }];
    });
  }

  // prom-client's Registry reads a metric through get() (registerMetric's contract).
  private metric(name: string, help: string, type: 'counter' | 'histogram', values: () => PromValue[]) {
    return { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, values: values(), aggregator: 'sum' }) } as unknown as Parameters<Registry['registerMetric']>[0];
  }
}
