import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The repository's root wherever vitest starts: it finds this file from a sub-folder too, and
  // the patterns below are the root's, so `npx vitest run test/e2e.test.ts` in apps/server runs
  // that file (a filter is taken from the folder it is typed in).
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    include: ['{apps,packages,examples}/*/src/**/*.test.ts', '{apps,packages,examples}/*/test/**/*.test.ts'],
    // End-to-end tests run `placard` commands and wait for servers: at a load of 14 on the two
    // cores, one test's six commands took 77 s. Timeouts are for hangs, not for slow machines.
    testTimeout: 120_000,
    // Set-ups build the server, create databases and start processes: seconds on an idle machine,
    // a minute and more when eight engineers share its two cores (a start took 13 s, a new key 8 s
    // at a load of 17). A set-up must not fail for that; `startServerProcess` gives up on a server
    // (and kills it) well within this.
    hookTimeout: 180_000,
    pool: 'forks',
    // Vitest's default is one file fewer than the cores at once: one at a time on 2 cores. Most
    // files start servers and wait on them (commits, fsyncs, a browser), so two at a time took
    // the whole run from about 21 to 8.5 minutes on this 2-core machine, every test passing.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    // `npm test` (the whole run) turns this on with `--coverage`: V8's own counters, read from the
    // test processes vitest starts. A server or CLI that a test spawns from the build (`dist/`)
    // is another process and is not counted, so code reached only end to end shows as uncovered.
    coverage: {
      provider: 'v8',
      include: ['apps/server/src/**/*.{ts,tsx}', 'packages/client/src/**/*.ts'],
      exclude: ['**/*.test.ts', '**/*.d.ts'],
      // One summary in the terminal, and the per-file figures for `scripts/coverage-summary.mjs`,
      // which splits the summary by package.
      reporter: ['text-summary', 'json-summary'],
    },
  },
});
