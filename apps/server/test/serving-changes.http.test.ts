import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { digestApiKey } from '../src/domain/api-keys.js';
import { CLI_ACTOR } from '../src/services/audit.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import type { BrowserClient } from './helpers/browser-client.js';
import { ENGINES } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { signedInPerson } from './helpers/people.js';
import { ROOT } from './helpers/process.js';

/**
 * A change reaches this instance's serving index by one path, whichever way it was made: the
 * service that committed it tells `ServingState.changed`, once, and the serving state checks the
 * change feed. The helper's serving state polls once a minute and is never started, so a change
 * served within the wait came by that path.
 */
describe.each(ENGINES)('one path from a change to the serving index on %s', (engine) => {
  let t: TestApp;
  let operator: BrowserClient;
  let campaignId: number;
  let changed: MockInstance;
  let refreshed: MockInstance;

  const served = () =>
    t.state.index.select({ placement: 'header_banner', limit: 100 }, Date.now()).map((c) => c.id);
  /** Another live key of the test's partner, known to the serving state (the spies start again). */
  const newKey = async () => {
    const partnerId = (await t.partners.getKey(t.apiKeyId)).partnerId;
    const created = await t.partners.createKey(partnerId);
    await t.state.refresh();
    changed.mockClear();
    refreshed.mockClear();
    return { id: created.key.id, digest: digestApiKey(created.plaintext) };
  };

  beforeEach(async () => {
    t = await createTestApp({ engine });
    operator = await signedInPerson(t, Date.now(), {
      email: `operator-${engine}@example.com`,
      account: 'operator',
      role: 'manager',
    });
    [campaignId] = await t.addCampaigns([campaign()]);
    changed = vi.spyOn(t.state, 'changed');
    refreshed = vi.spyOn(t.state, 'refresh');
  });
  afterEach(async () => t?.close());

  /** The serving state was told once and checked the feed once, after `act`. */
  async function toldOnce(act: () => Promise<unknown>, arrived: () => boolean, what: string) {
    await act();
    await eventually(arrived, what);
    expect(changed).toHaveBeenCalledTimes(1);
    expect(refreshed).toHaveBeenCalledTimes(1);
  }

  it('through the management API', async () => {
    await toldOnce(
      async () => expect((await t.admin('POST', `/campaigns/${campaignId}/pause`)).statusCode).toBe(200),
      () => !served().includes(campaignId),
      'the paused campaign out of the index',
    );
  });

  it("through a dashboard campaign's form", async () => {
    await toldOnce(
      async () =>
        expect((await operator.submit('/campaigns', `/campaigns/${campaignId}/pause`)).status).toBe(303),
      () => !served().includes(campaignId),
      'the paused campaign out of the index',
    );
  });

  it("through a dashboard list page's form", async () => {
    const key = await newKey();
    await toldOnce(
      async () => expect((await operator.submit('/keys', `/keys/${key.id}/revoke`)).status).toBe(303),
      () => t.state.key(key.digest) === undefined,
      'the revoked key forgotten',
    );
  });

  it('through a dashboard key rotation', async () => {
    const key = await newKey();
    await toldOnce(
      async () => expect((await operator.submit('/keys', `/keys/${key.id}/rotate`)).status).toBe(201),
      () => t.state.key(key.digest)?.expiresAt !== null,
      'the rotated key given its expiry',
    );
  });

  it('through a service called in-process, as the command line calls it', async () => {
    const key = await newKey();
    const services = t.services.appDeps.admin.services;
    await toldOnce(
      () => services.partners(CLI_ACTOR).suspendKey(key.id, 'checking one path'),
      () => t.state.key(key.digest)?.status === 'suspended',
      'the suspended key known as suspended',
    );
  });

  it('tells nothing of a change fetches do not read, nor of a refused one', async () => {
    expect((await t.admin('POST', '/advertisers', { name: 'Unserved' })).statusCode).toBe(201);
    expect((await t.admin('POST', '/campaigns/999999/pause')).statusCode).toBe(404);
    expect((await operator.submit('/campaigns', '/campaigns/999999/pause')).status).toBe(404);
    expect(changed).not.toHaveBeenCalled();
    expect(refreshed).not.toHaveBeenCalled();
  });
});

describe('no route refreshes the serving index itself', () => {
  const HTTP = path.join(ROOT, 'apps/server/src/http');
  const sources = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return sources(file);
      return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [file] : [];
    });

  it('leaves refreshing to the services and the serving state', () => {
    const calls = sources(HTTP).flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((line, i) => `${path.relative(HTTP, file)}:${i + 1}: ${line.trim()}`)
        .filter((line) => /\.(refresh|changed)\(|afterChange/.test(line)),
    );
    expect(calls).toEqual([]);
  });
});
