import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, ROOT } from './helpers/process.js';

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

  it('stop the server they started when the process that ran them goes away', async () => {
    ensureBuilt();
    // `sh -c` as npm runs scripts; `; true` keeps the shell from replacing itself with node, so it
    // stays the script's parent, as it does under npm. Killing it is npm being stopped alone.
    const shell = spawn('sh', ['-c', `"${process.execPath}" scripts/placard.mjs serve --json; true`], {
      cwd: ROOT,
      env: { ...process.env, PLACARD_PORT: '0', PLACARD_HOST: '127.0.0.1', PLACARD_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the server did not start')), 30_000);
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
    const deadline = Date.now() + 10_000;
    while ((isRunning(server) || isRunning(wrapper)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(isRunning(server)).toBe(false);
    expect(isRunning(wrapper)).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);
});
