import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, ROOT } from './helpers/process.js';

/**
 * `bench/index/run.mjs` stops its changer when wrk's window ends: with BENCH_SECONDS=1 on a busy load
 * core that came before the changer had loaded its modules, it died by the signal without printing
 * its count, and the benchmark crashed parsing nothing. Stopping it at once, the shortest window of
 * all, must still give a count.
 */
beforeAll(() => ensureBuilt());

it('gives the changer’s count of changes however soon it is stopped', () => {
  const url = `sqlite:${path.join(tempDir('placard-bench-changer-'), 'placard.db')}`;
  const module = (file: string) => JSON.stringify(pathToFileURL(path.join(ROOT, file)).href);
  const script = `
    const { connect } = await import(${module('apps/server/dist/store/connect.js')});
    const { Store } = await import(${module('apps/server/dist/store/store.js')});
    const { startChanger } = await import(${module('bench/index/changer-process.mjs')});
    const store = new Store(connect(${JSON.stringify(url)}));
    await store.migrate();
    await store.close();
    const stop = await startChanger(${JSON.stringify(url)}, 'in-place', [1]);
    console.log(JSON.stringify({ changes: await stop() }));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 110_000, // a hang, not a slow machine: under the test's own 120 s
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(JSON.parse(result.stdout.trim().split('\n').pop()!)).toEqual({ changes: expect.any(Number) });
});
