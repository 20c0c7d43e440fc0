import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from './helpers/eventually.js';
import { tempDir } from './helpers/engines.js';
import { cliJson, ensureBuilt, ROOT, startServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * docs/webhooks.md's receiver, run as written against a real instance: the guide's TypeScript block
 * is written out as a module and imported, an endpoint is registered with the guide's command, and
 * the receiver must verify and hand over the events a change and a test send it.
 */
const guide = fs.readFileSync(path.join(ROOT, 'docs/webhooks.md'), 'utf8');
const receiverSource = /^```ts\n([\s\S]*?)^```/m.exec(guide)?.[1];
const receiverFile = path.join(ROOT, 'apps/server/test/generated/webhook-receiver-from-guide.ts');

interface PlacardEvent {
  type: string;
  data: Record<string, unknown>;
}
type ReceiverModule = { webhookReceiver: (secret: string, handle: (event: PlacardEvent) => void) => Server };

let server: ServerProcess;
let dataDir: string;
let env: Record<string, string>;

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('placard-webhooks-');
  env = { PLACARD_DATA_DIR: dataDir, PLACARD_WEBHOOKS_ALLOW_LOOPBACK: 'true' };
  cliJson(['migrate'], env);
  server = await startServerProcess(env);
});

afterAll(async () => {
  await server?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(receiverFile, { force: true });
});

it("hands the guide's receiver each event once, verified with the endpoint's secret", async () => {
  expect(receiverSource, 'docs/webhooks.md has no ```ts block').toBeDefined();
  fs.mkdirSync(path.dirname(receiverFile), { recursive: true });
  fs.writeFileSync(receiverFile, receiverSource!);
  const { webhookReceiver } = (await import(receiverFile)) as ReceiverModule;

  const placeholder = webhookReceiver('whsec_' + Buffer.alloc(32).toString('base64'), () => undefined);
  await new Promise<void>((resolve) => placeholder.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(placeholder.address() as AddressInfo).port}/placard`;
  await new Promise<void>((resolve) => placeholder.close(() => resolve()));

  // The guide's command, with this receiver's address.
  const endpoint = cliJson<{ id: number; secret: string }>(
    ['webhooks', 'create', url, '--account', 'operator', '--events', '*', '--description', 'Guide receiver'],
    env,
  );
  expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const events: PlacardEvent[] = [];
  const receiver = webhookReceiver(endpoint.secret, (event) => events.push(event));
  await new Promise<void>((resolve) => receiver.listen(Number(new URL(url).port), '127.0.0.1', resolve));
  try {
    cliJson(['partners', 'create', 'Daily Planet'], env);
    const key = cliJson<{ id: number }>(
      ['keys', 'create', '--partner', 'Daily Planet', '--label', 'production'],
      env,
    );
    cliJson(['webhooks', 'test', String(endpoint.id)], env);
    await eventually(() => events.length >= 2, 'the key.created and webhook.test deliveries');
    expect(events.map((event) => event.type)).toEqual(['key.created', 'webhook.test']);
    expect(events[0].data).toEqual(
      expect.objectContaining({ keyId: key.id, label: 'production', status: 'active' }),
    );
    // Each message was delivered once and recorded so.
    const messages = cliJson<Array<{ id: number; deliveredAt: string | null; attempts: number }>>(
      ['webhooks', 'messages', String(endpoint.id)],
      env,
    );
    expect(messages.map((message) => [message.attempts, message.deliveredAt !== null])).toEqual([
      [1, true],
      [1, true],
    ]);
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}, 120_000);
