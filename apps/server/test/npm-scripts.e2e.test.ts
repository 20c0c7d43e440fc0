import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { ensureBuilt, ROOT, START_WINDOW_MS } from './helpers/process.js';

/** Process ids of a process's children (`pgrep -P`), or none. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** Our environment without vitest's own variables or colours, for a vitest that a test starts. */
function outsideVitest(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !name.startsWith('VITEST') && name !== 'NODE_ENV' && name !== 'FORCE_COLOR',
    ),
  );
  return { ...env, NO_COLOR: '1' };
}

/** A unit test file that runs in a second, named from apps/server. */
const QUICK_TEST = 'src/http/query.test.ts';
const SERVER_DIR = path.join(ROOT, 'apps/server');

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm scripts', () => {
  const dataDir = tempDir('placard-npm-scripts-');
  const leftovers: number[] = [];
  afterAll(() => {
    for (const pid of leftovers) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  it('stop the server they started when the process that ran them goes away', async () => {
    // `sh -c` as npm runs scripts; `; true` keeps the shell from replacing itself with node, so it
    // stays the script's parent, as it does under npm. Killing it is npm being stopped alone.
    const shell = spawn('sh', ['-c', `"${process.execPath}" scripts/placard.mjs serve --json; true`], {
      cwd: ROOT,
      env: { ...process.env, PLACARD_PORT: '0', PLACARD_HOST: '127.0.0.1', PLACARD_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      // As `startServerProcess` waits for a server: within its start window, or until it exits.
      const timer = setTimeout(
        () => reject(new Error(`the server did not start within ${START_WINDOW_MS / 1000} s`)),
        START_WINDOW_MS,
      );
      shell.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the script exited with ${code} before the server started`));
      });
      readline.createInterface({ input: shell.stdout }).on('line', (line) => {
        if (!line.startsWith('{')) return;
        const parsed = JSON.parse(line) as { url?: string };
        if (parsed.url) {
          clearTimeout(timer);
          resolve(parsed.url);
        }
      });
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const [wrapper] = childrenOf(shell.pid!);
    expect(wrapper).toBeDefined();
    const [server] = childrenOf(wrapper);
    expect(server).toBeDefined();
    leftovers.push(wrapper, server);

    shell.kill('SIGKILL');
    await eventually(() => !isRunning(server) && !isRunning(wrapper), 'the server and its wrapper gone');
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('run one test file from apps/server with npm test, and nothing else, when given a filter', () => {
    const result = spawnSync('npm', ['test', '--', QUICK_TEST], {
      cwd: SERVER_DIR,
      env: outsideVitest(),
      encoding: 'utf8',
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).toContain('== tests: npx vitest run');
    expect(output).toContain(`apps/server/${QUICK_TEST}`);
    expect(output).toMatch(/Test Files\s+1 passed \(1\)/);
    for (const step of ['type-check', 'lint', 'format', 'import rules', 'crash test'])
      expect(output).not.toContain(`== ${step}`);
  }, 120_000);

  it('let vitest run a file named from apps/server', () => {
    const result = spawnSync(path.join(ROOT, 'node_modules/.bin/vitest'), ['run', QUICK_TEST], {
      cwd: SERVER_DIR,
      env: outsideVitest(),
      encoding: 'utf8',
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).toMatch(/Test Files\s+1 passed \(1\)/);
  }, 120_000);

  it('watch: test:watch runs the matching tests, then waits for changes until stopped', async () => {
    // Its own process group, so that stopping it stops npm, the set-up and vitest together.
    const watch = spawn('npm', ['run', 'test:watch', '--', QUICK_TEST], {
      cwd: SERVER_DIR,
      env: outsideVitest(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    leftovers.push(-watch.pid!);
    const exited = new Promise((resolve) => watch.once('exit', resolve));
    let output = '';
    const waiting = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`test:watch did not settle:\n${output}`)), 90_000);
      for (const stream of [watch.stdout, watch.stderr]) {
        stream.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (/Waiting for file changes/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
      }
    });
    try {
      await waiting;
      expect(output).toMatch(/Test Files\s+1 passed \(1\)/);
      expect(watch.exitCode).toBe(null);
    } finally {
      process.kill(-watch.pid!, 'SIGTERM');
      await exited;
    }
  }, 120_000);

  it('install on this Node without engine warnings (npm ci, as a dry run)', () => {
    const result = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: outsideVitest(),
      encoding: 'utf8',
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).not.toContain('EBADENGINE');
  }, 120_000);
});
