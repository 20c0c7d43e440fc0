import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAG_INTERVAL_MS } from '../src/domain/key-flags.js';
import { tempDir } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { ensureBuilt, startServerProcess, type ServerProcess } from './helpers/process.js';

/**
 * `PLACARD_FLAG_INTERVAL_MS` reaches the key flag job through the real configuration and wiring of
 * the built server. Each pass of the job stamps the open flags it finds again with its own time
 * (`updatedAt`), so the server's own clock tells how far apart two passes ran: about the configured
 * second (plus the pass itself), not the default 30 s. The test waits for the passes as long as a
 * loaded machine needs; only the server's timestamps are compared.
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
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('runs its passes the configured interval apart, not the default 30 s', async () => {
    const partner = await admin('POST', '/partners', { name: 'Flooding Partner' });
    const { id: partnerId } = partner.data as { id: number };
    const created = await admin('POST', `/partners/${partnerId}/keys`, { label: 'flood' });
    const { id: keyId, key } = created.data as { id: number; key: string };
    const running = await admin('GET', '/campaigns?status=running&placement=header_banner');
    const [campaign] = running.data as Array<{ id: number }>;
    expect(campaign).toBeDefined();
    for (let i = 0; i < 40; i++) {
      const answer = await fetch(`${server.url}/api/v1/campaigns/click`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ campaignId: campaign?.id, placement: 'header_banner' }),
      });
      expect(answer.status).toBe(200);
    }
    /** When a pass last found the flood, by the server's clock (undefined until one has). */
    const lastFound = async (): Promise<number | undefined> => {
      const flags = (await admin('GET', '/flags?status=open')).data as Array<{
        apiKeyId: number;
        signal: string;
        updatedAt: number | string;
      }>;
      const flag = flags.find(
        (open) => open.apiKeyId === keyId && open.signal === 'clicks without impressions',
      );
      return flag && new Date(flag.updatedAt).getTime();
    };
    // Long enough for a pass of the default interval too: the bound below is the server's own.
    const passes = FLAG_INTERVAL_MS + 15_000;
    let first: number | undefined;
    await eventually(async () => (first = await lastFound()) !== undefined, 'the flood flagged', passes);
    let next: number | undefined;
    await eventually(
      async () => (next = await lastFound()) !== first,
      'the flag found again by the next pass',
      passes,
    );
    expect(next! - first!).toBeLessThan(FLAG_INTERVAL_MS);
  });
});
