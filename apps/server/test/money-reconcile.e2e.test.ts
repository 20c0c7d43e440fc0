import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { ENGINES } from './helpers/engines.js';
import { ensureBuilt, ROOT } from './helpers/process.js';

/**
 * `npm run bench:reconcile` at a small size (D18): 20,000 generated events, with repricing, share
 * changes, replays, invalid traffic and compaction on the way, reconcile to the micro in every place
 * money is kept (events, both rollup tables, prices, spend counters, campaigns list, partners'
 * earnings), and every price and share obeys its no-loss rule. The full size is a benchmark.
 */
beforeAll(() => ensureBuilt());

it.each(ENGINES)(
  'reconciles the money of 20,000 events to the micro on %s',
  (engine) => {
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bench/money/reconcile.mjs'), '--events', '20000', '--engine', engine],
      { cwd: ROOT, encoding: 'utf8', timeout: 170_000 },
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      new RegExp(
        `reconcile ${engine}: 20,000 events .* spend [1-9]\\d* micros .* earnings [1-9]\\d* micros .*every place agrees: 0 micros apart`,
      ),
    );
    expect(result.status).toBe(0);
  },
  180_000,
);
