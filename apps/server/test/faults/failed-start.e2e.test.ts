import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, ENGINES, tempDir, type TestDatabase } from '../helpers/engines.js';
import { CLI, ensureBuilt, ROOT, SERVER_NODE, START_WINDOW_MS } from '../helpers/process.js';
import { SHARED_REDIS_URL } from '../helpers/redis.js';

/**
 * A start that fails after it has begun its background work (here: the port is taken, with Redis
 * configured, so the store, the jobs and a Redis connection are all running when `listen` fails)
 * stops all of it and exits non-zero, naming the cause.
 */

/**
 * How long a failed start may take to exit: a server's start window, as generous as a loaded
 * machine needs (a start there takes many seconds); a process still running then is a hang.
 */
const EXIT_WITHIN_MS = START_WINDOW_MS;

describe.each(ENGINES)('a failed start (%s)', (engine) => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  // Building is a set-up's work, under the hooks' timeout, not a test's.
  beforeAll(() => ensureBuilt());

  /**
   * Starts `placard serve` on a port a plain server holds (as the demo's `npm start` left running
   * would), with `env` added; resolves with the port, the exit code (or 'still running' after
   * EXIT_WITHIN_MS) and what the process printed, stdout and stderr as lines.
   */
  async function serveOnTakenPort(env: Record<string, string>) {
    const database: TestDatabase = await createDatabase(engine);
    cleanups.push(() => database.drop());
    const dataDir = tempDir('placard-failed-start-');
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(resolve)));
    const { port } = taken.address() as net.AddressInfo;

    const child = spawn(SERVER_NODE, [CLI, 'serve'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PLACARD_HOST: '127.0.0.1',
        PLACARD_PORT: String(port),
        PLACARD_DATA_DIR: dataDir,
        PLACARD_DATABASE_URL: database.url,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Whatever happens, the process this test started does not outlive it.
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    const stdout: string[] = [];
    const stderr: string[] = [];
    readline.createInterface({ input: child.stdout }).on('line', (line) => stdout.push(line));
    readline.createInterface({ input: child.stderr }).on('line', (line) => stderr.push(line));
    const code = await new Promise<number | string>((resolve) => {
      const timer = setTimeout(() => resolve('still running'), EXIT_WITHIN_MS);
      child.once('exit', (exitCode, signal) => {
        clearTimeout(timer);
        resolve(exitCode ?? signal ?? 'unknown');
      });
    });
    // The streams' last lines may arrive after the exit event.
    await new Promise((resolve) => setImmediate(resolve));
    return { port, code, stdout, stderr };
  }

  it('with Redis configured and its port taken, exits non-zero with the cause in its log', async () => {
    const { code, stdout, stderr } = await serveOnTakenPort({
      PLACARD_REDIS_URL: SHARED_REDIS_URL,
      PLACARD_REDIS_KEY_PREFIX: `placard-failed-start-${process.pid}:`,
      // Polling the store often makes a start that left its jobs running show at once.
      PLACARD_REFRESH_INTERVAL_MS: '50',
    });
    const output = [...stdout, ...stderr];
    expect({ code, refreshFailures: output.filter((line) => line.includes('refreshing')).length }).toEqual({
      code: 1,
      refreshFailures: 0,
    });
    expect(output.join('\n')).toContain('EADDRINUSE');
  });

  it('on a port another program holds, says so and what to do, and exits 1', async () => {
    const { port, code, stderr } = await serveOnTakenPort({ PLACARD_REDIS_URL: '' });
    expect(code).toBe(1);
    expect(stderr).toEqual([
      `error: port ${port} on 127.0.0.1 is already in use (EADDRINUSE: another Placard or another ` +
        'program): stop it, or set PLACARD_PORT to another port',
    ]);
  });
});
