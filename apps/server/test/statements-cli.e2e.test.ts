import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { tempDir } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';
import { cliJson, ensureBuilt, runCli } from './helpers/process.js';

/**
 * `placard statements` and `placard adjustments` (D18) as an operator types them, on a store whose
 * events of June 2026 (a closed UTC month) were written directly, as the server would have tracked
 * them: ten impressions at a CPM of 2.50 (25,000 micros) through a partner on 70% (17,500 micros).
 */
let dataDir: string;
let env: Record<string, string>;
const ids = { advertiser: 0, partner: 0 };

beforeAll(async () => {
  ensureBuilt();
  dataDir = tempDir('placard-statements-cli-');
  env = { PLACARD_DATA_DIR: dataDir };
  cliJson(['migrate'], env);
  const at = Date.parse('2026-06-10T10:00:00Z');
  const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
  const { campaignIds } = await store.importCampaigns([
    { name: 'Northwind', campaigns: [campaignInput({ title: 'Winter boots' })] },
  ]);
  const campaignId = campaignIds[0];
  await setCampaignPrice(store, campaignId, { model: 'cpm', amountMicros: 2_500_000, since: at });
  const source = await newPartnerKey(store, 'Daily Planet', 'planet');
  await store.addRevenueShare({
    partnerId: source.partnerId,
    effectiveFrom: at,
    basisPoints: 7000,
    actor: 'test',
  });
  await store.insertEvents(
    Array.from({ length: 10 }, (_, i) =>
      trackedEvent({ ...source, campaignId, occurredAt: at + i, priced: true }),
    ),
  );
  ids.advertiser = (await store.getCampaign(campaignId))!.advertiserId;
  ids.partner = source.partnerId;
  await store.close();
});
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it('records an adjustment, issues June in order, shows it as a table and CSV, and pays it once', () => {
  const adjustment = cliJson<{ id: number; amountMicros: number; carriedOnStatementId: null }>(
    ['adjustments', 'add', '--partner', String(ids.partner), '--amount', '-0.001', '--reason', 'Bot refund'],
    env,
  );
  expect(adjustment).toMatchObject({ amountMicros: -1_000, carriedOnStatementId: null });
  const both = runCli(
    ['adjustments', 'add', '--partner', '1', '--advertiser', '1', '--amount', '1', '--reason', 'x'],
    env,
  );
  expect(both.code).toBe(1);
  expect(both.stderr).toContain('give --advertiser or --partner, not both');

  const months = cliJson<{ month: string; closed: boolean; nextToIssue: boolean }[]>(
    ['statements', 'months'],
    env,
  );
  expect(months[0]).toEqual({ month: '2026-06', closed: true, issued: false, nextToIssue: true });
  const early = runCli(['statements', 'issue', '2026-07'], env);
  expect(early.code).toBe(1);
  expect(early.stderr).toContain('error (conflict): issue 2026-06 first');

  const issued = cliJson<{ id: number; kind: string; totalMicros: number; payableMicros: number }[]>(
    ['statements', 'issue', '2026-06'],
    env,
  );
  expect(issued.map((s) => [s.kind, s.totalMicros, s.payableMicros])).toEqual([
    ['advertiser', 25_000, 25_000],
    ['partner', 16_500, 16_500],
  ]);
  const again = runCli(['statements', 'issue', '2026-06'], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('error (already_done): the statements of 2026-06 were issued already');

  const list = runCli(['statements', 'list', '--partner', String(ids.partner)], env);
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout).toMatch(
    /2026-06\s+partner\s+\d+ Daily Planet\s+0\.02\s+0\.00\s+0\.00\s+0\.02\s+0\.02\s+0\.00\s+USD/,
  );
  const partnerStatement = String(issued[1].id);
  const csv = runCli(['statements', 'show', partnerStatement, '--csv'], env).stdout.split('\r\n');
  expect(csv[1]).toMatch(new RegExp(`^${partnerStatement},2026-06,placement_key,,,header_banner,`));
  expect(csv).toContain(
    `${partnerStatement},2026-06,adjustment,,,,,,${adjustment.id},Bot refund,0,0,0,0,0.00,USD`,
  );
  expect(csv).toContain(`${partnerStatement},2026-06,payable,,,,,,,,,,,,0.02,USD`);
  const shown = cliJson<{ lines: { kind: string; amountMicros: number }[] }>(
    ['statements', 'show', partnerStatement],
    env,
  );
  expect(shown.lines.map((line) => [line.kind, line.amountMicros])).toEqual([
    ['placement_key', 17_500],
    ['adjustment', -1_000],
  ]);

  const paid = runCli(['statements', 'pay', partnerStatement, '--reference', 'TRX-1'], env);
  expect(paid.code, paid.stderr).toBe(0);
  expect(paid.stdout).toBe(`statement ${partnerStatement} paid: USD 0.02 to Daily Planet, reference TRX-1\n`);
  const twice = runCli(['statements', 'pay', partnerStatement, '--reference', 'TRX-2'], env);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain(`statement ${partnerStatement} was paid already`);
  const adjustments = cliJson<{ carriedOnStatementId: number }[]>(['adjustments', 'list'], env);
  expect(adjustments.map((a) => a.carriedOnStatementId)).toEqual([issued[1].id]);
});

it('has no command that changes or removes an issued statement', () => {
  const help = runCli(['statements', '--help'], env).stdout;
  const commands = [...help.matchAll(/^ {2}(\w+)/gm)].map((match) => match[1]);
  expect(commands).toEqual(['months', 'issue', 'list', 'show', 'pay', 'help']);
  const adjustments = runCli(['adjustments', '--help'], env).stdout;
  expect([...adjustments.matchAll(/^ {2}(\w+)/gm)].map((match) => match[1])).toEqual(['add', 'list', 'help']);
});
