import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureReason } from '../../../scripts/event-load.mjs';
import { POSTGRES_ADMIN_URL, tempDir } from './helpers/engines.js';
import { freePort } from './helpers/free-port.js';
import { ensureBuilt, ROOT, runCli } from './helpers/process.js';

/** `npm run cluster` with `env` added, until it exits on its own; its status and all it printed. */
function runCluster(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'scripts/cluster.mjs'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('npm run cluster', () => {
  const dataDir = tempDir('placard-cluster-script-');
  /** A database nobody created, on the test server. */
  const missing = `placard_missing_${process.pid}`;
  const missingUrl = Object.assign(new URL(POSTGRES_ADMIN_URL), { pathname: `/${missing}` }).toString();

  beforeAll(() => ensureBuilt());
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('stops with the instance’s own reason when the database it is given does not exist', async () => {
    const { status, output } = runCluster([], {
      CLUSTER_PORT: String(await freePort()),
      CLUSTER_DATA_DIR: dataDir,
      PLACARD_DATABASE_URL: missingUrl,
    });
    expect(status, output).toBe(1);
    expect(output).toContain(
      `cluster: instance a: server exited (1) before listening: database "${missing}" does not exist`,
    );
    expect(output).toContain(`Create it first (createdb ${missing})`);
    expect(output).toContain('Without PLACARD_DATABASE_URL the cluster creates placard_cluster itself.');
    expect(output).not.toContain('Placard cluster: HAProxy at');
  });

  it('has placard migrate say the same of a database that does not exist', () => {
    const refused = runCli(['migrate'], { PLACARD_DATABASE_URL: missingUrl });
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr:
        `error: database "${missing}" does not exist. Create it first (createdb ${missing}): ` +
        'a database named by PLACARD_DATABASE_URL is used as it is\n',
    });
  });

  it('refuses --fresh on a database it is given rather than dropping it', async () => {
    fs.writeFileSync(path.join(dataDir, 'kept'), '');
    const { status, output } = runCluster(['--fresh'], {
      CLUSTER_PORT: String(await freePort()),
      CLUSTER_DATA_DIR: dataDir,
      PLACARD_DATABASE_URL: missingUrl,
    });
    expect(status, output).toBe(1);
    expect(output).toContain('--fresh starts over on placard_cluster only');
    expect(fs.existsSync(path.join(dataDir, 'kept'))).toBe(true);
  });
});

describe('why a server stopped before listening', () => {
  it('is the message of the failure document `serve --json` prints, over several lines', () => {
    const lines = [
      '{"level":40,"msg":"an earlier warning"}',
      '{',
      '  "status": "error",',
      '  "message": "database \\"x\\" does not exist"',
      '}',
    ];
    expect(failureReason(lines)).toBe('database "x" does not exist');
  });

  it('is its last lines when it printed no such document (a crash)', () => {
    const lines = ['{"level":30,"msg":"starting"}', 'Error: boom', '    at main (main.js:1:1)'];
    expect(failureReason(lines)).toBe(`its last lines:\n${lines.join('\n')}`);
    expect(failureReason([])).toBe('it printed nothing');
  });
});
