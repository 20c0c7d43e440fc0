import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './engines.js';
import { cliJson, ensureBuilt, startServerProcess, type ServerProcess } from './process.js';

/** A built Placard server running as its own process, set up through the CLI, for client-side tests. */
export interface RunningPlacard {
  server: ServerProcess;
  url: string;
  adminToken: string;
  /** Environment for `placard` CLI calls against the same store. */
  env: Record<string, string>;
  /** Ids of the imported campaigns, in order. */
  campaignIds: number[];
  /**
   * Creates a partner with a key (optionally with its own fetch limit) and resolves once the
   * server accepts it, its bucket full again; returns the key and its id.
   */
  newKey(partner: string, fetchLimit?: { rate: number; burst: number }): Promise<{ key: string; id: number }>;
  /** Billable and non-billable counts for one campaign, from the live report. */
  counts(campaignId: number): Promise<{
    impressions: number;
    clicks: number;
    nonBillableImpressions: number;
    nonBillableClicks: number;
  }>;
  stop(): Promise<void>;
}

/** Starts Placard on a fresh data directory with the given campaigns (one advertiser). */
export async function startPlacard(campaigns: unknown[]): Promise<RunningPlacard> {
  ensureBuilt();
  const dataDir = tempDir('placard-client-');
  const env = { PLACARD_DATA_DIR: dataDir };
  const file = path.join(dataDir, 'campaigns.json');
  fs.writeFileSync(file, JSON.stringify({ advertisers: [{ name: 'Client Tests', campaigns }] }));
  // Only `migrate` (and `serve`, `demo`) create a store; `campaigns import` refuses a missing one.
  cliJson(['migrate'], env);
  const { campaignIds } = cliJson<{ campaignIds: number[] }>(['campaigns', 'import', file, '--approve'], env);
  const server = await startServerProcess(env);
  const adminToken = server.summary.adminToken;
  if (!adminToken) throw new Error('the first start did not print an admin token');
  return {
    server,
    url: server.url,
    adminToken,
    env,
    campaignIds,
    async newKey(partner, fetchLimit) {
      cliJson(['partners', 'create', partner], env);
      const created = cliJson<{ id: number; key: string }>(['keys', 'create', '--partner', partner], env);
      if (fetchLimit) {
        const limits = ['--fetch-rate', String(fetchLimit.rate), '--fetch-burst', String(fetchLimit.burst)];
        cliJson(['keys', 'limits', String(created.id), ...limits], env);
      }
      // Every instance picks up new keys within about a second (the change feed).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const probe = await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
          headers: { authorization: `Bearer ${created.key}` },
        });
        await probe.arrayBuffer();
        if (probe.status !== 401) break;
        if (Date.now() > deadline) throw new Error(`the server never accepted the key of ${partner}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // The probe took a token: wait until the bucket is full again.
      if (fetchLimit)
        await new Promise((resolve) => setTimeout(resolve, (1000 * fetchLimit.burst) / fetchLimit.rate));
      return { key: created.key, id: created.id };
    },
    async counts(campaignId) {
      const response = await fetch(`${server.url}/admin/v1/reports?campaign=${campaignId}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      });
      const report = (await response.json()) as {
        data: {
          totals: {
            impressions: number;
            clicks: number;
            nonBillableImpressions: number;
            nonBillableClicks: number;
          };
        };
      };
      const { impressions, clicks, nonBillableImpressions, nonBillableClicks } = report.data.totals;
      return { impressions, clicks, nonBillableImpressions, nonBillableClicks };
    },
    async stop() {
      await server.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
