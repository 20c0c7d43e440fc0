import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { tempDir } from './helpers/engines.js';
import { freePort } from './helpers/free-port.js';
import { shellBlocks } from './helpers/guide-script.js';
import {
  cliJson,
  ensureBuilt,
  ROOT,
  runCli,
  startServerProcess,
  type ServerProcess,
} from './helpers/process.js';

/**
 * docs/webhooks.md followed as written, on the demo data of `npm start`: the server starts as the
 * guide starts it (`npm start` with its setting; here `serve --demo` on a data folder of its own),
 * every other `sh` block runs in order in bash as a reader types it (the receiver's free port for
 * 3000), and the guide's TypeScript receiver, written out as a module and imported, must verify
 * and hand over the events it is sent. The guide's commands clear the loopback setting a developer
 * may have set, so the one the guide shows on each command is the one used.
 */
const guide = fs.readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const receiverSource = /^```ts\n([\s\S]*?)^```/m.exec(guide)?.[1];
const receiverFile = path.join(ROOT, 'apps/server/test/generated/webhook-receiver-from-guide.ts');
const START = 'PLACARD_WEBHOOKS_ALLOW_LOOPBACK=true npm start';

interface PlacardEvent {
  type: string;
  data: Record<string, unknown>;
}
type ReceiverModule = { webhookReceiver: (secret: string, handle: (event: PlacardEvent) => void) => Server };
interface Endpoint {
  id: number;
  account: string;
  url: string;
  eventTypes: string[];
}

let server: ServerProcess;
let dataDir: string;
/** The environment of the commands: the data folder, and no loopback setting of the developer's. */
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('placard-webhooks-');
  env = { PLACARD_DATA_DIR: dataDir };
  server = await startServerProcess({ ...env, PLACARD_WEBHOOKS_ALLOW_LOOPBACK: 'true' }, ['--demo']);
});

afterAll(async () => {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(receiverFile, { force: true });
});

/** The guide's `sh` blocks but the server's start, in one bash, with `port` for the receiver's 3000. */
function runGuideCommands(port: number) {
  const blocks = shellBlocks(guide);
  expect(blocks.map((block) => block.trim())).toContain(START);
  const script = ['set -Eeuo pipefail', ...blocks.filter((block) => block.trim() !== START)]
    .join('\n')
    .replaceAll('127.0.0.1:3000', `127.0.0.1:${port}`);
  const outer = { ...process.env };
  delete outer['PLACARD_WEBHOOKS_ALLOW_LOOPBACK'];
  return spawnSync('bash', ['-c', script], { cwd: ROOT, encoding: 'utf8', env: { ...outer, ...env } });
}

it("registers the guide's endpoints on the demo data and hands its receiver each event once", async () => {
  expect(receiverSource, 'docs/webhooks.md has no ```ts block').toBeDefined();
  fs.mkdirSync(path.dirname(receiverFile), { recursive: true });
  fs.writeFileSync(receiverFile, receiverSource!);
  const { webhookReceiver } = (await import(receiverFile)) as ReceiverModule;

  const port = await freePort();
  const ran = runGuideCommands(port);
  expect(ran.status, `the guide's commands failed:\n${ran.stdout}\n${ran.stderr}`).toBe(0);
  const endpoints = cliJson<Endpoint[]>(['webhooks', 'list'], env);
  // The advertiser's, named as the guide names it, for the types the guide lists.
  expect(endpoints[0]).toEqual(
    expect.objectContaining({
      account: 'advertiser:1',
      url: 'https://hooks.example.com/placard',
      eventTypes: ['campaign.approved', 'campaign.rejected'],
    }),
  );
  // The receiver on this machine, for every type the operator is sent.
  const local = endpoints[1];
  expect(local).toEqual(
    expect.objectContaining({ account: 'operator', url: `http://127.0.0.1:${port}/placard` }),
  );
  expect(local.eventTypes).toContain('flag.raised');
  // The secret the last command printed: the receiver's.
  const secret = [...ran.stdout.matchAll(/^secret: (whsec_\S+)$/gm)].at(-1)?.[1];
  expect(secret, ran.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

  const events: PlacardEvent[] = [];
  const receiver = webhookReceiver(secret!, (event) => events.push(event));
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
  try {
    cliJson(['partners', 'create', 'Daily Planet'], env);
    const key = cliJson<{ id: number }>(
      ['keys', 'create', '--partner', 'Daily Planet', '--label', 'production'],
      env,
    );
    cliJson(['webhooks', 'test', String(local.id)], env);
    await eventually(() => events.length >= 2, 'the key.created and webhook.test deliveries');
    expect(events.map((event) => event.type)).toEqual(['key.created', 'webhook.test']);
    expect(events[0].data).toEqual(
      expect.objectContaining({ keyId: key.id, label: 'production', status: 'active' }),
    );
    // Each message was delivered once and recorded so.
    const messages = cliJson<
      Array<{ id: number; webhookId: string; deliveredAt: string | null; attempts: number }>
    >(['webhooks', 'messages', String(local.id)], env);
    expect(messages.map((message) => [message.attempts, message.deliveredAt !== null])).toEqual([
      [1, true],
      [1, true],
    ]);
    // A message by the msg_… id every page shows, or by its number.
    const byWebhookId = cliJson<{ id: number; attemptLog: unknown[] }>(
      ['webhooks', 'attempts', messages[0].webhookId],
      env,
    );
    expect(byWebhookId.id).toBe(messages[0].id);
    expect(byWebhookId.attemptLog).toHaveLength(1);
    expect(cliJson<{ id: number }>(['webhooks', 'attempts', String(messages[0].id)], env).id).toBe(
      messages[0].id,
    );
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }

  // A test for a disabled endpoint says it waits.
  cliJson(['webhooks', 'disable', String(local.id)], env);
  const waiting = runCli(['webhooks', 'test', String(local.id)], env);
  expect(waiting.stdout).toContain(
    `but endpoint ${local.id} is disabled: it is delivered once the endpoint is enabled`,
  );
  // Without the setting on the command, the command refuses, naming the setting, whatever the server's.
  const refused = runCli(['webhooks', 'create', 'http://127.0.0.1:9140/hook', '--events', '*'], env);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain(
    'PLACARD_WEBHOOKS_ALLOW_LOOPBACK=true is set for the server and for the placard command',
  );
}, 240_000);
