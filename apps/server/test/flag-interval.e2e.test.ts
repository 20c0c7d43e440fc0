import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * `PLACARD_FLAG_INTERVAL_MS` reaches the key flag job through the real configuration and wiring of
 * the built server: a key that starts flooding clicks without impressions after the job's first
 * pass (5 s after start) is flagged by the next pass, a second later, not after the default 30 s.
 */
describe('the key flag interval setting', () => {
  let server: ServerProcess;
  let admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; data: unknown }>;

  beforeAll(async () => {
    ensureBuilt();
    server = await startServerProcess({ PLACARD_DATA_DIR: tempDir(), PLACARD_FLAG_INTERVAL_MS: '1000' }, [
      '--demo',
    ]);
    admin = async (method, path, body) => {
      const answer = await fetch(`${server.url}/admin/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${server.summary.adminToken}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const json = (await answer.json()) as { data: unknown };
      return { status: answer.status, data: json.data };
    };
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('flags a click flood a pass of the configured interval after it, not of the default 30 s', async () => {
    const partner = await admin('POST', '/partners', { name: 'Flooding Partner' });
    const { id: partnerId } = partner.data as { id: number };
    const created = await admin('POST', `/partners/${partnerId}/keys`, { label: 'flood' });
    const { id: keyId, key } = created.data as { id: number; key: string };
    const running = await admin('GET', '/campaigns?status=running&placement=header_banner');
    const [campaign] = running.data as Array<{ id: number }>;
    expect(campaign).toBeDefined();
    // Past the job's first pass, so only a pass on the configured interval can find the flood.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const floodedAt = Date.now();
    for (let i = 0; i < 40; i++) {
      const answer = await fetch(`${server.url}/api/v1/campaigns/click`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ campaignId: campaign?.id, placement: 'header_banner' }),
      });
      expect(answer.status).toBe(200);
    }
    let flaggedAfterMs: number | undefined;
    while (Date.now() - floodedAt < 10_000 && flaggedAfterMs === undefined) {
      const flags = (await admin('GET', '/flags?status=open')).data as Array<{
        apiKeyId: number;
        signal: string;
      }>;
      if (flags.some((flag) => flag.apiKeyId === keyId && flag.signal === 'clicks without impressions'))
        flaggedAfterMs = Date.now() - floodedAt;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(flaggedAfterMs).toBeDefined();
    expect(flaggedAfterMs).toBeLessThan(5_000);
  }, 60_000);
});
