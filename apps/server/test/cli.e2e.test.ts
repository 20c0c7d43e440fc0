import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../src/store/connect.js';
import { Store } from '../src/store/store.js';
import { campaignInput } from './helpers/campaign-input.js';
import { tempDir } from './helpers/engines.js';
import { setCampaignPrice } from './helpers/prices.js';
import { newPartnerKey, trackedEvent } from './helpers/tracked-event.js';
import { cliJson, ensureBuilt, runCli } from './helpers/process.js';

/**
 * The management commands of `placard`, as an operator types them, on a store of their own. Each
 * test starts a dozen CLI processes one after the other, a second or two each on an idle machine
 * and many times that on a busy one: they run under the suite's timeout, which is for hangs.
 */
describe('placard management commands', () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(() => {
    ensureBuilt();
    dataDir = tempDir('placard-cli-');
    env = { PLACARD_DATA_DIR: dataDir };
    cliJson(['migrate'], env);
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  /** `campaigns create` for a new advertiser, from a file of these fields; the draft it printed. */
  function createDraft(advertiserName: string, fields: Record<string, unknown>) {
    const advertiser = cliJson<{ id: number }>(['advertisers', 'create', advertiserName], env);
    const file = path.join(dataDir, `${advertiserName}.json`);
    fs.writeFileSync(file, JSON.stringify({ placements: ['footer_banner'], ...fields }));
    return cliJson<{ id: number; status: string }>(
      ['campaigns', 'create', file, '--advertiser', String(advertiser.id)],
      env,
    );
  }

  it('runs a campaign through review, and refuses what D11 forbids with exit 1', () => {
    const campaign = createDraft('CLI Advertiser', {
      title: 'From the CLI',
      destinationUrl: 'https://cli.example/',
    });
    expect(campaign.status).toBe('draft');
    const id = String(campaign.id);

    const refused = runCli(['campaigns', 'approve', id], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error (conflict): cannot approve a campaign that is draft');
    expect(JSON.parse(runCli(['campaigns', 'approve', id, '--json'], env).stdout)).toEqual({
      status: 'error',
      code: 'conflict',
      message: 'cannot approve a campaign that is draft',
    });
    expect(runCli(['campaigns', 'reject', id], env).code).toBe(2); // --reason is required: a usage error

    expect(cliJson<{ status: string }>(['campaigns', 'submit', id], env).status).toBe('pending_review');
    expect(
      cliJson<{ status: string; rejectionReason: string }>(
        ['campaigns', 'reject', id, '--reason', 'typo'],
        env,
      ),
    ).toMatchObject({
      status: 'rejected',
      rejectionReason: 'typo',
    });
    expect(
      cliJson<{ status: string }>(['campaigns', 'update', id, '--title', 'From the CLI, fixed'], env).status,
    ).toBe('draft');
    cliJson(['campaigns', 'submit', id], env);
    expect(cliJson<{ status: string }>(['campaigns', 'approve', id], env).status).toBe('running');

    const audit = runCli(['audit', '--type', 'campaign', '--id', id], env);
    expect(audit.code).toBe(0);
    expect(audit.stdout).toMatch(/^ID\s+AT\s+ACTOR\s+OBJECT\s+NAME\s+ACTION\s+REASON/);
    const trail = cliJson<Array<{ actor: string; action: string }>>(
      ['audit', '--type', 'campaign', '--id', id],
      env,
    );
    expect(trail.map((entry) => `${entry.actor} ${entry.action}`)).toEqual([
      'cli create',
      'cli submit',
      'cli reject',
      'cli update',
      'cli submit',
      'cli approve',
    ]);
  });

  it('explains why a campaign is or is not served, with its chance when eligible', () => {
    const id = String(
      createDraft('Why Advertiser', {
        title: 'Why',
        destinationUrl: 'https://why.example/',
        countries: ['US'],
      }).id,
    );
    const draft = runCli(['campaigns', 'why', id], env);
    expect(draft.code).toBe(0);
    expect(draft.stdout).toMatch(/^status\s+It is a draft: submit it for review/m);
    cliJson(['campaigns', 'submit', id], env);
    cliJson(['campaigns', 'approve', id], env);
    const elsewhere = cliJson<{ eligible: boolean; reasons: Array<{ code: string }> }>(
      ['campaigns', 'why', id, '--placement', 'header_banner', '--location', 'fr', '--json'],
      env,
    );
    expect(elsewhere.reasons.map((reason) => reason.code)).toEqual([
      'placement_not_targeted',
      'country_not_targeted',
    ]);
    const eligible = runCli(
      ['campaigns', 'why', id, '--placement', 'footer_banner', '--location', 'US'],
      env,
    );
    expect(eligible.stdout).toContain(`campaign ${id} is eligible`);
    expect(eligible.stdout).toMatch(/0 eligible campaigns come first .* in 100\.0% of fetches of 10/);
  });

  it('manages keys: rotate, suspend, reinstate and limits, never printing a digest', () => {
    cliJson(['partners', 'create', 'CLI Partner'], env);
    const blocked = cliJson<{ blockedCategories: string[] }>(
      ['partners', 'update', 'CLI Partner', '--blocked-categories', 'politics,health'],
      env,
    );
    expect(blocked.blockedCategories).toEqual(['health', 'politics']);
    const advertiser = cliJson<{ id: number }>(['advertisers', 'create', 'Blocked By CLI'], env);
    const blocking = cliJson<{ blockedCategories: string[]; blockedAdvertisers: number[] }>(
      ['partners', 'update', 'CLI Partner', '--blocked-advertisers', String(advertiser.id)],
      env,
    );
    expect(blocking).toMatchObject({
      blockedCategories: ['health', 'politics'],
      blockedAdvertisers: [advertiser.id],
    });
    expect(runCli(['partners', 'list'], env).stdout).toMatch(
      new RegExp(`CLI Partner\\s+health,politics\\s+${advertiser.id}\\s`),
    );
    const unknown = runCli(
      ['partners', 'update', 'CLI Partner', '--blocked-advertisers', `${advertiser.id},999999`],
      env,
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('blockedAdvertisers names an unknown advertiser: 999999');
    expect(
      cliJson<{ blockedAdvertisers: number[] }>(
        ['partners', 'update', 'CLI Partner', '--blocked-advertisers', ''],
        env,
      ).blockedAdvertisers,
    ).toEqual([]);
    const key = cliJson<{ id: number; key: string }>(['keys', 'create', '--partner', 'CLI Partner'], env);
    const rotated = cliJson<{ id: number; key: string; previous: { expiresAt: string } }>(
      ['keys', 'rotate', String(key.id), '--expires-in-hours', '1'],
      env,
    );
    expect(rotated.key).not.toBe(key.key);
    expect(Date.parse(rotated.previous.expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(
      cliJson<{ status: string }>(['keys', 'suspend', String(rotated.id), '--reason', 'bot clicks'], env)
        .status,
    ).toBe('suspended');
    expect(runCli(['keys', 'suspend', String(rotated.id), '--reason', 'again'], env).code).toBe(1);
    expect(cliJson<{ status: string }>(['keys', 'reinstate', String(rotated.id)], env).status).toBe('active');
    const limited = cliJson<{ rateLimits: Record<string, number | null> }>(
      ['keys', 'limits', String(key.id), '--fetch-rate', '20'],
      env,
    );
    expect(limited.rateLimits).toEqual({
      fetchRate: 20,
      fetchBurst: null,
      eventsRate: null,
      eventsBurst: null,
    });
    const limits = (...args: string[]) =>
      cliJson<{ rateLimits: Record<string, number | null> }>(['keys', 'limits', String(key.id), ...args], env)
        .rateLimits;
    expect(limits('--events-rate', '10', '--events-burst', '30')).toEqual({
      fetchRate: 20,
      fetchBurst: null,
      eventsRate: 10,
      eventsBurst: 30,
    });
    expect(limits('--fetch-rate', 'default')).toEqual({
      fetchRate: null,
      fetchBurst: null,
      eventsRate: 10,
      eventsBurst: 30,
    });
    const listing = runCli(['keys', 'list', '--partner', 'CLI Partner', '--json'], env).stdout;
    expect(listing).not.toContain(key.key);
    expect(listing).not.toMatch(/[0-9a-f]{64}/);
  });

  it('sets a partner’s revenue share from a billing date, lists them, and refuses a past date with exit 1', () => {
    const paris = { ...env, PLACARD_BILLING_TIME_ZONE: 'Europe/Paris' };
    cliJson(['partners', 'create', 'Sharing Partner'], env);
    // Two days ahead is a later day in Paris whatever the hour.
    const from = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const share = cliJson<{ percent: string; effectiveFrom: string; setBy: string }>(
      ['partners', 'share', 'Sharing Partner', '--basis-points', '7000', '--from', from],
      paris,
    );
    expect(share).toMatchObject({ percent: '70.00', setBy: 'cli', effectiveDate: from });
    // Midnight in Paris is 23:00 or 22:00 UTC the day before.
    expect(share.effectiveFrom).toMatch(/T2[23]:00:00\.000Z$/);
    const said = runCli(
      ['partners', 'share', 'Sharing Partner', '--basis-points', '6550', '--from', from],
      paris,
    );
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain(`partner Sharing Partner earns 65.50% from ${from}`);

    const table = runCli(['partners', 'shares', 'Sharing Partner'], paris);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/EFFECTIVEDATE\s+PERCENT\s+BASISPOINTS/);
    expect(table.stdout.indexOf('65.50')).toBeLessThan(table.stdout.indexOf('70.00'));
    expect(cliJson<unknown[]>(['partners', 'shares', 'Sharing Partner'], paris)).toHaveLength(2);

    const past = runCli(
      ['partners', 'share', 'Sharing Partner', '--basis-points', '9000', '--from', '2020-01-01'],
      paris,
    );
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/effectiveDate must be today \(\d{4}-\d{2}-\d{2}, Europe\/Paris\) or later/);
    const wrong = runCli(
      ['partners', 'share', 'Sharing Partner', '--basis-points', '70%', '--from', from],
      paris,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('basisPoints must be a whole number of basis points from 0 to 10000');
    expect(runCli(['partners', 'share', 'Sharing Partner', '--from', from], paris).code).toBe(2);
    const audited = cliJson<Array<{ action: string }>>(['audit', '--type', 'partner'], env);
    expect(audited.filter((entry) => entry.action === 'set_revenue_share')).toHaveLength(2);
  });

  it('lists a rotated-out key past its expiry as expired, with its expiry, and will not rotate it again', () => {
    cliJson(['partners', 'create', 'Expiring Partner'], env);
    const key = cliJson<{ id: number }>(['keys', 'create', '--partner', 'Expiring Partner'], env);
    const rotated = cliJson<{ id: number; previous: { status: string; expiresAt: string } }>(
      ['keys', 'rotate', String(key.id), '--expires-in-hours', '0'],
      env,
    );
    expect(rotated.previous.status).toBe('expired');
    const table = runCli(['keys', 'list', '--partner', 'Expiring Partner'], env).stdout.split('\n');
    expect(table[0]).toMatch(/STATUS\s+CREATEDAT\s+EXPIRESAT/);
    const row = table.find((line) => line.startsWith(`${key.id} `));
    expect(row).toMatch(/ expired /);
    expect(row).toMatch(/ Expiring Partner /);
    expect(row).toContain(rotated.previous.expiresAt);
    const again = runCli(['keys', 'rotate', String(key.id)], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('cannot rotate an api key that is expired');
  });

  it('manages placements and prints an admin token once', () => {
    expect(cliJson<Array<{ id: string }>>(['placements', 'list'], env)).toHaveLength(15);
    expect(cliJson<{ id: string }>(['placements', 'add', 'cli_slot', 'added from the CLI'], env).id).toBe(
      'cli_slot',
    );
    expect(cliJson<{ enabled: boolean }>(['placements', 'disable', 'cli_slot'], env).enabled).toBe(false);
    expect(runCli(['placements', 'add', 'cli_slot', 'again'], env).code).toBe(1);
    const token = cliJson<{ token: string }>(['admin-token', '--label', 'ops'], env).token;
    expect(token).toMatch(/^pla_[0-9A-Za-z]{40}$/);
  });

  it('creates, lists and revokes admin tokens, never listing one, and audits them as cli', () => {
    const created = cliJson<{ id: number; token: string; status: string; expiresAt: string }>(
      ['tokens', 'create', '--label', 'ci', '--expires-in-hours', '2'],
      env,
    );
    expect(created.token).toMatch(/^pla_[0-9A-Za-z]{40}$/);
    expect(created.status).toBe('active');
    expect(Date.parse(created.expiresAt) - Date.now()).toBeGreaterThan(119 * 60_000);
    const table = runCli(['tokens', 'list'], env);
    expect(table.stdout).toMatch(
      /^ID\s+LABEL\s+PREFIX\s+ACCOUNT\s+ACCOUNTNAME\s+ROLE\s+STATUS\s+CREATEDAT\s+LASTUSEDAT\s+EXPIRESAT/,
    );
    expect(table.stdout).toMatch(
      new RegExp(
        `^${created.id}\\s+ci\\s+${created.token.slice(0, 10)}\\s+operator\\s+Operator\\s+admin\\s+active`,
        'm',
      ),
    );
    expect(table.stdout).not.toContain(created.token);
    expect(cliJson<{ status: string }>(['tokens', 'revoke', String(created.id)], env).status).toBe('revoked');
    const again = runCli(['tokens', 'revoke', String(created.id)], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`admin token ${created.id} is already revoked`);
    const trail = cliJson<Array<{ actor: string; action: string }>>(
      ['audit', '--type', 'admin_token', '--id', String(created.id)],
      env,
    );
    expect(trail.map((entry) => `${entry.actor} ${entry.action}`)).toEqual(['cli create', 'cli revoke']);
  });

  it('creates users with one-time links, lists, re-invites, resets and disables them', () => {
    const created = cliJson<{ id: number; email: string; status: string; link: string }>(
      ['users', 'create', '--email', 'Ops@Example.com', '--role', 'manager'],
      env,
    );
    expect(created).toMatchObject({ email: 'ops@example.com', status: 'invited', account: 'operator' });
    expect(created.link).toMatch(/^http:\/\/127\.0\.0\.1:8080\/link\/[0-9A-Za-z]{43}$/);
    const table = runCli(['users', 'list'], env).stdout;
    expect(table).toMatch(/^ID\s+EMAIL\s+ACCOUNT\s+ACCOUNTNAME\s+ROLE\s+STATUS/);
    expect(table).toMatch(
      new RegExp(`^${created.id}\\s+ops@example.com\\s+operator\\s+Operator\\s+manager\\s+invited`, 'm'),
    );
    // An advertiser's user: the advertiser's name beside its id.
    const advertiser = cliJson<{ id: number }>(['advertisers', 'create', 'Table Top Ads'], env);
    const seller = cliJson<{ id: number }>(
      ['users', 'create', '--email', 'seller@example.com', '--account', `advertiser:${advertiser.id}`],
      env,
    );
    expect(runCli(['users', 'list'], env).stdout).toMatch(
      new RegExp(
        `^${seller.id}\\s+seller@example.com\\s+advertiser:${advertiser.id}\\s+Table Top Ads\\s+admin`,
        'm',
      ),
    );
    const again = cliJson<{ link: string }>(['users', 'invite', 'ops@example.com'], env);
    expect(again.link).not.toBe(created.link);
    expect(cliJson<{ link: string }>(['users', 'reset', String(created.id)], env).link).toMatch(/\/link\//);
    expect(cliJson<{ status: string }>(['users', 'disable', 'ops@example.com'], env).status).toBe('disabled');
    const taken = runCli(['users', 'create', '--email', 'ops@example.com'], env);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(
      'error (already_exists): a user with e-mail ops@example.com already exists',
    );
    const unknown = runCli(
      ['users', 'create', '--email', 'a@example.com', '--account', 'partner:Nobody'],
      env,
    );
    expect(unknown.stderr).toContain('error (not_found): partner "Nobody" not found');
  });

  it('shows caps, updates caps, time zone and hours of the week, and lists the latest audit entries', () => {
    const id = String(
      createDraft('Capped Advertiser', {
        title: 'Capped',
        destinationUrl: 'https://capped.example/',
        caps: { impressionsTotal: 1000, clicksDaily: 5 },
      }).id,
    );
    const shown = runCli(['campaigns', 'show', id], env).stdout;
    expect(shown).toMatch(/^caps\s+impressionsTotal 1000, clicksDaily 5$/m);
    expect(shown).toMatch(/^timeZone\s+UTC$/m);
    expect(shown).not.toContain('[object Object]');

    // Caps not named keep their value; "" removes one.
    const updated = cliJson<{ timeZone: string; caps: Record<string, number | null> }>(
      ['campaigns', 'update', id, '--time-zone', 'America/Santiago', '--impressions-daily', '200'],
      env,
    );
    expect(updated.timeZone).toBe('America/Santiago');
    expect(updated.caps).toEqual({
      impressionsTotal: 1000,
      impressionsDaily: 200,
      clicksTotal: null,
      clicksDaily: 5,
    });
    expect(
      cliJson<{ caps: Record<string, number | null> }>(
        ['campaigns', 'update', id, '--impressions-total', ''],
        env,
      ).caps,
    ).toEqual({ impressionsTotal: null, impressionsDaily: 200, clicksTotal: null, clicksDaily: 5 });
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(
      /^caps\s+impressionsDaily 200, clicksDaily 5$/m,
    );
    const refused = runCli(
      ['campaigns', 'update', id, '--time-zone', 'Mars/Olympus', '--clicks-total', '0'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('timeZone must be an IANA time zone');
    expect(refused.stderr).toContain('caps.clicksTotal must be a positive integer or null');

    // The hours of the week, typed as people say them; shown the same way; "" runs at every hour.
    const scheduled = cliJson<{ schedule: unknown }>(
      ['campaigns', 'update', id, '--schedule', 'mon-tue 9-17; sat 10-14,18-22'],
      env,
    );
    expect(scheduled.schedule).toEqual({
      mon: [[9, 17]],
      tue: [[9, 17]],
      sat: [
        [10, 14],
        [18, 22],
      ],
    });
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(
      /^schedule\s+mon-tue 9-17; sat 10-14,18-22$/m,
    );
    const unreadable = runCli(['campaigns', 'update', id, '--schedule', 'weekdays 9-17'], env);
    expect(unreadable.code).toBe(1);
    expect(unreadable.stderr).toContain('--schedule cannot read "weekdays 9-17"');
    const badHours = runCli(['campaigns', 'update', id, '--schedule', 'mon 17-9'], env);
    expect(badHours.stderr).toContain('schedule.mon[0] must be [from, to]');
    expect(
      cliJson<{ schedule: unknown }>(['campaigns', 'update', id, '--schedule', ''], env).schedule,
    ).toBeNull();

    cliJson(['campaigns', 'update', id, '--title', 'Capped, renamed'], env);
    cliJson(['campaigns', 'submit', id], env);
    // The latest three, the oldest of them first, as `tail` would show them.
    const latest = cliJson<Array<{ action: string }>>(
      ['audit', '--type', 'campaign', '--id', id, '--limit', '3'],
      env,
    );
    expect(latest.map((entry) => entry.action)).toEqual(['update', 'update', 'submit']);
    const table = runCli(['audit', '--type', 'campaign', '--id', id, '--limit', '1'], env).stdout;
    expect(table.trim().split('\n')).toHaveLength(2);
    expect(table).toMatch(/^ID\s+AT\s+ACTOR\s+OBJECT\s+NAME\s+ACTION/);
    // The campaign by the title it had then, beside its id.
    expect(table).toMatch(new RegExp(`campaign ${id}\\s+Capped, renamed\\s+submit\\b`));
  });

  it('sets a price exactly from units of the currency, shows it, lists its prices and removes it', () => {
    const file = path.join(dataDir, 'priced.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        title: 'Priced',
        destinationUrl: 'https://priced.example/',
        placements: ['footer_banner'],
      }),
    );
    const advertiser = cliJson<{ id: number }>(['advertisers', 'create', 'Priced Advertiser'], env);
    const created = cliJson<{ id: number; price: unknown }>(
      ['campaigns', 'create', file, '--advertiser', String(advertiser.id), '--price', 'cpm:2.50'],
      env,
    );
    expect(created.price).toEqual({ model: 'cpm', amountMicros: 2_500_000 });
    const id = String(created.id);
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(/^price\s+CPM USD 2\.50$/m);
    expect(cliJson<{ price: unknown }>(['campaigns', 'show', id], env).price).toEqual({
      model: 'cpm',
      amountMicros: 2_500_000,
      currency: 'USD',
    });

    // 0.355 has finer micros than cents show: read and shown exactly, never rounded.
    const changed = cliJson<{ price: unknown }>(['campaigns', 'update', id, '--price', 'CPC:0.355'], env);
    expect(changed.price).toEqual({ model: 'cpc', amountMicros: 355_000 });
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(/^price\s+CPC USD 0\.355$/m);
    for (const wrong of ['cpm', 'cpa:1', 'cpm:2.5.0', 'cpm:-1', 'cpm:0', 'cpm:0.0000001']) {
      const refused = runCli(['campaigns', 'update', id, '--price', wrong], env);
      expect(refused.code, `${wrong}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr, wrong).toMatch(/price/);
    }
    cliJson(['campaigns', 'update', id, '--price', 'none'], env);
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(/^price\s+none$/m);

    const table = runCli(['campaigns', 'prices', id], env).stdout.trim().split('\n');
    expect(table[0]).toMatch(/^SINCE\s+MODEL\s+AMOUNT\s+SETBY\s+BILLEDUNITS\s+SPEND$/);
    expect(table.slice(1).map((line) => line.split(/\s{2,}/).slice(1))).toEqual([
      ['none', '-', 'cli', '0', 'USD 0.00'],
      ['CPC', 'USD 0.355', 'cli', '0', 'USD 0.00'],
      ['CPM', 'USD 2.50', 'cli', '0', 'USD 0.00'],
    ]);
    const listed = cliJson<Array<{ model: string | null; setBy: string }>>(['campaigns', 'prices', id], env);
    expect(listed.map((entry) => `${entry.model} ${entry.setBy}`)).toEqual([
      'null cli',
      'cpc cli',
      'cpm cli',
    ]);
  });

  it('sets budgets exactly from units of the currency, shows them, changes one alone and removes them', () => {
    const file = path.join(dataDir, 'budgeted.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        title: 'Budgeted',
        destinationUrl: 'https://budgeted.example/',
        placements: ['footer_banner'],
      }),
    );
    const advertiser = cliJson<{ id: number }>(['advertisers', 'create', 'Budgeted Advertiser'], env);
    const created = cliJson<{ id: number; budget: unknown }>(
      ['campaigns', 'create', file, '--advertiser', String(advertiser.id), '--budget-total', '500.00'],
      env,
    );
    expect(created.budget).toEqual({ totalMicros: 500_000_000, dailyMicros: null });
    const id = String(created.id);
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(/^budget\s+USD 500\.00 in total$/m);

    // The daily budget alone keeps the total one.
    const changed = cliJson<{ budget: unknown }>(['campaigns', 'update', id, '--budget-daily', '50'], env);
    expect(changed.budget).toEqual({ totalMicros: 500_000_000, dailyMicros: 50_000_000 });
    expect(cliJson<{ budget: unknown }>(['campaigns', 'show', id], env).budget).toEqual({
      totalMicros: 500_000_000,
      dailyMicros: 50_000_000,
      currency: 'USD',
    });
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(
      /^budget\s+USD 500\.00 in total, USD 50\.00 a day$/m,
    );
    // With the spend against them; nothing spent yet, so no forecast of when they run out.
    const shown = runCli(['campaigns', 'show', id], env).stdout;
    expect(shown).toMatch(/^spend \d{4}-\d{2}-\d{2}\s+USD 0\.00$/m);
    expect(shown).toMatch(/^spend in total\s+USD 0\.00$/m);
    expect(cliJson<{ spend: unknown }>(['campaigns', 'show', id], env).spend).toMatchObject({
      dayMicros: 0,
      totalMicros: 0,
      currency: 'USD',
      forecast: { total: null, daily: null },
    });
    // Its advertiser's, likewise.
    expect(runCli(['advertisers', 'show', String(advertiser.id)], env).stdout).toMatch(
      /^spend in total\s+USD 0\.00$/m,
    );
    expect(cliJson<{ spend: unknown }>(['advertisers', 'show', String(advertiser.id)], env).spend).toEqual({
      month: expect.stringMatching(/^\d{4}-\d{2}$/),
      monthMicros: 0,
      totalMicros: 0,
      currency: 'USD',
      forecast: { total: null, month: null },
    });
    for (const wrong of ['ten', '-1', '0', '2.5.0', '0.0000001']) {
      const refused = runCli(['campaigns', 'update', id, '--budget-total', wrong], env);
      expect(refused.code, `${wrong}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr, wrong).toMatch(/budget-total/);
    }
    cliJson(['campaigns', 'update', id, '--budget-total', 'none', '--budget-daily', 'NONE'], env);
    expect(runCli(['campaigns', 'show', id], env).stdout).toMatch(/^budget\s+none$/m);
  });

  it('decides who prices an advertiser’s campaigns on create and update, shows and lists it, and refuses anything else', () => {
    const created = cliJson<{ id: number; pricing: string }>(
      ['advertisers', 'create', 'Self Pricing Ads', '--pricing', 'advertiser'],
      env,
    );
    expect(created.pricing).toBe('advertiser');
    const id = String(created.id);
    expect(runCli(['advertisers', 'show', id], env).stdout).toMatch(
      /^prices set by\s+the advertiser or the operator$/m,
    );
    const updated = runCli(['advertisers', 'update', id, '--pricing', 'operator'], env);
    expect(updated.stdout).toContain('prices set by the operator alone');
    expect(cliJson<{ pricing: string }>(['advertisers', 'show', id], env).pricing).toBe('operator');
    expect(runCli(['advertisers', 'list'], env).stdout).toMatch(
      new RegExp(`^${id}\\s+Self Pricing Ads\\s+operator\\s`, 'm'),
    );
    const refused = runCli(['advertisers', 'update', id, '--pricing', 'partner'], env);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/pricing must be one of operator, advertiser/);
    const audit = cliJson<Array<{ action: string; actor: string }>>(
      ['audit', '--type', 'advertiser', '--id', id],
      env,
    );
    // Created, then allowed, then withdrawn: each change audited as the command's.
    expect(audit.map((entry) => [entry.action, entry.actor])).toEqual([
      ['create', 'cli'],
      ['update', 'cli'],
      ['update', 'cli'],
    ]);
  });

  it('lists, shows, dismisses and suspends key flags, and turns the automatic policy on and off, audited as cli', async () => {
    cliJson(['partners', 'create', 'Flagged Partner'], env);
    const keys = [1, 2].map(() =>
      cliJson<{ id: number; partnerId: number }>(['keys', 'create', '--partner', 'Flagged Partner'], env),
    );
    // The flag job writes flags while the server runs; here the store is given two directly.
    const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
    const evidence = { summary: '25 of its 25 clicks (100%) had no impression to go with them', share: 1 };
    const flags = [];
    for (const key of keys) {
      const signal = 'clicks without impressions' as const;
      flags.push(
        (
          await store.saveKeyFlag(
            { apiKeyId: key.id, partnerId: key.partnerId, signal, evidence },
            Date.now(),
          )
        ).flag,
      );
    }
    await store.close();
    const [first, second] = [flags[0], flags[1]];

    const open = cliJson<Array<{ id: number; status: string }>>(['flags', 'list', '--status', 'open'], env);
    expect(open.map((flag) => flag.id)).toEqual([second.id, first.id]);
    const table = runCli(['flags', 'list'], env).stdout;
    expect(table).toMatch(
      /^ID\s+KEY\s+KEYLABEL\s+PARTNER\s+PARTNERNAME\s+SIGNAL\s+STATUS\s+UPDATEDAT\s+SUMMARY/,
    );
    expect(table).toMatch(
      new RegExp(
        `^${first.id}\\s+${keys[0].id}\\s+-\\s+${keys[0].partnerId}\\s+Flagged Partner\\s+clicks`,
        'm',
      ),
    );
    expect(runCli(['flags', 'show', String(first.id)], env).stdout).toContain(evidence.summary);
    expect(runCli(['flags', 'dismiss', String(first.id)], env).code).toBe(2); // --note is required
    expect(
      cliJson<{ status: string; reviewedBy: string }>(
        ['flags', 'dismiss', String(first.id), '--note', 'their load test'],
        env,
      ),
    ).toMatchObject({ status: 'dismissed', reviewedBy: 'cli' });
    expect(runCli(['flags', 'dismiss', String(first.id), '--note', 'again'], env).code).toBe(1);
    expect(cliJson<{ status: string }>(['flags', 'suspend', String(second.id)], env).status).toBe(
      'suspended',
    );
    expect(
      cliJson<Array<{ status: string }>>(['keys', 'list', '--partner', 'Flagged Partner'], env),
    ).toMatchObject([{ status: 'active' }, { status: 'suspended' }]);
    expect(cliJson<unknown[]>(['flags', 'list', '--status', 'open'], env)).toEqual([]);

    expect(cliJson<{ autoSuspend: boolean }>(['flags', 'policy'], env).autoSuspend).toBe(false);
    expect(
      cliJson(
        ['flags', 'policy', '--auto-suspend', 'on', '--signals', 'burst,ctr', '--multiplier', '3'],
        env,
      ),
    ).toEqual({ autoSuspend: true, signals: ['ctr', 'burst'], multiplier: 3 });
    expect(runCli(['flags', 'policy', '--auto-suspend', 'maybe'], env).code).toBe(1);
    expect(runCli(['flags', 'policy', '--auto-suspend', 'off'], env).stdout).toContain(
      'automatic suspension is off',
    );
    const trail = cliJson<Array<{ actor: string; objectType: string; action: string }>>(
      ['audit', '--limit', '5'],
      env,
    );
    expect(trail.map((entry) => `${entry.actor} ${entry.objectType} ${entry.action}`)).toEqual([
      'cli key_flag dismiss',
      'cli api_key suspend',
      'cli key_flag suspend',
      'cli flag_policy update',
      'cli flag_policy update',
    ]);
  });

  it('reports spend, eCPM and eCPC in the currency, amounts right-aligned, and the same in JSON and CSV', async () => {
    // The events of a day, written to the store directly as the server would have tracked them.
    const at = Date.parse('2026-06-01T10:00:00Z');
    const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
    const { campaignIds } = await store.importCampaigns([
      {
        name: 'Spending Advertiser',
        campaigns: [
          campaignInput({ title: 'Priced per thousand' }),
          campaignInput({ title: 'Priced per click' }),
        ],
      },
    ]);
    const [perThousand, perClick] = campaignIds as [number, number];
    await setCampaignPrice(store, perThousand, { model: 'cpm', amountMicros: 12_500_000, since: at });
    await setCampaignPrice(store, perClick, { model: 'cpc', amountMicros: 1_234_567_891, since: at });
    const source = await newPartnerKey(store, 'Spending Partner', 'spending');
    const event = (campaignId: number, kind: 'impression' | 'click' = 'impression') =>
      trackedEvent({ ...source, campaignId, kind, occurredAt: at, priced: true });
    await store.insertEvents([
      // 7 impressions at a CPM of 12.50: 87,500 micros.
      ...Array.from({ length: 7 }, () => event(perThousand)),
      // 3 impressions and 3 clicks at 1,234.567891: 3,703,703,673 micros.
      ...Array.from({ length: 3 }, () => event(perClick)),
      ...Array.from({ length: 3 }, () => event(perClick, 'click')),
    ]);
    await store.close();

    const args = ['report', '--from', '2026-06-01', '--to', '2026-06-01', '--group-by', 'campaign'];
    const table = runCli([...args, '--campaign', `${perThousand},${perClick}`], env);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.split('\n');
    const header = lines.find((line) => line.startsWith('period'))!;
    expect(header).toMatch(
      /nonBillableClicks\s+impressionsWithViewer\s+viewerShare\s+spend\s+eCPM\s+eCPC\s+earnings\s+margin\s+currency$/,
    );
    /** The cells of a line that end where the header's `name` ends: right-aligned under it. */
    const under = (line: string, name: string) => {
      const end = header.indexOf(` ${name}`) + 1 + name.length;
      return /\S+$/.exec(line.slice(0, end))?.[0];
    };
    const row = (title: string) => lines.find((line) => line.includes(title))!;
    const total = lines.find((line) => line.startsWith('total'))!;
    // No clicks: no eCPC, its cell blank.
    expect(['spend', 'eCPM', 'eCPC'].map((name) => under(row('Priced per thousand'), name))).toEqual([
      '0.09',
      '12.50',
      undefined,
    ]);
    expect(['spend', 'eCPM', 'eCPC'].map((name) => under(row('Priced per click'), name))).toEqual([
      '3703.70',
      '1234567.89',
      '1234.57',
    ]);
    // 3,703,791,173 micros over 10 impressions and 3 clicks, each floored to the micro.
    expect(['spend', 'eCPM', 'eCPC'].map((name) => under(total, name))).toEqual([
      '3703.79',
      '370379.12',
      '1234.60',
    ]);
    expect(total).toMatch(/\sUSD$/);

    const json = cliJson<{ currency: string; totals: Record<string, unknown> }>(
      [...args, '--campaign', `${perThousand},${perClick}`],
      env,
    );
    expect(json.currency).toBe('USD');
    expect(json.totals).toMatchObject({
      spendMicros: 3_703_791_173,
      ecpmMicros: 370_379_117_300,
      ecpcMicros: 1_234_597_057,
      currency: 'USD',
    });
    const csv = runCli([...args, '--campaign', String(perClick), '--csv'], env).stdout.split('\r\n');
    expect(csv[1]).toBe(
      `2026-06-01,${perClick},Priced per click,3,3,1,0,0,0,0,3703.70,1234567.89,1234.57,0.00,3703.70,USD`,
    );
  });

  it('migrate names the migrations it applied to a new store, then says nothing was left to apply', () => {
    const first = { PLACARD_DATA_DIR: path.join(dataDir, 'migrated-first') };
    const second = { PLACARD_DATA_DIR: path.join(dataDir, 'migrated-second') };
    const { applied } = cliJson<{ applied: string[] }>(['migrate'], first);
    expect(applied[0]).toBe('001-initial');
    expect(applied.length).toBeGreaterThan(1);

    const store = `sqlite store at ${path.join(dataDir, 'migrated-second', 'placard.db')}`;
    expect(runCli(['migrate'], second)).toMatchObject({
      code: 0,
      stdout: `${store}: applied ${applied.length} migrations: ${applied.join(', ')}; now up to date\n`,
    });
    expect(runCli(['migrate'], second)).toMatchObject({
      code: 0,
      stdout: `${store} is already up to date (nothing to apply)\n`,
    });
    expect(cliJson(['migrate'], second)).toMatchObject({ applied: [], pending: [] });
  });

  it('refuses a store that does not exist, naming it and how to create one, and creates none', () => {
    const missing = path.join(dataDir, 'mistyped');
    const elsewhere = { PLACARD_DATA_DIR: missing };
    for (const args of [
      ['campaigns', 'list'],
      ['audit'],
      ['partners', 'create', 'Lost'],
      ['tokens', 'list'],
    ]) {
      const refused = runCli(args, elsewhere);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(`no Placard store at ${path.join(missing, 'placard.db')}`);
      expect(refused.stderr).toContain('placard migrate');
      expect(refused.stderr).toContain('npm start');
    }
    expect(fs.existsSync(missing)).toBe(false);
    expect(cliJson<{ pending: string[] }>(['migrate'], elsewhere).pending).toEqual([]);
    expect(cliJson<unknown[]>(['campaigns', 'list'], elsewhere)).toEqual([]);
  });
});
