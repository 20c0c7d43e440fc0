import { describe, expect, it } from 'vitest';
import { RefusalLog } from './refusal-log.js';

describe('RefusalLog', () => {
  it('counts every refusal and logs the first, then at most one line a minute with the count since the last', () => {
    let now = 0;
    const lines: Array<{ count: number }> = [];
    const counted: string[] = [];
    const log = new RefusalLog(
      { warn: (fields: { count: number }) => lines.push(fields) } as never,
      { countRefusal: (kind) => counted.push(kind) },
      () => now,
    );
    log.note('csrf');
    for (let i = 0; i < 99; i++) {
      now += 100;
      log.note('csrf');
    }
    expect(lines).toEqual([expect.objectContaining({ count: 1 })]);
    now = 60_000;
    log.note('csrf');
    log.note('aborted_upload');
    expect(lines.map((line) => line.count)).toEqual([1, 100, 1]);
    expect(counted).toHaveLength(102);
  });
});
