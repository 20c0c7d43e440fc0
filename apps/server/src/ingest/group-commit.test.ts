import { describe, expect, it } from 'vitest';
import { DomainError } from '../domain/errors.js';
import { emptyBatchOutcome, type BatchOutcome, type TrackedEvent } from '../store/store.js';
import { DEFAULT_GROUP_COMMIT, GroupCommitSink } from './group-commit.js';

const NO_EFFECTS = emptyBatchOutcome();

function event(campaignId: number): TrackedEvent {
  return {
    kind: 'impression',
    campaignId,
    placement: 'header_banner',
    country: null,
    device: null,
    partnerId: 1,
    apiKeyId: 1,
    occurredAt: 0,
    verdict: 'counted',
    reason: null,
    idempotencyKey: null,
    userAddress: null,
    mayHitCap: false,
    priced: false,
  };
}

/** A store whose commits finish only when the test says so. */
function manualStore() {
  const commits: Array<{ events: readonly TrackedEvent[]; finish: (error?: Error) => void }> = [];
  const store = {
    insertEvents: (events: readonly TrackedEvent[]) =>
      new Promise<BatchOutcome>((resolve, reject) => {
        commits.push({ events, finish: (error) => (error ? reject(error) : resolve(NO_EFFECTS)) });
      }),
  };
  return { store, commits };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));
const options = { maxBatch: 3, maxQueue: 10, lingerMs: 1, concurrency: 1 };

describe('group commit (D9)', () => {
  it('answers each event only after the transaction holding it has committed', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, options);
    let answered = false;
    const recorded = sink.record(event(1)).then(() => (answered = true));
    await tick();
    expect(commits).toHaveLength(1);
    expect(answered).toBe(false);
    commits[0].finish();
    await recorded;
    expect(answered).toBe(true);
  });

  it('by default commits what arrived in one turn of the event loop together, without a timer', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, { ...options, lingerMs: 0 });
    const recorded = [1, 2, 3].map((id) => sink.record(event(id)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(commits.map((c) => c.events.map((e) => e.campaignId))).toEqual([[1, 2, 3]]);
    commits[0].finish();
    await Promise.all(recorded);
    expect(DEFAULT_GROUP_COMMIT.lingerMs).toBe(0);
  });

  it('tells the observer a batch has settled right after its requests learn the outcome, stored or not', async () => {
    const { store, commits } = manualStore();
    const seen: string[] = [];
    const sink = new GroupCommitSink(store, () => undefined, undefined, options, {
      settled: () => seen.push('settled'),
    });
    const stored = sink.record(event(1)).then(() => seen.push('stored answered'));
    await tick();
    expect(seen).toEqual([]);
    commits[0].finish();
    await stored;
    // Told before the requests' continuations ran, so it can act once they have.
    expect(seen).toEqual(['settled', 'stored answered']);
    const refused = sink.record(event(2)).catch(() => seen.push('refused answered'));
    await tick();
    commits[1].finish(new Error('disk full'));
    await refused;
    expect(seen).toEqual(['settled', 'stored answered', 'settled', 'refused answered']);
  });

  it('gathers events that arrive while a batch commits into the next batch, at most maxBatch each', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, options);
    const first = sink.record(event(1));
    await tick();
    const waiting = [2, 3, 4, 5, 6, 7].map((id) => sink.record(event(id)));
    await tick();
    expect(commits).toHaveLength(1); // the rest wait for the running commit
    commits[0].finish();
    await first;
    await tick();
    expect(commits.map((c) => c.events.map((e) => e.campaignId))).toEqual([[1], [2, 3, 4]]);
    commits[1].finish();
    await tick();
    expect(commits[2].events.map((e) => e.campaignId)).toEqual([5, 6, 7]);
    commits[2].finish();
    await Promise.all(waiting);
  });

  it('commits up to `concurrency` batches at once and answers each when its own commit ends', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, { ...options, concurrency: 2 });
    const answered: number[] = [];
    const recorded = [1, 2, 3, 4, 5, 6, 7].map((id) => sink.record(event(id)).then(() => answered.push(id)));
    await tick();
    // Two batches of at most maxBatch run at once; the rest waits for a free slot.
    expect(commits.map((c) => c.events.map((e) => e.campaignId))).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    commits[1].finish();
    await tick();
    expect(answered).toEqual([4, 5, 6]);
    expect(commits[2].events.map((e) => e.campaignId)).toEqual([7]);
    commits[0].finish();
    commits[2].finish();
    await Promise.all(recorded);
    expect(answered.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('isolates an event the store refuses as data, so the rest of its batch is still stored', async () => {
    const stored: number[] = [];
    const store = {
      insertEvents: async (events: readonly TrackedEvent[]) => {
        if (events.some((e) => e.campaignId === 13)) {
          throw Object.assign(new Error('FOREIGN KEY constraint failed'), {
            code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
          });
        }
        stored.push(...events.map((e) => e.campaignId));
        return NO_EFFECTS;
      },
    };
    const errors: unknown[] = [];
    const sink = new GroupCommitSink(store, (error) => errors.push(error), undefined, {
      ...options,
      maxBatch: 8,
    });
    const outcomes = await Promise.allSettled([1, 2, 13, 4, 5, 6, 7, 8].map((id) => sink.record(event(id))));
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(stored.sort((a, b) => a - b)).toEqual([1, 2, 4, 5, 6, 7, 8]);
    expect(errors).toHaveLength(1);
  });

  it('fails the whole batch with 503, without splitting it, when the store is unavailable', async () => {
    let attempts = 0;
    const store = {
      insertEvents: async () => {
        attempts++;
        throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      },
    };
    const sink = new GroupCommitSink(store, () => undefined, undefined, { ...options, maxBatch: 8 });
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((id) => sink.record(event(id))));
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    expect(attempts).toBe(1);
  });

  it('refuses events with 503 once the queue is full, counting those being committed', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, { ...options, maxQueue: 2 });
    const accepted = [sink.record(event(1)), sink.record(event(2))];
    await tick();
    expect(sink.depth).toBe(2);
    await expect(sink.record(event(3))).rejects.toMatchObject({
      kind: 'unavailable',
      message: 'service unavailable',
    });
    commits[0].finish();
    await Promise.all(accepted);
    await expect(Promise.race([sink.record(event(4)), tick().then(() => 'waiting')])).resolves.toBe(
      'waiting',
    );
  });

  it('answers 503 to every event of a batch whose commit failed, and recovers', async () => {
    const { store, commits } = manualStore();
    const errors: unknown[] = [];
    const sink = new GroupCommitSink(store, (error) => errors.push(error), undefined, options);
    const failed = [sink.record(event(1)), sink.record(event(2))];
    await tick();
    commits[0].finish(new Error('disk I/O error'));
    for (const result of await Promise.allSettled(failed)) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(DomainError);
    }
    expect(errors).toHaveLength(1);
    const later = sink.record(event(3));
    await tick();
    commits[1].finish();
    await expect(later).resolves.toBe('counted');
  });

  it('on close, refuses new events and commits every accepted one', async () => {
    const { store, commits } = manualStore();
    const sink = new GroupCommitSink(store, () => undefined, undefined, options);
    const accepted = [1, 2, 3, 4].map((id) => sink.record(event(id)));
    const closing = sink.close();
    await expect(sink.record(event(5))).rejects.toMatchObject({ kind: 'unavailable' });
    await tick();
    commits[0].finish();
    await tick();
    commits[1].finish();
    await closing;
    await Promise.all(accepted);
    expect(commits.flatMap((c) => c.events.map((e) => e.campaignId))).toEqual([1, 2, 3, 4]);
  });

  it('refuses with 422 only the events the store refused, and answers the rest of their batch', async () => {
    const sink = new GroupCommitSink(
      { insertEvents: async () => ({ ...NO_EFFECTS, refused: [1] }) },
      () => undefined,
      undefined,
      { ...options, lingerMs: 0 },
    );
    const outcomes = await Promise.allSettled([1, 2, 3].map((id) => sink.record(event(id))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
      kind: 'unprocessable',
      message: 'Idempotency-Key was already used for a different request',
    });
  });

  it('reports cap effects so serving can react', async () => {
    const seen: BatchOutcome[] = [];
    const effects: BatchOutcome = { ...emptyBatchOutcome(), completed: [7] };
    const sink = new GroupCommitSink(
      { insertEvents: async () => effects },
      () => undefined,
      (e) => seen.push(e),
      options,
    );
    await sink.record(event(7));
    expect(seen).toEqual([effects]);
  });

  describe('a store locked by another connection', () => {
    /** A store that answers SQLite's "database is locked" for its first `times` commits. */
    function lockedStore(times: number) {
      let attempts = 0;
      const store = {
        insertEvents: async () => {
          attempts++;
          if (attempts <= times)
            throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
          return NO_EFFECTS;
        },
      };
      return { store, attempts: () => attempts };
    }

    it('tries the batch again without blocking, and stores it once the lock is free', async () => {
      const { store, attempts } = lockedStore(3);
      const errors: unknown[] = [];
      const sink = new GroupCommitSink(store, (error) => errors.push(error), undefined, options);
      await sink.record(event(1));
      expect(attempts()).toBe(4);
      expect(errors).toEqual([]);
    });

    it('answers 503 once the lock has outlasted the retry window', async () => {
      const { store, attempts } = lockedStore(Infinity);
      const sink = new GroupCommitSink(store, () => undefined, undefined, { ...options, lockedRetryMs: 50 });
      const started = performance.now();
      await expect(sink.record(event(1))).rejects.toMatchObject({ kind: 'unavailable' });
      // About 50 ms; far more would be a retry that never gives up (bounded loosely, as the
      // machine may be busy).
      expect(performance.now() - started).toBeLessThan(10_000);
      expect(attempts()).toBeGreaterThan(1);
    });
  });
});
