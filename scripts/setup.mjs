// Brings a checkout to a runnable state with no dependencies of its own: installs packages when the
// lock file changed since the last install, then builds the server when its sources are newer than
// the build. Used by `npm start`, `npm test` and the benchmarks, so each does its own set-up.
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

export function ensureBuilt() {
  const server = path.join(root, 'apps', 'server');
  const built = path.join(server, 'dist', 'cli', 'main.js');
  const sourceTime = Math.max(
    newestMtime(path.join(server, 'src')),
    fs.statSync(path.join(server, 'tsconfig.json')).mtimeMs,
  );
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= sourceTime) return;
  console.log('setup: building the server…');
  run('npx', ['tsc', '-b', 'apps/server']);
  // tsc -b skips unchanged outputs; touch the entry point so the freshness check above holds.
  const now = new Date();
  fs.utimesSync(built, now, now);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureInstalled();
  ensureBuilt();
}
