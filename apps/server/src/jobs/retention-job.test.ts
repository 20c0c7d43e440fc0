import pino, { type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Store } from '../store/store.js';
import { RETENTION_CHUNK, RetentionJob } from './retention-job.js';

const DAY = 24 * 60 * 60 * 1000;

/** A store holding `events` expired events and `keys` expired keys, logging every call. */
function expiredStore(events: number, keys: number) {
  const calls: string[] = [];
  const take = (left: { n: number }, limit: number): number => {
    const deleted = Math.min(left.n, limit);
    left.n -= deleted;
    return deleted;
  };
  const eventsLeft = { n: events };
  const keysLeft = { n: keys };
  const store = {
    pruneEvents: (before: number, limit: number) => {
      calls.push(`events ${before} ${limit}`);
      return Promise.resolve(take(eventsLeft, limit));
    },
    pruneIdempotencyKeys: (now: number, limit: number) => {
      calls.push(`keys ${now} ${limit}`);
      return Promise.resolve(take(keysLeft, limit));
    },
    pruneCampaignChanges: () => Promise.resolve(0),
    dropExpiredEventPartitions: () => Promise.resolve([]),
    ensureEventPartitions: () => Promise.resolve([]),
  };
  return { store: store as unknown as Store, calls };
}

describe('retention job', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');

  it('deletes in statements of at most RETENTION_CHUNK rows until one deletes fewer', async () => {
    const { store, calls } = expiredStore(2 * RETENTION_CHUNK + 3, RETENTION_CHUNK + 1);
    const job = new RetentionJob(store, pino({ level: 'silent' }), 90, () => now);
    expect(await job.runOnce()).toEqual({
      events: 2 * RETENTION_CHUNK + 3,
      idempotencyKeys: RETENTION_CHUNK + 1,
      dropped: [],
      created: [],
    });
    const before = now - 90 * DAY;
    expect(calls).toEqual([
      `events ${before} ${RETENTION_CHUNK}`,
      `events ${before} ${RETENTION_CHUNK}`,
      `events ${before} ${RETENTION_CHUNK}`,
      `keys ${now} ${RETENTION_CHUNK}`,
      `keys ${now} ${RETENTION_CHUNK}`,
    ]);
  });

  it('still prunes when a partition change fails, and says so', async () => {
    const { store, calls } = expiredStore(1, 1);
    const refused = () => Promise.reject(new Error('canceling statement due to lock timeout'));
    Object.assign(store, { dropExpiredEventPartitions: refused, ensureEventPartitions: refused });
    const errors: string[] = [];
    const log = { info: () => undefined, error: (_: unknown, message: string) => errors.push(message) };
    const job = new RetentionJob(store, log as unknown as Logger, 90, () => now);
    expect(await job.runOnce()).toEqual({ events: 1, idempotencyKeys: 1, dropped: [], created: [] });
    expect(calls.map((call) => call.split(' ')[0])).toEqual(['events', 'keys']);
    expect(errors).toEqual(['dropping expired event partitions failed', 'creating event partitions failed']);
  });

  it('lets the event loop run between two statements', async () => {
    const { store, calls } = expiredStore(3 * RETENTION_CHUNK, 0);
    const job = new RetentionJob(store, pino({ level: 'silent' }), 90, () => now);
    // Scheduled before the pass: runs in the first turn the pass gives back, before its second delete.
    setImmediate(() => calls.push('request'));
    await job.runOnce();
    expect(calls.map((call) => call.split(' ')[0])).toEqual([
      'events',
      'request',
      'events',
      'events',
      'events',
      'keys',
    ]);
  });

  it('ends a pass in progress after its current statement when stopped, so shutdown never waits for it', async () => {
    const { store, calls } = expiredStore(100 * RETENTION_CHUNK, 100 * RETENTION_CHUNK);
    const job = new RetentionJob(store, pino({ level: 'silent' }), 90, () => now);
    const pass = job.runOnce();
    await new Promise((resolve) => setImmediate(resolve));
    await job.stop();
    const result = await pass;
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(result.events).toBe(calls.length * RETENTION_CHUNK);
    expect(result.idempotencyKeys).toBe(0);
  });
});
