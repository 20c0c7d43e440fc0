import os from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{apps,packages,examples}/*/src/**/*.test.ts', '{apps,packages,examples}/*/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one file fewer than the cores at once: one at a time on 2 cores. Most
    // files start servers and wait on them (commits, fsyncs, a browser), so two at a time took
    // the whole run from about 21 to 8.5 minutes on this 2-core machine, every test passing.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
  },
});
