// Starts and stops `changer.mjs` (one campaign change a second) for `run.mjs`, on the load core.
import { spawn } from 'node:child_process';
import path from 'node:path';
import * as bench from '../lib.mjs';

/**
 * Starts the changer on the load core and resolves once it has said it is ready (its first change
 * is then under way), so that however short the window (BENCH_SECONDS), it is measured with the
 * changer at work; resolves to a function that stops it and returns its count of changes.
 */
export async function startChanger(databaseUrl, mode, campaignIds) {
  const child = spawn(
    'taskset',
    [
      '-c',
      bench.LOAD_CORE,
      process.execPath,
      path.join(bench.ROOT, 'bench/index/changer.mjs'),
      databaseUrl,
      mode,
      ...campaignIds.map(String),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  // Whole lines only: a chunk can end in the middle of one.
  const lines = () =>
    output
      .split('\n')
      .slice(0, -1)
      .filter((line) => line.trim() !== '');
  await new Promise((resolve, reject) => {
    const timeout = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bench: the ${mode} changer was not ready within 60 s`));
    }, 60_000);
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (lines().some((line) => JSON.parse(line).ready)) {
        clearTimeout(timeout);
        resolve();
      }
    });
    exited.then((status) => {
      clearTimeout(timeout);
      reject(new Error(`bench: the ${mode} changer exited (${status}) before it was ready`));
    });
  });
  return async () => {
    child.kill('SIGTERM');
    // For a hang only: at nice 19 on a busy core, answering the signal can take seconds.
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const status = await exited;
    clearTimeout(killer);
    const report = lines()
      .map((line) => JSON.parse(line))
      .find((line) => line.changes !== undefined);
    if (!report)
      throw new Error(`bench: the ${mode} changer exited (${status}) without its count of changes`);
    return report.changes;
  };
}
