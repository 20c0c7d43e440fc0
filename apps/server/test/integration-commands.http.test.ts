import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { tempDir } from './helpers/engines.js';
import { freePort } from './helpers/free-port.js';
import { signedInPerson } from './helpers/people.js';

/** The text of one of the page's code blocks, as a reader copies it. */
function codeBlock(body: string, label: string): string {
  const html = new RegExp(`aria-label="${label}"><code>([^<]*)</code>`).exec(body)?.[1];
  if (html === undefined) throw new Error(`no code block "${label}" on the page`);
  return html
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&');
}

/**
 * The integration page's curl commands, run as they are written in `sh` against the server, on a
 * PATH with only curl, od and tr: a machine without uuidgen must still send an idempotency key. The
 * curl on that PATH writes down its arguments, then runs the real one.
 */
describe("the integration page's commands in a shell", () => {
  let t: TestApp;
  let commands: Record<'fetch' | 'impression' | 'click', string>;
  const bin = tempDir('placard-integration-bin-');
  const argsFile = path.join(bin, 'curl-args');

  beforeAll(async () => {
    const port = await freePort();
    t = await createTestApp({ port, publicUrl: `http://127.0.0.1:${port}` });
    await t.addCampaigns([campaign({ title: 'Shell campaign' })]);
    const partnerId = (await t.partners.listPartners()).find((p) => p.name === 'Test Partner')!.id;
    const partner = await signedInPerson(t, Date.now(), {
      email: 'shell@example.com',
      account: `partner:${partnerId}`,
      role: 'reporter',
    });
    const page = await partner.get('/integration');
    expect(page.status).toBe(200);
    commands = {
      fetch: codeBlock(page.body, 'Fetch command'),
      impression: codeBlock(page.body, 'Impression command'),
      click: codeBlock(page.body, 'Click command'),
    };
    fs.writeFileSync(
      path.join(bin, 'curl'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${argsFile}'\nexec /usr/bin/curl "$@"\n`,
      { mode: 0o755 },
    );
    for (const tool of ['od', 'tr']) fs.symlinkSync(`/usr/bin/${tool}`, path.join(bin, tool));
  });
  afterAll(async () => t?.close());

  /**
   * Runs a command in `sh` with the key and campaign set as the page says; its output and curl's
   * arguments. Not synchronously: the server answering it runs in this process.
   */
  async function run(command: string, campaignId = '') {
    const output = await new Promise<string>((resolve, reject) =>
      execFile(
        '/bin/sh',
        ['-c', command],
        { env: { PATH: bin, PLACARD_API_KEY: t.apiKey, CAMPAIGN_ID: campaignId }, timeout: 60_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    return { output, args: fs.readFileSync(argsFile, 'utf8').split('\n') };
  }

  it('fetches, then reports an impression and a click, each with a new idempotency key', async () => {
    const fetched = JSON.parse((await run(commands.fetch)).output) as { data: Array<{ id: number }> };
    const id = String(fetched.data[0].id);

    const keys: string[] = [];
    for (const command of [commands.impression, commands.impression, commands.click]) {
      const { output, args } = await run(command, id);
      expect(JSON.parse(output)).toMatchObject({ status: 'success' });
      const header = args.find((arg) => arg.startsWith('Idempotency-Key:'));
      expect(header).toMatch(/^Idempotency-Key: [0-9a-f]{32}$/);
      keys.push(header!);
    }
    // Two runs of the impression command are two displays, not a retry of one.
    expect(new Set(keys).size).toBe(3);
    const report = (await t.admin('GET', `/reports?campaign=${id}`)).json() as {
      data: { totals: { impressions: number; clicks: number } };
    };
    expect(report.data.totals).toMatchObject({ impressions: 2, clicks: 1 });
  });
});
