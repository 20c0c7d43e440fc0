import { describe, expect, it } from 'vitest';
import { startServerProcess } from './helpers/process.js';

/** The helpers other tests stand on: a failure of theirs must not leave anything running. */
describe('the server process helper', () => {
  it('kills a server that misses its start window, by its pid, and says so', async () => {
    // Node runs the `-e` script instead of the server: it never says it is listening.
    const started = startServerProcess({}, [], ['-e', 'setInterval(() => {}, 1000)'], 500);
    const error = await started.then(
      () => {
        throw new Error('a process that never listens was taken for a server');
      },
      (failure: Error) => failure,
    );
    expect(error.message).toMatch(
      /^placard serve \(pid \d+\) did not say it was listening within 0\.5 s; killed it:/,
    );
    const pid = Number(/pid (\d+)/.exec(error.message)?.[1]);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('reports a server that exits before listening, with what it printed', async () => {
    const error = await startServerProcess(
      {},
      [],
      ['-e', 'console.error("no store here"); process.exit(3)'],
    ).then(
      () => new Error('not refused'),
      (failure: Error) => failure,
    );
    expect(error.message).toMatch(
      /^placard serve \(pid \d+\) exited with 3 before listening:\nno store here$/,
    );
  });
});
