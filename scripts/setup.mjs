// Brings a checkout to a runnable state with no dependencies of its own: installs packages when the
// lock file changed since the last install, then builds the server, the partner SDK and the example
// site when their sources are newer than their builds, and generates the tests' types of the API
// document when it is newer than them. Used by `npm start`, `npm test` and the benchmarks, so each
// does its own set-up.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'node_modules', '.placard-install-stamp');

function run(command, args, env = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) {
    console.error(`\nsetup: "${command} ${args.join(' ')}" failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

export function ensureInstalled() {
  const lock = fs.readFileSync(path.join(root, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === digest) return;
  console.log(
    'setup: installing packages (npm ci; the SQLite driver compiles from source, about 2 minutes)…',
  );
  // node-gyp finds Node's headers in /usr without downloading them.
  run('npm', ['ci', '--no-audit', '--no-fund'], {
    npm_config_nodedir: process.env.npm_config_nodedir ?? '/usr',
  });
  fs.writeFileSync(stamp, digest);
}

/** Runs `build` when any of `inputs` (files or folders) is newer than `output`, then stamps `output`. */
function buildIfStale(name, output, inputs, build) {
  const sourceTime = Math.max(
    ...inputs.map((input) =>
      fs.statSync(input).isDirectory() ? newestMtime(input) : fs.statSync(input).mtimeMs,
    ),
  );
  if (fs.existsSync(output) && fs.statSync(output).mtimeMs >= sourceTime) return;
  console.log(`setup: building ${name}…`);
  build();
  // tsc -b skips unchanged outputs; touch the entry point so the freshness check above holds.
  const now = new Date();
  fs.utimesSync(output, now, now);
}

/**
 * Builds the server, its browser scripts, the partner SDK and the example partner site where their
 * sources changed, and the types the tests compile against where the API document changed.
 */
export function ensureBuilt() {
  const server = path.join(root, 'apps', 'server');
  buildIfStale(
    'the server',
    path.join(server, 'dist', 'cli', 'main.js'),
    [path.join(server, 'src'), path.join(server, 'tsconfig.json')],
    () => run('npx', ['tsc', '-b', 'apps/server']),
  );
  buildIfStale(
    "the dashboard's browser scripts",
    path.join(server, 'dist', 'public', 'live-figures.js'),
    [path.join(server, 'browser'), path.join(root, 'package-lock.json')],
    () => run(process.execPath, [path.join(server, 'browser', 'build.mjs')]),
  );
  const client = path.join(root, 'packages', 'client');
  buildIfStale(
    'the partner SDK',
    path.join(client, 'dist', 'esm', 'index.js'),
    [path.join(client, 'src'), path.join(client, 'tsconfig.json'), path.join(client, 'build.mjs')],
    () => run(process.execPath, [path.join(client, 'build.mjs')]),
  );
  const site = path.join(root, 'examples', 'partner-site');
  buildIfStale(
    'the example partner site',
    path.join(site, 'dist', 'main.js'),
    [path.join(site, 'src'), path.join(site, 'tsconfig.json'), path.join(client, 'dist', 'esm', 'index.js')],
    () => run('npx', ['tsc', '-p', 'examples/partner-site']),
  );
  const openapi = path.join(root, 'scripts', 'openapi.mjs');
  buildIfStale(
    "the API document's types for the tests",
    // TYPES in scripts/openapi.mjs, which git ignores: generated here, not committed.
    path.join(server, 'test', 'generated', 'placard-api.ts'),
    [path.join(root, 'docs', 'openapi.json'), openapi, path.join(root, 'package-lock.json')],
    () => run(process.execPath, [openapi, '--types']),
  );
}

/** Installs Debian packages with apt-get (as root, or through sudo), without questions. */
function aptInstall(packages) {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  for (const args of [
    ['apt-get', 'update', '-qq'],
    ['apt-get', 'install', '-y', '-qq', '--no-install-recommends', ...packages],
  ]) {
    const [command, ...rest] = [...sudo, ...args];
    run(command, rest, { DEBIAN_FRONTEND: 'noninteractive' });
  }
}

/** Debian's chromium for the browser test, installed with apt-get when missing (no browser downloads). */
export function ensureChromium() {
  if (fs.existsSync('/usr/bin/chromium')) return;
  console.log('setup: installing chromium (apt-get) for the browser test…');
  aptInstall(['chromium']);
}

/** Debian's HAProxy for `npm run cluster` and its test, installed with apt-get when missing. */
export function ensureHaproxy() {
  if (spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0) return;
  console.log('setup: installing haproxy (apt-get) for the reference cluster…');
  aptInstall(['haproxy']);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureInstalled();
  ensureBuilt();
}
