import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OperationClass } from '../domain/rate-limits.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { RequestHistogram } from './request-histogram.js';
import type { ServingState } from '../serving/serving-state.js';

/** Buckets for request and commit durations, in seconds: 0.25 ms to 2.5 s. */
const DURATION_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const BATCH_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

/** Refusals a client can cause at will, counted rather than logged one by one (see http/refusal-log.ts). */
export type Refusal = 'aborted_upload' | 'csrf';

/**
 * The instance's Prometheus metrics (served at /metrics): request durations by route and status,
 * events by kind and verdict, batch sizes and commit latency, rate-limited requests and where limits
 * live, the serving
 * index's size and refresh age, and Node's process metrics. One registry per instance, so tests
 * can run several in one process.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requestDuration = new RequestHistogram(
    'placard_http_request_duration_seconds',
    'HTTP request duration, by route, method and status',
    DURATION_BUCKETS,
  );
  private readonly events = new Counter({
    name: 'placard_events_total',
    help: 'Events stored, by kind and verdict',
    labelNames: ['kind', 'verdict'] as const,
    registers: [this.registry],
  });
  private readonly batchSize = new Histogram({
    name: 'placard_event_batch_size',
    help: 'Events per group-commit transaction',
    buckets: BATCH_BUCKETS,
    registers: [this.registry],
  });
  private readonly commitDuration = new Histogram({
    name: 'placard_event_commit_seconds',
    help: 'Duration of one group-commit transaction, successful or not',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly commitFailures = new Counter({
    name: 'placard_event_commit_failures_total',
    help: 'Group-commit transactions that failed (their requests were answered 503)',
    registers: [this.registry],
  });
  private readonly refusals: Record<Refusal, Counter> = {
    aborted_upload: new Counter({
      name: 'placard_aborted_uploads_total',
      help: 'Requests whose client closed the connection before sending the whole body',
      registers: [this.registry],
    }),
    csrf: new Counter({
      name: 'placard_csrf_refusals_total',
      help: 'Dashboard forms refused for a missing or wrong CSRF token',
      registers: [this.registry],
    }),
  };
  private readonly rateLimited = new Counter({
    name: 'placard_rate_limited_total',
    help: 'Requests refused with 429, by operation class (fetch, events, auth for failed authentication)',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  constructor(state: ServingState, limiter: RateLimiter) {
    new Gauge({
      name: 'placard_rate_limits_mode',
      help: 'Where rate limits live: 1 for the current mode (memory, shared in Redis, or degraded: Redis unreachable, per instance)',
      labelNames: ['mode'] as const,
      registers: [this.registry],
      collect() {
        const current = limiter.health().mode;
        for (const mode of ['memory', 'shared', 'degraded'] as const)
          this.labels(mode).set(mode === current ? 1 : 0);
      },
    });
    new Gauge({
      name: 'placard_index_campaigns',
      help: 'Running campaigns in the serving index',
      registers: [this.registry],
      collect() {
        this.set(state.index.size);
      },
    });
    for (const [name, help, value] of [
      [
        'placard_index_builds_total',
        'Times the serving index was built whole (at start, or for a change the log cannot name)',
        () => state.fullBuilds,
      ],
      [
        'placard_index_changes_applied_total',
        'Campaign changes applied to the serving index in place',
        () => state.changesApplied,
      ],
    ] as const) {
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(value());
        },
      });
    }
    new Gauge({
      name: 'placard_index_refresh_age_seconds',
      help: 'Seconds since the serving index last checked the store for changes',
      registers: [this.registry],
      collect() {
        this.set(state.refreshAgeMs / 1000);
      },
    });
    // A few process figures computed when scraped, instead of prom-client's default metrics,
    // whose GC and event-loop observers run all the time.
    new Gauge({
      name: 'placard_process_resident_memory_bytes',
      help: 'Resident set size of the process',
      registers: [this.registry],
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: 'placard_heap_used_bytes',
      help: 'V8 heap in use',
      registers: [this.registry],
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    let utilization = performance.eventLoopUtilization();
    new Gauge({
      name: 'placard_event_loop_utilization',
      help: 'Share of time the event loop was busy since the previous scrape (0 to 1)',
      registers: [this.registry],
      collect() {
        const now = performance.eventLoopUtilization();
        this.set(performance.eventLoopUtilization(now, utilization).utilization);
        utilization = now;
      },
    });
  }

  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requestDuration.observe(route, method, status, seconds);
  }

  observeBatch(size: number, seconds: number, failed: boolean): void {
    this.batchSize.observe(size);
    this.commitDuration.observe(seconds);
    if (failed) this.commitFailures.inc();
  }

  countEvents(counts: ReadonlyMap<string, number>): void {
    for (const [key, count] of counts) {
      const [kind = '', verdict = ''] = key.split(':');
      this.events.labels(kind, verdict).inc(count);
    }
  }

  countRefusal(kind: Refusal): void {
    this.refusals[kind].inc();
  }

  countRateLimited(operation: OperationClass | 'auth'): void {
    this.rateLimited.labels(operation).inc();
  }

  /** The text exposition format and its content type. */
  async expose(): Promise<{ contentType: string; body: string }> {
    const body = `${this.requestDuration.render()}\n${await this.registry.metrics()}`;
    return { contentType: this.registry.contentType, body };
  }
}
