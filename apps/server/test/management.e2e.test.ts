import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { ensureBuilt, managementClient, startServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * A new operator's first hour, against built server processes: two instances share one store, as
 * when scaling out; changes made through one reach the other (within 2 s on an idle machine).
 */
describe('end to end: an operator sets up a campaign and a partner through the management API', () => {
  let dataDir: string;
  let first: ServerProcess;
  let second: ServerProcess;
  let adminToken: string;

  const admin = (method: string, path: string, body?: unknown) =>
    managementClient(first.url, adminToken)(method, path, body);
  const fetchFrom = (server: ServerProcess, key: string) =>
    fetch(`${server.url}/api/v1/campaigns/fetch?placement=sidebar_bottom`, {
      headers: { authorization: `Bearer ${key}` },
    });

  beforeAll(async () => {
    ensureBuilt();
    dataDir = tempDir('placard-ops-');
    first = await startServerProcess({ PLACARD_DATA_DIR: dataDir, PLACARD_LOG_LEVEL: 'warn' });
    // First start with no token configured: one is generated and shown once.
    expect(first.summary.adminToken).toMatch(/^pla_[0-9A-Za-z]{40}$/);
    adminToken = first.summary.adminToken!;
    second = await startServerProcess({ PLACARD_DATA_DIR: dataDir, PLACARD_LOG_LEVEL: 'warn' });
    expect(second.summary.adminToken).toBeNull();
  });

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  let campaignId: number;
  let key: { id: number; key: string };

  it('creates an advertiser and a campaign, submits and approves it', async () => {
    const advertiser = await admin('POST', '/advertisers', { name: 'Ops Advertiser' });
    const created = await admin('POST', '/campaigns', {
      advertiserId: advertiser.id,
      title: 'Ops launch',
      destinationUrl: 'https://ops.example/launch',
      category: 'business',
      placements: ['sidebar_bottom'],
    });
    expect(created.status).toBe('draft');
    campaignId = created.id;
    expect((await admin('POST', `/campaigns/${campaignId}/submit`)).status).toBe('pending_review');
    expect((await admin('POST', `/campaigns/${campaignId}/approve`)).status).toBe('running');
  });

  it('creates a partner and a key, and the key fetches the campaign from both instances', async () => {
    const partner = await admin('POST', '/partners', { name: 'Ops Publisher' });
    key = (await admin('POST', `/partners/${partner.id}/keys`, {
      label: 'production',
    })) as unknown as typeof key;
    for (const server of [first, second]) {
      await eventually(async () => {
        const res = await fetchFrom(server, key.key);
        if (res.status !== 200) return false;
        const body = (await res.json()) as { data: Array<{ id: number; title: string }> };
        return body.data.some((c) => c.id === campaignId && c.title === 'Ops launch');
      }, 'the new key served the campaign');
    }
  });

  it('pauses the campaign and it disappears everywhere', async () => {
    await admin('POST', `/campaigns/${campaignId}/pause`);
    for (const server of [first, second]) {
      await eventually(
        async () => ((await (await fetchFrom(server, key.key)).json()) as { count: number }).count === 0,
        'the paused campaign gone',
      );
    }
  });

  it('suspends, reinstates and revokes the key; the other instance follows', async () => {
    await admin('POST', `/keys/${key.id}/suspend`, { reason: 'clicks from a bot farm' });
    await eventually(async () => (await fetchFrom(second, key.key)).status === 403, 'suspended');
    expect(await (await fetchFrom(second, key.key)).json()).toEqual({
      status: 'error',
      message: 'api key suspended',
    });
    await admin('POST', `/keys/${key.id}/reinstate`);
    await eventually(async () => (await fetchFrom(second, key.key)).status === 200, 'reinstated');
    await admin('POST', `/keys/${key.id}/revoke`);
    await eventually(async () => (await fetchFrom(second, key.key)).status === 401, 'revoked');
  });

  it('shows the whole story in the audit log', async () => {
    // Read through the other instance, as a client would: a 503 (the shared SQLite file busy past
    // its wait, D8) is asked again until another answer comes; any other answer is final.
    let res: Response;
    await eventually(async () => {
      res = await fetch(`${second.url}/admin/v1/audit?objectType=campaign&objectId=${campaignId}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      return res.status !== 503;
    }, 'an answer other than 503');
    const body = (await res!.json()) as { data?: Array<{ action: string }> };
    expect(res!.status, JSON.stringify(body)).toBe(200);
    expect(body.data!.map((e) => e.action)).toEqual(['create', 'submit', 'approve', 'pause']);
  });
});
