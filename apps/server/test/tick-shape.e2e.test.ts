import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, ROOT, startServerProcess } from './helpers/process.js';

// See src/cli/tick-shape.ts. V8 prints each property store of `process.nextTick` with its state;
// the four that fill in a queue entry are the `DefineKeyedOwnPropertyInLiteral` ones.
const PRELOAD = path.join(ROOT, 'apps/server/test/helpers/tick-feedback.cjs');
const NODE_ARGS = ['--expose-gc', '--allow-natives-syntax', '--require', PRELOAD];

function entryStores(printed: string): string[] {
  return printed.split('\n').filter((line) => line.includes('DefineKeyedOwnPropertyInLiteral'));
}

describe('process.nextTick in the placard process', () => {
  const dataDir = tempDir('placard-tick-shape-');
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  it('goes megamorphic in a plain Node process that collects between calls (the case guarded against)', () => {
    const result = spawnSync(
      process.execPath,
      [...NODE_ARGS, '-e', "setInterval(() => {}, 1000); process.kill(process.pid, 'SIGUSR2');"],
      // A guard against a hang, under the test's timeout: a loaded machine takes many seconds.
      { encoding: 'utf8', timeout: 90_000 },
    );
    expect(result.status).toBe(0);
    const stores = entryStores(result.stdout);
    expect(stores).toHaveLength(4);
    expect(stores.filter((line) => line.includes('MEGAMORPHIC')).length).toBeGreaterThan(0);
  });

  it('keeps the stores that build its queue entries monomorphic however often the server collects', async () => {
    const server = await startServerProcess({ PLACARD_DATA_DIR: dataDir }, [], NODE_ARGS);
    let printed = '';
    try {
      server.child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const closed = once(server.child.stdout!, 'close');
      const exited = once(server.child, 'exit');
      server.child.kill('SIGUSR2');
      expect((await exited)[0]).toBe(0);
      await closed;
    } finally {
      await server.stop('SIGKILL');
    }
    const stores = entryStores(printed);
    expect(stores).toHaveLength(4);
    for (const store of stores) expect(store).toContain('MONOMORPHIC');
  });
});
