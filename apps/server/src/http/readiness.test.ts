import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRateLimiter } from '../limits/rate-limiter.js';
import type { Store } from '../store/store.js';
import { CHECK_TIMEOUT_MS, ReadinessMonitor } from './readiness.js';
import { Shutdown } from './shutdown.js';

/** A store whose ping waits until the test lets it answer. */
function stallingStore() {
  const waiting: Array<() => void> = [];
  const store = {
    ping: () => new Promise<void>((resolve) => waiting.push(resolve)),
    pendingMigrations: async () => [],
  } as unknown as Store;
  return { store, answer: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

describe('ReadinessMonitor', () => {
  afterEach(() => vi.useRealTimers());

  it('answers from the last check while one is in flight, fails the store once it is overdue, and reports the age', async () => {
    vi.useFakeTimers();
    let now = 0;
    const { store, answer } = stallingStore();
    const shutdown = new Shutdown();
    const monitor = new ReadinessMonitor({
      store,
      shutdown,
      limiter: new MemoryRateLimiter(),
      logger: pino({ level: 'silent' }),
      now: () => now,
    });
    // Nothing is known before the first check.
    expect(monitor.read(false)).toMatchObject({ status: 'not ready', failing: 'store' });

    const first = monitor.check();
    answer();
    await first;
    now = 300;
    expect(monitor.read(false)).toMatchObject({
      status: 'ready',
      checks: { store: 'ok' },
      lastCheckAgeMs: 300,
    });

    // The store stalls: readiness still answers, from the last check, while the next one waits.
    const stalled = monitor.check();
    now = 1_300;
    expect(monitor.read(false)).toMatchObject({ status: 'ready', lastCheckAgeMs: 1_300 });
    // Until the check is overdue: then the store is failing, and the age starts again.
    await vi.advanceTimersByTimeAsync(CHECK_TIMEOUT_MS);
    await stalled;
    now = 2_400;
    expect(monitor.read(false)).toMatchObject({
      status: 'not ready',
      failing: 'store',
      checks: { store: `store did not answer within ${CHECK_TIMEOUT_MS} ms` },
      lastCheckAgeMs: 1_100,
    });

    // What is known in memory is read as asked: shutting down shows at once, with no check.
    shutdown.begin();
    expect(monitor.read(false)).toMatchObject({ failing: 'shutdown', checks: { shutdown: 'shutting down' } });
  });
});
