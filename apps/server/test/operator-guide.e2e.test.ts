import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.js';
import { ensureBuilt, ROOT } from './helpers/process.js';

/**
 * The operator guide, followed literally: every `sh` block of docs/management.md, in order, in one
 * shell, from the repository's root, as the guide says. The only change is the port (a free one
 * instead of 8080, which another program may hold). The guide starts its own server in the
 * background; the shell runs in a process group of its own, which is stopped afterwards.
 */

const GUIDE = path.join(ROOT, 'docs/management.md');
const DATA_DIR = path.join(ROOT, 'operator-data');

function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]);
}

let group: number | undefined;
afterAll(() => {
  if (group !== undefined) {
    try {
      process.kill(-group, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  fs.rmSync(DATA_DIR, { recursive: true, force: true });
});

// Building is a set-up's work, under the hooks' timeout, not a test's.
beforeAll(() => ensureBuilt());

it('takes an operator from an empty store to a running campaign and a partner key', async () => {
  // The guide's data directory is the operator's own: never overwrite one that is there.
  expect(fs.existsSync(DATA_DIR), `${DATA_DIR} exists; move it away to run this test`).toBe(false);
  const port = await freePort();
  const blocks = shellBlocks(fs.readFileSync(GUIDE, 'utf8'));
  expect(blocks.length).toBeGreaterThan(8);
  const script = ['set -euo pipefail', ...blocks]
    .join('\n')
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);

  const child = spawn('bash', ['-c', script], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, PLACARD_PORT: String(port), PLACARD_ADMIN_TOKEN: '', PLACARD_DATA_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  group = child.pid;
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

  expect(code, `the guide's commands failed:\n${stdout}\n${stderr}`).toBe(0);
  const output = `${stdout}\n${stderr}`;
  // Every answer was a success: no error body anywhere in what the operator saw.
  expect(output).not.toContain('"status":"error"');
  // The partner's key fetches the campaign the operator created and approved (curl prints
  // answers without a newline, so the answer is found by its shape, not by its line).
  expect(stdout).toMatch(
    /\{"status":"success","data":\[\{"id":\d+,"title":"Spring sale: 30% off",[^\]]*"status":"running"[^\]]*\],"count":1\}/,
  );
  // The impression the partner reported is in the operator's report, by API and by command.
  expect(stdout).toMatch(
    /"groupBy":\["advertiser"\],"rows":\[\{"period":"[\d-]+","advertiser":\d+,"impressions":1,/,
  );
  expect(stdout).toMatch(/^total +1 +0 /m);
  // The import's summary counts in words: one campaign, not "1 campaigns" (after a curl answer,
  // which ends without a newline).
  expect(stdout).toMatch(/imported 1 campaign \(0 new advertisers, 1 existing\); ids \d+$/m);
}, 240_000);

/**
 * The guide's `field` helper, as an operator defines it in bash or in sh (dash here), fed answers
 * with printf, no server: a success answer prints the field, an error answer its code and message
 * on stderr and exits 1, and nothing else is printed (JavaScript in a double-quoted string would
 * have the shell expand `${…}` and backticks in it).
 */
describe.each(['bash', 'sh'])("the guide's field helper in %s", (shell) => {
  const helper = shellBlocks(fs.readFileSync(GUIDE, 'utf8')).find((block) => block.startsWith('field()'));
  const run = (answer: string, name: string) =>
    spawnSync(shell, ['-c', `${helper}\nprintf '%s' '${answer}' | field ${name}`], { encoding: 'utf8' });

  it('is in the guide', () => expect(helper).toBeDefined());

  it('prints the field of a success answer, of its data or of the answer itself', () => {
    const inData = run('{"status":"success","data":{"id":7,"key":"plc_x"}}', 'key');
    expect(inData).toMatchObject({ status: 0, stdout: 'plc_x\n', stderr: '' });
    expect(run('{"id":8}', 'id')).toMatchObject({ status: 0, stdout: '8\n', stderr: '' });
  });

  it('stops on an error answer with its code and message', () => {
    const answer = '{"status":"error","code":"not_found","message":"partner \\"Nobody\\" not found"}';
    expect(run(answer, 'id')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'not_found: partner "Nobody" not found\n',
    });
  });
});
