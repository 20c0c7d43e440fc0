import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/process.js';

/**
 * `npm run simulate:viewers` at a small size (D20): 3,000 viewers of an honest partner over a
 * simulated week, some opening two tabs at once, on one instance (memory) and on three sharing
 * PostgreSQL and Redis. At most 0.1% of their impressions may be stored past a frequency cap: fetch
 * leaves out what a viewer reached and holds what it answers. The full size is a benchmark.
 */
beforeAll(() => ensureBuilt());

it.each(['one', 'three'])(
  'keeps the impressions past a frequency cap of 3,000 honest viewers under 0.1%, %s instance(s)',
  (setup) => {
    const result = spawnSync(
      process.execPath,
      [path.join(ROOT, 'bench/viewers/simulate.mjs'), '--viewers', '3000', '--setup', setup],
      { cwd: ROOT, encoding: 'utf8', timeout: 170_000 },
    );
    expect(result.stderr).toBe('');
    const line = new RegExp(
      `viewers ${setup} instances?[^:]*: 3,000 viewers, [\\d,]+ page views in a simulated week, ([\\d,]+) impressions stored, ([\\d,]+) past frequency cap \\(([\\d.]+)%, bound 0.1%: met\\)`,
    ).exec(result.stdout);
    expect(line, result.stdout).not.toBeNull();
    expect(Number(line?.[1].replaceAll(',', ''))).toBeGreaterThan(8_000);
    // And the caps held: viewers were not shown capped campaigns more often than the caps allow.
    expect(result.stdout).toMatch(
      new RegExp(`viewers ${setup} [^\\n]* shown past a cap \\([\\d.]+%, bound 0.1%: met\\)`),
    );
    expect(result.stdout).toMatch(/viewers memory: \d+ bytes per viewer remembered, heap and blocks/);
    expect(result.status).toBe(0);
  },
  180_000,
);
