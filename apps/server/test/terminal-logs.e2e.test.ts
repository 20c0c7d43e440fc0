import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { CLI, ensureBuilt, SERVER_NODE, START_WINDOW_MS, startServerProcess } from './helpers/process.js';

/**
 * Logs are JSON lines for machines; a person who runs the server in a terminal (`npm start`) reads
 * them as plain lines, and the banner with the admin token, the demo key and the curl lines stays
 * whole after them. `script` (util-linux) gives the server a terminal of its own.
 */

const dirs: string[] = [];
// Building is a set-up's work, under the hooks' timeout, not a test's.
beforeAll(() => ensureBuilt());
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const ANSI = /\x1b\[[0-9;]*m/g; // eslint-disable-line no-control-regex -- colours of the terminal

/**
 * What `serve --demo` on `dataDir` printed in a terminal up to its last curl line, colours removed;
 * with no admin token configured, as `npm start` on a new checkout.
 */
async function demoStartInTerminal(dataDir: string): Promise<string> {
  const command =
    `PLACARD_PORT=0 PLACARD_HOST=127.0.0.1 PLACARD_DATA_DIR='${dataDir}' PLACARD_ADMIN_TOKEN= ` +
    `exec '${SERVER_NODE}' '${CLI}' serve --demo`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    // As `startServerProcess` waits for a server: within its start window, or until it exits.
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no banner within ${START_WINDOW_MS / 1000} s:\n${output}`)),
        START_WINDOW_MS,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with ${code} before its banner:\n${output}`));
      });
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('/api/v1/campaigns/click')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } finally {
    // Stopped and gone before the caller starts the next one on the same store, as a person stops
    // a server before starting it again: two servers writing one SQLite file is not how it runs.
    const exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
      else child.once('exit', resolve);
    });
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // the whole group has exited already
    }
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
  return output.replace(ANSI, '').replace(/\r/g, '');
}

it('prints readable log lines in a terminal, and the whole banner after them', async () => {
  const dataDir = tempDir('placard-terminal-');
  dirs.push(dataDir);
  const text = await demoStartInTerminal(dataDir);
  expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: placard listening$/m);
  expect(text).not.toMatch(/^\{"level"/m);
  const banner = text.indexOf('Placard is serving demo data at');
  expect(banner).toBeGreaterThan(text.indexOf('INFO: placard listening'));
  expect(text.slice(banner)).toMatch(
    /^Placard is serving demo data at http:\/\/127\.0\.0\.1:\d+\nDemo API key \(partner "Demo Publisher"\): plc_\w+\n\nTry it:\n {2}curl .*fetch.*\n {2}curl .*impression\n {2}curl .*click/,
  );
});

it('prints the admin token at the first start, and how to create another at later ones', async () => {
  const dataDir = tempDir('placard-terminal-again-');
  dirs.push(dataDir);
  expect(await demoStartInTerminal(dataDir)).toMatch(/^Admin token for .*\n {2}pla_\w{40}$/m);
  const again = await demoStartInTerminal(dataDir);
  expect(again).not.toContain('Admin token for');
  expect(again).toContain(
    "The admin token was printed at this store's first start only; for another one, run:\n" +
      '  npm run -s placard -- tokens create --label my-laptop\n',
  );
});

it('writes JSON lines when its output is not a terminal', async () => {
  const dataDir = tempDir('placard-pipe-');
  dirs.push(dataDir);
  const server = await startServerProcess({ PLACARD_DATA_DIR: dataDir });
  try {
    const loaded = server.output
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level?: number; msg?: string })
      .find((record) => record.msg === 'campaign index loaded');
    expect(loaded?.level).toBe(30);
  } finally {
    await server.stop();
  }
});
