import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/free-port.js';
import { guideRunner, shellBlocks } from './helpers/guide-script.js';
import { ensureBuilt } from './helpers/process.js';

/**
 * The operator guide, followed literally: every `sh` block of docs/management.md, in order, in one
 * shell, from the repository's root, as the guide says (helpers/guide-script.ts). The guide starts
 * its own server in the background, which is stopped afterwards.
 */

const guide = guideRunner('docs/management.md', 'operator-data');

afterAll(() => guide.stop());

// Building is a set-up's work, under the hooks' timeout, not a test's.
beforeAll(() => ensureBuilt());

it('takes an operator from an empty store to a running campaign and a partner key', async () => {
  // The guide's data directory is the operator's own: never overwrite one that is there.
  expect(fs.existsSync(guide.dataDir), `${guide.dataDir} exists; move it away to run this test`).toBe(false);
  expect(shellBlocks(guide.markdown()).length).toBeGreaterThan(8);
  const { code, stdout, stderr } = await guide.run(await freePort());

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
    /"groupBy":\["advertiser"\],"currency":"USD","rows":\[\{"period":"[\d-]+","advertiser":\d+,"impressions":1,/,
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
  const helper = shellBlocks(guide.markdown()).find((block) => block.startsWith('field()'));
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
