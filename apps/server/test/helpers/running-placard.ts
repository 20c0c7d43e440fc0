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
   * server accepts it, its fetch bucket untouched; returns the key and its id.
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

/**
 * Starts Placard on a fresh data directory with the given campaigns (one advertiser). If any step
 * fails (a command, or a server that does not start in its window), what was made so far, the
 * server and the directory, is removed before the error is passed on.
 */
export async function startPlacard(campaigns: unknown[]): Promise<RunningPlacard> {
  ensureBuilt();
  const dataDir = tempDir('placard-client-');
  let server: ServerProcess | undefined;
  try {
    return await setUp(dataDir, campaigns, (started) => (server = started));
  } catch (error) {
    await server?.stop('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** How long a new key may take to reach the server: the change feed brings it within about a second. */
const KEY_WINDOW_MS = 30_000;

async function setUp(
  dataDir: string,
  campaigns: unknown[],
  started: (server: ServerProcess) => void,
): Promise<RunningPlacard> {
  const env = { PLACARD_DATA_DIR: dataDir };
  const file = path.join(dataDir, 'campaigns.json');
  fs.writeFileSync(file, JSON.stringify({ advertisers: [{ name: 'Client Tests', campaigns }] }));
  // Only `migrate` (and `serve`, `demo`) create a store; `campaigns import` refuses a missing one.
  cliJson(['migrate'], env);
  const { campaignIds } = cliJson<{ campaignIds: number[] }>(['campaigns', 'import', file, '--approve'], env);
  const server = await startServerProcess(env);
  started(server);
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
      // Every instance picks up key changes within about a second (the change feed). The probe is
      // a tracking request without a body: 401 while the key is unknown, 403 while suspended, a 400
      // once it may be used; it takes nothing from the key's fetch bucket, so a test of fetch
      // limits starts with the whole burst.
      const probeUntil = async (done: (status: number) => boolean, what: string) => {
        const deadline = Date.now() + KEY_WINDOW_MS;
        for (;;) {
          const probe = await fetch(`${server.url}/api/v1/campaigns/impression`, {
            method: 'POST',
            headers: { authorization: `Bearer ${created.key}` },
          });
          await probe.arrayBuffer();
          if (done(probe.status)) return;
          if (Date.now() > deadline)
            throw new Error(
              `the server did not take the key of ${partner} as ${what} in ${KEY_WINDOW_MS / 1000} s`,
            );
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      };
      if (fetchLimit) {
        // Its limits are set while the server holds it suspended: keys are reloaded whole, so once
        // the server takes it as reinstated it has its limits too, and no fetch is ever answered
        // under the default ones.
        const id = String(created.id);
        cliJson(['keys', 'suspend', id, '--reason', 'limits being set'], env);
        await probeUntil((status) => status === 403, 'suspended');
        const limits = ['--fetch-rate', String(fetchLimit.rate), '--fetch-burst', String(fetchLimit.burst)];
        cliJson(['keys', 'limits', id, ...limits], env);
        cliJson(['keys', 'reinstate', id], env);
      }
      await probeUntil((status) => status !== 401 && status !== 403, 'usable');
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
