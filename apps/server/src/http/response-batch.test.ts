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
});
