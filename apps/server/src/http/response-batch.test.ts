import { describe, expect, it } from 'vitest';
import { ResponseBatch } from './response-batch.js';

const nextImmediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ResponseBatch', () => {
  it('writes nothing while the round runs, then everything of it in order when it ends', async () => {
    const written: string[] = [];
    const batch = new ResponseBatch<string>(
      (item) => written.push(item),
      () => undefined,
    );
    batch.add('a');
    batch.add('b');
    await Promise.resolve(); // microtasks of the round still belong to it
    batch.add('c');
    expect(written).toEqual([]);
    await nextImmediate();
    expect(written).toEqual(['a', 'b', 'c']);
  });

  it('starts a new batch for the next round', async () => {
    const rounds: string[][] = [];
    let current: string[] = [];
    const batch = new ResponseBatch<string>(
      (item) => current.push(item),
      () => undefined,
    );
    batch.add('first');
    await nextImmediate();
    rounds.push(current);
    current = [];
    batch.add('second');
    await nextImmediate();
    rounds.push(current);
    expect(rounds).toEqual([['first'], ['second']]);
  });

  it('writes the items after one whose write threw, and reports the failure', async () => {
    const written: number[] = [];
    const failed: Array<[number, unknown]> = [];
    const batch = new ResponseBatch<number>(
      (item) => {
        if (item === 2) throw new Error('socket gone');
        written.push(item);
      },
      (item, error) => failed.push([item, error]),
    );
    for (const item of [1, 2, 3]) batch.add(item);
    await nextImmediate();
    expect(written).toEqual([1, 3]);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.[0]).toBe(2);
    expect((failed[0]?.[1] as Error).message).toBe('socket gone');
  });

  it('writes an item added while writing in the same flush', async () => {
    const written: string[] = [];
    const batch: ResponseBatch<string> = new ResponseBatch<string>(
      (item) => {
        written.push(item);
        if (item === 'a') batch.add('added while writing');
      },
      () => undefined,
    );
    batch.add('a');
    await nextImmediate();
    expect(written).toEqual(['a', 'added while writing']);
  });

  it('on request, writes what settled promises answer once their continuations ran, before the next round', async () => {
    const order: string[] = [];
    const batch = new ResponseBatch<string>(
      (item) => order.push(item),
      () => undefined,
    );
    /** A request handler: a few awaits between the commit it waits on and its answer. */
    const handle = async (commit: Promise<void>, name: string): Promise<void> => {
      await commit;
      await Promise.resolve();
      await Promise.resolve();
      batch.add(name);
    };
    await new Promise<void>((done) => {
      // A commit runs in a setImmediate callback, as SQLite's group commit does.
      setImmediate(() => {
        let release = (): void => undefined;
        const commit = new Promise<void>((resolve) => (release = resolve));
        const handled = Promise.all([handle(commit, 'first'), handle(commit, 'second')]);
        // Scheduled from this round, so it runs in the next one, as the end-of-round flush would.
        setImmediate(() => order.push('next round'));
        release();
        batch.flushAfterMicrotasks();
        void handled.then(() => setImmediate(() => setImmediate(done)));
      });
    });
    expect(order).toEqual(['first', 'second', 'next round']);
  });

  it('after an early flush, writes later items at the end of their round as before', async () => {
    const order: string[] = [];
    const batch = new ResponseBatch<string>(
      (item) => order.push(item),
      () => undefined,
    );
    setImmediate(() => order.push('round end'));
    batch.add('a');
    batch.flushAfterMicrotasks();
    await nextImmediate();
    expect(order).toEqual(['a', 'round end']);
    batch.add('b');
    expect(order).toEqual(['a', 'round end']);
    await nextImmediate();
    expect(order).toEqual(['a', 'round end', 'b']);
  });
});
