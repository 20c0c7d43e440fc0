import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../src/domain/accounts.js';
import { PAGE_ACCESS } from '../src/http/dashboard/pages/access.js';
import { micros } from '../src/domain/money.js';
import { UserService } from '../src/services/users.js';
import { WebhookService } from '../src/services/webhooks.js';
import { campaign, createTestApp, type TestApp } from './helpers/app.js';
import { BrowserClient } from './helpers/browser-client.js';
import { ROOT } from './helpers/process.js';

/**
 * The scope matrix (D13, OWASP API1/API5): every management route, and every dashboard page and
 * form, as every role of the operator, of an advertiser and of a partner, against their own
 * objects and another account's. Another account's object must read exactly as a missing one
 * (404), a change the role may not make is 403, and anything allowed gets neither. Lists never
 * show another account's objects.
 */
type Kind = 'operator' | 'advertiser' | 'partner';
type Target = 'own' | 'foreign';
interface Caller {
  kind: Kind;
  role: Role;
}

/** What a route's `{id}` (or its body) names, and what it takes to use the route. */
interface Rule {
  /** `webhook`: an endpoint (or its message) of an account, named like a user: the caller's own kind's. */
  owner: 'advertiser' | 'partner' | 'user' | 'webhook' | 'placement' | 'token' | null;
  need: 'read' | 'change' | 'operator-read' | 'operator-change' | 'user-admin' | 'token-admin';
}

/** The routes (operation ids, space-separated) whose `{id}` names `owner` and that take `need`. */
const routes = (owner: Rule['owner'], need: Rule['need'], operations: string): Record<string, Rule> =>
  Object.fromEntries(operations.split(' ').map((id) => [id, { owner, need }]));

const RULES: Record<string, Rule> = {
  ...routes(null, 'read', 'listPartners listAdvertisers listCampaigns listPlacements report listFlags'),
  ...routes(null, 'operator-change', 'createPartner createAdvertiser addPlacement setFlagPolicy'),
  ...routes('partner', 'read', 'getPartner listKeys getKey getFlag listRevenueShares'),
  ...routes('partner', 'operator-change', 'setRevenueShare'),
  ...routes('partner', 'operator-change', 'updatePartner suspendKey reinstateKey setKeyLimits'),
  ...routes('partner', 'operator-change', 'dismissFlag suspendFlag'),
  ...routes('partner', 'change', 'createKey rotateKey revokeKey'),
  ...routes('advertiser', 'read', 'getAdvertiser getCampaign whyCampaign listCampaignPrices'),
  // renameAdvertiser also decides who prices an advertiser's campaigns (`pricing`): tried below.
  ...routes('advertiser', 'operator-change', 'renameAdvertiser approveCampaign rejectCampaign'),
  ...routes('advertiser', 'change', 'createCampaign updateCampaign submitCampaign'),
  ...routes('advertiser', 'change', 'pauseCampaign resumeCampaign archiveCampaign'),
  ...routes('placement', 'read', 'getPlacement'),
  ...routes('placement', 'operator-change', 'updatePlacement enablePlacement disablePlacement'),
  ...routes(null, 'operator-read', 'listAudit getFlagPolicy moneySummary'),
  ...routes(null, 'token-admin', 'listAdminTokens createAdminToken'),
  ...routes('token', 'token-admin', 'getAdminToken revokeAdminToken'),
  ...routes(null, 'user-admin', 'listUsers'),
  ...routes(null, 'read', 'listStatementMonths listStatements listAdjustments'),
  ...routes(null, 'operator-change', 'issueStatements addAdjustment'),
  ...routes('advertiser', 'read', 'getStatement'),
  ...routes('partner', 'operator-change', 'markStatementPaid'),
  ...routes('user', 'user-admin', 'createUser getUser inviteUser resetUser disableUser'),
  ...routes(null, 'read', 'listWebhooks'),
  ...routes(null, 'change', 'createWebhook'),
  ...routes('webhook', 'read', 'getWebhook listWebhookMessages getWebhookMessage'),
  ...routes('webhook', 'change', 'updateWebhook disableWebhook enableWebhook rotateWebhookSecret'),
  ...routes('webhook', 'change', 'testWebhook replayWebhookMessage'),
};

const rule = (owner: Rule['owner'], need: Rule['need']): Rule => ({ owner, need });

/** An open flag of the key, as the flag job raises one, so the flag routes have an object to name. */
function flagKey(t: TestApp, partnerId: number, apiKeyId: number) {
  const at = new Date().toISOString();
  const evidence = { summary: 'matrix', windowStart: at, windowEnd: at, measure: 1, threshold: 0.2 };
  return t.store
    .saveKeyFlag({ apiKeyId, partnerId, signal: 'clicks without impressions', evidence }, Date.now())
    .then((saved) => saved.flag);
}

/**
 * A statement of the side's advertiser and one of its partner, with something payable, as issuing a
 * month stores them, and an adjustment on each account: what the statement routes name and list.
 */
async function accountStatements(t: TestApp, target: Target, advertiser: number, partner: number) {
  const month = target === 'own' ? '2000-01' : '2000-02';
  const statementOf = (kind: 'advertiser' | 'partner', accountId: number) =>
    t.store.insertStatement(
      {
        kind,
        accountId,
        accountName: `${target === 'own' ? 'Own' : 'Foreign'} ${kind}`,
        month,
        periodStart: 0,
        periodEnd: 1,
        currency: 'USD',
        issuedAt: 0,
        issuedBy: 'test',
        subtotalMicros: micros(5),
        adjustmentsMicros: micros(0),
        openingBalanceMicros: micros(0),
        totalMicros: micros(5),
        payableMicros: micros(5),
        carriedForwardMicros: micros(0),
      },
      [],
    );
  for (const [kind, accountId] of [
    ['advertiser', advertiser],
    ['partner', partner],
  ] as const)
    await t.store.addAdjustment({
      kind,
      accountId,
      amountMicros: micros(1),
      reason: `${target} adjustment`,
      createdAt: 0,
      createdBy: 'test',
    });
  return {
    statement: (await statementOf('advertiser', advertiser)).id,
    partnerStatement: (await statementOf('partner', partner)).id,
  };
}

/**
 * One side of the matrix (`own`: advertiser A and partner P; `foreign`: B and Q): the advertiser's
 * campaign, the partner's key and an open flag of it, and the key's plaintext to call with.
 */
async function accountObjects(t: TestApp, target: Target) {
  const name = target === 'own' ? 'Own' : 'Foreign';
  const [campaignId] = await t.addCampaigns([campaign({ title: `${name} campaign` })], `${name} Ads`);
  const advertiser = (await t.campaigns.get(campaignId)).advertiserId;
  const partner = (await t.partners.createPartner(`${name} Partner`)).id;
  const created = await t.partners.createKey(partner, `${name} key`);
  const flag = (await flagKey(t, partner, created.key.id)).id;
  const statements = await accountStatements(t, target, advertiser, partner);
  return {
    ...statements,
    campaign: campaignId,
    advertiser,
    partner,
    key: created.key.id,
    flag,
    plaintext: created.plaintext,
  };
}

/**
 * Both sides of the matrix in `t`: their ids assigned into `objects` (declared before the tests, which
 * read them once set up), and the keys' plaintexts by side.
 */
async function bothSides(t: TestApp, objects: Record<Target, object>): Promise<Record<Target, string>> {
  const plaintexts = { own: '', foreign: '' };
  for (const target of ['own', 'foreign'] as const) {
    const { plaintext, ...ids } = await accountObjects(t, target);
    Object.assign(objects[target], ids);
    plaintexts[target] = plaintext;
  }
  return plaintexts;
}

const CALLERS: Caller[] = (['operator', 'advertiser', 'partner'] as const).flatMap((kind) =>
  (['admin', 'manager', 'reporter'] as const).map((role) => ({ kind, role })),
);

/** Whether the caller may see the object the route names (the operator sees everything). */
function visible(caller: Caller, rule: Rule, target: Target): boolean {
  if (
    caller.kind === 'operator' ||
    rule.owner === null ||
    rule.owner === 'placement' ||
    rule.owner === 'token'
  )
    return true;
  if (rule.owner === 'user' || rule.owner === 'webhook') return target === 'own';
  return rule.owner === caller.kind && target === 'own';
}

/** 404 (not visible), 403 (visible, not allowed), or 'allowed' (anything but 401, 403 and 404). */
export function expected(caller: Caller, rule: Rule, target: Target): 404 | 403 | 200 | 'allowed' {
  if (rule.need === 'token-admin')
    return caller.kind === 'operator' && caller.role === 'admin' ? 'allowed' : 403;
  if (rule.need === 'operator-read') return caller.kind === 'operator' ? 200 : 403;
  if (!visible(caller, rule, target)) return 404;
  if (rule.need === 'read') return 200;
  if (rule.need === 'operator-change' && caller.kind !== 'operator') return 403;
  if (rule.need === 'user-admin') return caller.role === 'admin' ? 'allowed' : 403;
  return caller.role === 'reporter' ? 403 : 'allowed';
}

/** Whether a status answers `want`: 'allowed' takes anything but 401, 403, 404 and a server error. */
const answers = (want: ReturnType<typeof expected>, status: number): boolean =>
  want === 'allowed' ? ![401, 403, 404].includes(status) && status < 500 : status === want;

/** Each caller with the objects it is tried on: its own and another account's (nothing is foreign to the operator). */
function* callerTargets(): Generator<{ caller: Caller; target: Target }> {
  for (const caller of CALLERS)
    for (const target of ['own', 'foreign'] as const)
      if (caller.kind !== 'operator' || target === 'own') yield { caller, target };
}

interface Operation {
  operationId: string;
}
const DOCUMENT = JSON.parse(fs.readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const OPERATIONS = Object.entries(DOCUMENT.paths)
  .filter(([route]) => route.startsWith('/admin/v1'))
  .flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ route, method, id: operation.operationId })),
  );

describe('the scope matrix', () => {
  let t: TestApp;
  /** Each account's objects: `own` are the advertiser A's and the partner P's; `foreign` B's and Q's. */
  const objects = {
    own: {
      ...{ advertiser: 0, campaign: 0, partner: 0, key: 0, flag: 0, statement: 0, partnerStatement: 0 },
      users: {} as Record<Kind, number>,
      webhooks: {} as Record<Kind, number>,
      webhookMessages: {} as Record<Kind, number>,
    },
    foreign: {
      ...{ advertiser: 0, campaign: 0, partner: 0, key: 0, flag: 0, statement: 0, partnerStatement: 0 },
      users: {} as Record<Kind, number>,
      webhooks: {} as Record<Kind, number>,
      webhookMessages: {} as Record<Kind, number>,
    },
  };
  let targetToken = 0;
  const keys: Record<Target, string> = { own: '', foreign: '' };
  const tokens = new Map<string, string>();
  const callerName = (caller: Caller) => `${caller.kind} ${caller.role}`;
  const account = (kind: Kind, target: Target) =>
    kind === 'operator' ? 'operator' : `${kind}:${objects[target][kind]}`;

  beforeAll(async () => {
    t = await createTestApp();
    Object.assign(keys, await bothSides(t, objects));
    for (const target of ['own', 'foreign'] as const) {
      for (const kind of ['operator', 'advertiser', 'partner'] as const) {
        const users = new UserService(t.store, undefined, t.url);
        const email = `${kind}-${target}@matrix.example`;
        objects[target].users[kind] = (
          await users.create({ email, account: account(kind, target), role: 'reporter' })
        ).user.id;
        const webhooks = new WebhookService(t.store);
        const endpoint = await webhooks.create({
          url: `https://hooks.example.com/${kind}-${target}`,
          eventTypes: ['*'],
          account: account(kind, target),
        });
        objects[target].webhooks[kind] = endpoint.id;
        objects[target].webhookMessages[kind] = (await webhooks.sendTest(endpoint.id)).id;
      }
    }
    for (const caller of CALLERS) {
      const scoped = { label: callerName(caller), account: account(caller.kind, 'own'), role: caller.role };
      tokens.set(callerName(caller), (await t.services.tokens.create(scoped)).plaintext);
    }
    targetToken = (await t.services.tokens.create({ label: 'a token to act on' })).token.id;
    // Traffic of each partner on each advertiser's campaign, so reports have rows to leak.
    await t.state.refresh();
    for (const partner of ['own', 'foreign'] as const) {
      for (const advertiser of ['own', 'foreign'] as const) {
        const body = { campaignId: objects[advertiser].campaign, placement: 'header_banner' };
        const answer = await t.request({
          method: 'POST',
          url: '/api/v1/campaigns/impression',
          headers: { authorization: `Bearer ${keys[partner]}`, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        expect(answer.statusCode).toBe(200);
      }
    }
  });
  afterAll(async () => t?.close());

  /** The request for one route as `caller` against `target`'s objects. */
  function requestFor(operation: (typeof OPERATIONS)[number], caller: Caller, target: Target) {
    const own = objects[target];
    const rule = RULES[operation.id];
    const id =
      rule.owner === 'placement'
        ? 'sidebar_top'
        : rule.owner === 'token'
          ? targetToken
          : rule.owner === 'user'
            ? own.users[caller.kind]
            : rule.owner === 'webhook'
              ? (operation.route.startsWith('/admin/v1/webhook-messages/')
                  ? own.webhookMessages
                  : own.webhooks)[caller.kind]
              : operation.id === 'markStatementPaid'
                ? own.partnerStatement
                : operation.route.startsWith('/admin/v1/statements/')
                  ? own.statement
                  : operation.route.startsWith('/admin/v1/flags/')
                    ? own.flag
                    : operation.route.includes('/keys/')
                      ? own.key
                      : operation.route.startsWith('/admin/v1/partners')
                        ? own.partner
                        : operation.route.startsWith('/admin/v1/advertisers')
                          ? own.advertiser
                          : own.campaign;
    const bodies: Record<string, unknown> = {
      createPartner: { name: `Partner by ${callerName(caller)} ${target}` },
      updatePartner: { blockedCategories: ['politics'] },
      createKey: { label: 'made in the matrix' },
      rotateKey: { expiresInHours: 1 },
      suspendKey: { reason: 'matrix' },
      dismissFlag: { note: 'matrix' },
      setFlagPolicy: { multiplier: 3 },
      setKeyLimits: { fetchRate: 50 },
      // A day ahead in every time zone, so the operator's share is taken whatever the hour.
      setRevenueShare: {
        basisPoints: 7000,
        effectiveDate: new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10),
      },
      createAdvertiser: { name: `Advertiser by ${callerName(caller)} ${target}` },
      renameAdvertiser: { name: `Renamed ${target} ${callerName(caller)}` },
      createCampaign: {
        advertiserId: own.advertiser,
        title: 'Matrix campaign',
        destinationUrl: 'https://matrix.example/',
        placements: ['header_banner'],
      },
      // A change the advertiser's people may make: priority and weight are the operator's (below).
      updateCampaign: { countries: ['US', 'CA'] },
      rejectCampaign: { reason: 'matrix' },
      addPlacement: { id: `matrix_${callerName(caller).replace(' ', '_')}_${target}`, description: 'matrix' },
      updatePlacement: { description: 'Sidebar, top' },
      createAdminToken: { label: 'matrix' },
      markStatementPaid: { reference: 'matrix' },
      createWebhook: { url: 'https://hooks.example.com/matrix', eventTypes: ['campaign.approved'] },
      updateWebhook: { description: 'matrix' },
      createUser: {
        email: `new-${callerName(caller).replace(' ', '-')}-${target}@matrix.example`,
        account: account(caller.kind, target),
        role: 'reporter',
      },
    };
    const body = bodies[operation.id] ?? (operation.method === 'get' ? undefined : {});
    return { path: operation.route.replace('/admin/v1', '').replace('{id}', String(id)), body };
  }

  it('has a rule for every management route in the API document', () => {
    expect(OPERATIONS.length).toBeGreaterThan(40);
    expect(OPERATIONS.map((operation) => operation.id).filter((id) => !(id in RULES))).toEqual([]);
  });

  it('answers every route as each role of each account may, for its own objects and for another’s', async () => {
    const wrong: string[] = [];
    for (const { caller, target } of callerTargets()) {
      for (const operation of OPERATIONS) {
        const rule = RULES[operation.id];
        const want = expected(caller, rule, target);
        const { path: url, body } = requestFor(operation, caller, target);
        const answer = await t.admin(
          operation.method.toUpperCase(),
          url,
          body,
          tokens.get(callerName(caller)),
        );
        if (!answers(want, answer.statusCode)) {
          wrong.push(
            `${callerName(caller)} ${target}: ${operation.method.toUpperCase()} ${url} → ${answer.statusCode} (expected ${want}) ${answer.body.slice(0, 120)}`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets only the operator’s people change a campaign’s priority and weight', async () => {
    const wrong: string[] = [];
    for (const { caller, target } of callerTargets()) {
      const want = expected(caller, rule('advertiser', 'operator-change'), target);
      const current = await t.campaigns.get(objects[target].campaign);
      for (const [field, value] of [
        ['priority', current.priority + 1],
        ['weight', current.weight + 1],
      ] as const) {
        const url = `/campaigns/${objects[target].campaign}`;
        const answer = await t.admin('PATCH', url, { [field]: value }, tokens.get(callerName(caller)));
        // By now the matrix has archived the campaign, so the operator's change is a 409, not a 403.
        if (!answers(want, answer.statusCode))
          wrong.push(`${callerName(caller)} ${target}: ${field} → ${answer.statusCode} (expected ${want})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('lets a partner’s own people change the advertisers it blocks, as the operator’s may', async () => {
    const wrong: string[] = [];
    for (const { caller, target } of callerTargets()) {
      const want = expected(caller, rule('partner', 'change'), target);
      const url = `/partners/${objects[target].partner}`;
      const answer = await t.admin('PATCH', url, { blockedAdvertisers: [] }, tokens.get(callerName(caller)));
      if (!answers(want, answer.statusCode))
        wrong.push(
          `${callerName(caller)} ${target}: blockedAdvertisers → ${answer.statusCode} (expected ${want})`,
        );
    }
    expect(wrong).toEqual([]);
  });

  it('lets an advertiser’s people set its campaigns’ price only where the operator allows it (D18)', async () => {
    const wrong: string[] = [];
    const setPricing = async (pricing: 'operator' | 'advertiser') => {
      for (const target of ['own', 'foreign'] as const)
        expect(
          (await t.admin('PATCH', `/advertisers/${objects[target].advertiser}`, { pricing })).statusCode,
        ).toBe(200);
    };
    // Deciding it is the operator's: tried (and put back) as every caller, before the operator does.
    for (const { caller, target } of callerTargets()) {
      const want = expected(caller, rule('advertiser', 'operator-change'), target);
      const url = `/advertisers/${objects[target].advertiser}`;
      const answer = await t.admin('PATCH', url, { pricing: 'advertiser' }, tokens.get(callerName(caller)));
      if (!answers(want, answer.statusCode))
        wrong.push(`${callerName(caller)} ${target}: pricing → ${answer.statusCode} (expected ${want})`);
      await setPricing('operator');
    }
    for (const [pricing, need] of [
      ['operator', 'operator-change'],
      ['advertiser', 'change'],
    ] as const) {
      await setPricing(pricing);
      for (const { caller, target } of callerTargets()) {
        const want = expected(caller, rule('advertiser', need), target);
        const current = await t.campaigns.get(objects[target].campaign);
        const amountMicros = (current.price?.amountMicros ?? 0) + 1_000;
        const url = `/campaigns/${objects[target].campaign}`;
        const price = { model: 'cpm', amountMicros };
        const answer = await t.admin('PATCH', url, { price }, tokens.get(callerName(caller)));
        // By now the matrix has archived the campaign: an allowed change is a 409, not a 403.
        if (!answers(want, answer.statusCode))
          wrong.push(
            `${callerName(caller)} ${target} (pricing ${pricing}): price → ${answer.statusCode} (expected ${want})`,
          );
      }
    }
    await setPricing('operator');
    expect(wrong).toEqual([]);
  });

  it('never lists another account’s objects', async () => {
    const leaks: string[] = [];
    for (const caller of CALLERS.filter((c) => c.kind !== 'operator')) {
      const token = tokens.get(callerName(caller));
      // Users are the admins' (D13): others are refused the list (the matrix checks the 403).
      const lists = ['/partners', '/advertisers', '/campaigns', '/placements', '/statements', '/adjustments'];
      if (caller.role === 'admin') lists.push('/users');
      const own = caller.kind === 'partner' ? [`/partners/${objects.own.partner}/keys`, '/flags'] : [];
      const reports = ['advertiser', 'partner', 'campaign'].map(
        (by) => `/reports?groupBy=${by}&from=2000-01-01T00:00:00Z`,
      );
      for (const url of [...lists, ...own, ...reports]) {
        const answer = await t.admin('GET', url, undefined, token);
        expect(answer.statusCode, `${callerName(caller)} ${url}`).toBe(200);
        if (/Foreign|foreign@/.test(answer.body))
          leaks.push(`${callerName(caller)} ${url}: ${answer.body.slice(0, 200)}`);
        if (url === '/flags') {
          const partners = (answer.json().data as Array<{ partnerId: number }>).map((flag) => flag.partnerId);
          if (partners.length === 0 || partners.some((id) => id !== objects.own.partner))
            leaks.push(`${callerName(caller)} ${url}: ${answer.body.slice(0, 200)}`);
        }
        if (url.startsWith('/reports')) {
          // A partner's report is its own traffic, of any advertiser's campaigns; an advertiser's is
          // its own campaigns', served by any partner. The other account of the same kind never shows.
          const rows = answer.json().data.rows as Array<Record<string, unknown>>;
          const by = url.split('groupBy=')[1].split('&')[0];
          if (rows.length === 0) leaks.push(`${callerName(caller)} ${url}: not even its own traffic`);
          const guarded: Record<string, number> =
            caller.kind === 'partner'
              ? { partner: objects.foreign.partner }
              : { advertiser: objects.foreign.advertiser, campaign: objects.foreign.campaign };
          const foreignId = guarded[by];
          if (foreignId !== undefined && rows.some((row) => row[by] === foreignId))
            leaks.push(`${callerName(caller)} ${url}: ${JSON.stringify(rows)}`);
        }
      }
    }
    expect(leaks).toEqual([]);
  });
});

/**
 * Who may open each page of the dashboard, as docs/dashboard.md gives them ("Pages"): the kinds of
 * account, and the roles when not every role may. Anyone else gets 403 and no link in the menu.
 */
const PAGES: Record<string, { kinds: readonly Kind[]; roles?: readonly Role[] }> = {
  '/review': { kinds: ['operator'] }, // Review queue (the operator)
  '/campaigns': { kinds: ['operator', 'advertiser'] }, // Campaigns (advertisers; the operator sees all)
  '/campaigns/:id': { kinds: ['operator', 'advertiser'] }, // a campaign's page
  '/campaigns/new': { kinds: ['operator', 'advertiser'], roles: ['admin', 'manager'] }, // admins and managers of an advertiser or the operator
  '/campaigns/:id/edit': { kinds: ['operator', 'advertiser'], roles: ['admin', 'manager'] }, // a change: not reporters
  '/campaigns/:id/archive': { kinds: ['operator', 'advertiser'], roles: ['admin', 'manager'] }, // asks before archiving
  '/keys/:id/revoke': { kinds: ['operator', 'partner'], roles: ['admin', 'manager'] }, // asks before revoking
  '/reports': { kinds: ['operator', 'advertiser', 'partner'] }, // Reports (everyone)
  '/reports/figures': { kinds: ['operator', 'advertiser', 'partner'] },
  '/reports.csv': { kinds: ['operator', 'advertiser', 'partner'] },
  '/keys': { kinds: ['operator', 'partner'] }, // API keys (partners; the operator sees every partner's)
  '/flags': { kinds: ['operator', 'partner'] }, // Flags (the operator and partners; advertisers get 403)
  '/placements': { kinds: ['operator', 'partner'] }, // Placements: what partners' servers may ask for
  '/integration': { kinds: ['partner'] }, // Integration (partners)
  '/partners': { kinds: ['operator'] }, // Partners (the operator)
  '/partners/:id/revenue-shares': { kinds: ['operator', 'partner'] }, // a partner's revenue shares
  '/partners/:id/blocks': { kinds: ['operator', 'partner'] }, // Blocks: what a partner never receives
  '/advertisers': { kinds: ['operator'] }, // Advertisers (the operator)
  '/advertisers/:id/budget': { kinds: ['operator', 'advertiser'] }, // an advertiser's budgets
  '/audit': { kinds: ['operator'] }, // Audit log (the operator)
  '/health': { kinds: ['operator'] }, // Health (the operator)
  '/money': { kinds: ['operator'] }, // Money: revenue, payouts and margin (the operator)
  '/money/figures': { kinds: ['operator'] }, // its live part
  '/users': { kinds: ['operator', 'advertiser', 'partner'], roles: ['admin'] }, // Users (admins)
  '/statements': { kinds: ['operator', 'advertiser', 'partner'] }, // Statements (everyone, each their own)
  '/statements/:id': { kinds: ['operator', 'advertiser', 'partner'] }, // a statement
  '/statements/:id.csv': { kinds: ['operator', 'advertiser', 'partner'] },
  '/statements/issue': { kinds: ['operator'], roles: ['admin', 'manager'] }, // asks before issuing a month
  '/adjustments': { kinds: ['operator'] }, // Adjustments (the operator)
  '/webhooks': { kinds: ['operator', 'advertiser', 'partner'] }, // Webhooks (everyone, each their own)
  '/webhooks/:id': { kinds: ['operator', 'advertiser', 'partner'] }, // an endpoint's deliveries
  '/webhooks/:id/secret': { kinds: ['operator', 'advertiser', 'partner'], roles: ['admin', 'manager'] }, // a secret just made, shown once
};

/** The status a HEAD request for `path` gets with the browser's cookies (Fastify answers it with the GET route). */
function headStatus(browser: BrowserClient, path: string): Promise<number> {
  const cookie = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  return new Promise((resolve, reject) => {
    const request = http.request(
      new URL(path, browser.base),
      { method: 'HEAD', headers: { cookie } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

const mayOpenPage = (caller: Caller, route: string): boolean => {
  const page = PAGES[route];
  if (!page) throw new Error(`no rule for ${route} in the test's table of pages`);
  return page.kinds.includes(caller.kind) && (page.roles?.includes(caller.role) ?? true);
};

/** The dashboard's pages and forms, as the same nine kinds of person, signed in (D13, D14). */
describe('the scope matrix of the dashboard', () => {
  let t: TestApp;
  const objects = {
    own: { campaign: 0, key: 0, advertiser: 0, partner: 0, flag: 0, statement: 0, partnerStatement: 0 },
    foreign: { campaign: 0, key: 0, advertiser: 0, partner: 0, flag: 0, statement: 0, partnerStatement: 0 },
  };
  /** Each kind of account's own webhook endpoint (the operator's, advertiser A's, partner P's). */
  const ownWebhooks = {} as Record<Kind, number>;
  const browsers = new Map<string, BrowserClient>();
  const plaintexts = { own: '', foreign: '' };
  const callerName = (caller: Caller) => `${caller.kind} ${caller.role}`;

  type Action = {
    name: string;
    path: (o: (typeof objects)['own']) => string;
    fields?: Record<string, string>;
    rule: Rule;
  };
  /** One form action of the table below (the fields sent with it come last, as few have any). */
  const form = (
    name: string,
    path: Action['path'],
    formRule: Rule,
    fields?: Record<string, string>,
  ): Action => ({
    name,
    path,
    rule: formRule,
    ...(fields === undefined ? {} : { fields }),
  });
  const partnerOperator = rule('partner', 'operator-change');
  const advertiserOperator = rule('advertiser', 'operator-change');
  const campaignFields = { destinationUrl: 'https://matrix.example/', placements: 'header_banner' };

  /** Each form action: its path for a target's objects, its rule, and its fields. */
  const ACTIONS: Action[] = [
    form('create key', () => '/keys', rule('partner', 'change'), { label: 'matrix' }),
    form('rotate key', (o) => `/keys/${o.key}/rotate`, rule('partner', 'change')),
    form('revoke key', (o) => `/keys/${o.key}/revoke`, rule('partner', 'change')),
    ...(['submit', 'pause', 'resume', 'archive'] as const).map((action) =>
      form(`${action} campaign`, (o) => `/campaigns/${o.campaign}/${action}`, rule('advertiser', 'change')),
    ),
    ...(['approve', 'reject'] as const).map((action) =>
      form(`${action} campaign`, (o) => `/campaigns/${o.campaign}/${action}`, advertiserOperator, {
        reason: 'matrix',
      }),
    ),
    form('create campaign', () => '/campaigns/new', rule('advertiser', 'change'), {
      title: 'Matrix',
      ...campaignFields,
    }),
    form('edit campaign', (o) => `/campaigns/${o.campaign}/edit`, rule('advertiser', 'change'), {
      title: 'Edited',
      ...campaignFields,
    }),
    form('invite user', () => '/users', rule('user', 'user-admin'), { email: 'x', role: 'reporter' }),
    form('suspend key', (o) => `/keys/${o.key}/suspend`, partnerOperator, { reason: 'matrix' }),
    form('dismiss flag', (o) => `/flags/${o.flag}/dismiss`, partnerOperator, { note: 'matrix' }),
    form('suspend flag', (o) => `/flags/${o.flag}/suspend`, partnerOperator, { reason: 'matrix' }),
    form('reinstate key', (o) => `/keys/${o.key}/reinstate`, partnerOperator),
    form('create partner', () => '/partners', rule(null, 'operator-change'), {
      name: 'Matrix Partner',
      blockedCategories: 'politics',
    }),
    form('change blocked categories', (o) => `/partners/${o.partner}`, partnerOperator, {
      blockedCategories: 'politics, health',
    }),
    form('block advertiser', (o) => `/partners/${o.partner}/blocks`, rule('partner', 'change'), {
      blockedAdvertisers: '1',
    }),
    form('unblock advertiser', (o) => `/partners/${o.partner}/blocks/unblock`, rule('partner', 'change'), {
      advertiserId: '1',
    }),
    form('set revenue share', (o) => `/partners/${o.partner}/revenue-shares`, partnerOperator, {
      percent: '70',
      effectiveDate: new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10),
    }),
    form('create advertiser', () => '/advertisers', rule(null, 'operator-change'), { name: 'Matrix Ads' }),
    form('rename advertiser', (o) => `/advertisers/${o.advertiser}`, advertiserOperator, {
      name: 'Renamed Ads',
    }),
    form(
      'set advertiser budget',
      (o) => `/advertisers/${o.advertiser}/budget`,
      rule('advertiser', 'change'),
      {
        budgetTotal: '500.00',
        budgetMonthly: '',
      },
    ),
    form('set advertiser pricing', (o) => `/advertisers/${o.advertiser}/pricing`, advertiserOperator, {
      pricing: 'advertiser',
    }),
    // Where the operator has not allowed the advertiser (the form above is undone after each try).
    form('set campaign price', (o) => `/campaigns/${o.campaign}/price`, advertiserOperator, {
      priceModel: 'cpm',
      priceAmount: '1.00',
    }),
    form('add placement', () => '/placements', rule(null, 'operator-change'), {
      id: 'matrix_slot',
      description: 'matrix',
    }),
    ...(['', '/disable', '/enable'] as const).map((action) =>
      form(
        `change placement${action}`,
        () => `/placements/sidebar_top${action}`,
        rule('placement', 'operator-change'),
        {
          description: 'Sidebar, top',
        },
      ),
    ),
  ];

  /** Forms only the operator's admins and managers are shown: anyone else must not see them. */
  const OPERATOR_FORMS = [
    /action="\/keys\/\d+\/(suspend|reinstate)"/,
    /action="\/flags\/\d+\/(dismiss|suspend)"/,
    /action="\/partners/,
    /action="\/advertisers/,
    /action="\/placements/,
  ];

  beforeAll(async () => {
    t = await createTestApp();
    Object.assign(plaintexts, await bothSides(t, objects));
    for (const kind of ['operator', 'advertiser', 'partner'] as const)
      ownWebhooks[kind] = (
        await new WebhookService(t.store).create({
          url: `https://hooks.example.com/${kind}`,
          eventTypes: ['*'],
          account: kind === 'operator' ? 'operator' : `${kind}:${objects.own[kind]}`,
        })
      ).id;
    // Traffic of each partner for each advertiser's campaign, so a report that leaked would show it.
    await t.state.refresh();
    for (const target of ['own', 'foreign'] as const) {
      const tracked = await t.track(
        'impression',
        { campaignId: objects[target].campaign, placement: 'header_banner' },
        { authorization: `Bearer ${plaintexts[target]}` },
      );
      expect(tracked.statusCode).toBe(200);
    }
    for (const caller of CALLERS) {
      const account = caller.kind === 'operator' ? 'operator' : `${caller.kind}:${objects.own[caller.kind]}`;
      const email = `${caller.kind}-${caller.role}@matrix.example`;
      const { link } = await new UserService(t.store, undefined, t.url).create({
        email,
        account,
        role: caller.role,
      });
      const browser = new BrowserClient(t.url);
      const linkPath = new URL(link.url).pathname;
      expect((await browser.submit(linkPath, linkPath, { password: 'violet-harbour-lantern' })).status).toBe(
        303,
      );
      browsers.set(callerName(caller), browser);
    }
  });
  afterAll(async () => t?.close());

  it('shows each page to each person with their own objects only', async () => {
    const wrong: string[] = [];
    for (const caller of CALLERS) {
      const browser = browsers.get(callerName(caller))!;
      const reports = ['campaign', 'advertiser', 'partner'].flatMap((by) =>
        ['/reports', '/reports/figures', '/reports.csv'].map((path) => `${path}?window=hour&breakdown=${by}`),
      );
      for (const page of ['/keys', '/campaigns', '/review', '/users', ...reports]) {
        const answer = await browser.get(page);
        // Breaking figures down by advertiser or partner is the operator's: others get a 400 naming it.
        const byAccount = /breakdown=(advertiser|partner)/.test(page);
        const want = !mayOpenPage(caller, page.split('?')[0])
          ? 403
          : caller.kind !== 'operator' && byAccount
            ? 400
            : 200;
        if (answer.status !== want)
          wrong.push(`${callerName(caller)} ${page} → ${answer.status} (expected ${want})`);
        if (caller.kind !== 'operator' && /Foreign|foreign@/.test(answer.body))
          wrong.push(`${callerName(caller)} ${page} shows another account's objects`);
        const csvByCampaign = page.startsWith('/reports.csv?window=hour&breakdown=campaign');
        const csvCampaigns = csvByCampaign
          ? answer.body
              .split('\r\n')
              .slice(1, -1)
              .map((line) => Number(line.split(',')[1]))
          : [];
        if (caller.kind !== 'operator' && csvCampaigns.includes(objects.foreign.campaign))
          wrong.push(`${callerName(caller)} ${page} counts another advertiser's campaign`);
        if (csvByCampaign && csvCampaigns.length === 0)
          wrong.push(`${callerName(caller)} ${page} shows not even its own traffic`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('shows the operator’s pages to the operator only, the integration page to partners, and their forms to those who may use them', async () => {
    const wrong: string[] = [];
    for (const caller of CALLERS) {
      const browser = browsers.get(callerName(caller))!;
      const operator = caller.kind === 'operator';
      for (const page of [
        '/keys',
        '/partners',
        '/advertisers',
        '/placements',
        '/audit',
        '/health',
        '/money',
        '/money/figures',
        '/integration',
        '/flags',
      ]) {
        const answer = await browser.get(page);
        const want = mayOpenPage(caller, page) ? 200 : 403;
        if (answer.status !== want)
          wrong.push(`${callerName(caller)} ${page} → ${answer.status} (expected ${want})`);
        if (!operator && /Foreign|foreign@/.test(answer.body))
          wrong.push(`${callerName(caller)} ${page} shows another account's objects`);
        const forms = OPERATOR_FORMS.filter((form) => form.test(answer.body));
        if ((!operator || caller.role === 'reporter') && forms.length > 0)
          wrong.push(`${callerName(caller)} ${page} shows the operator's forms ${forms.join(' ')}`);
      }
      // The operator's admins and managers do get them, so the check above can see a form.
      const keys = (await browser.get('/keys')).body;
      if (operator && caller.role !== 'reporter' && !OPERATOR_FORMS[0].test(keys))
        wrong.push(`${callerName(caller)} /keys has no Suspend form`);
    }
    expect(wrong).toEqual([]);
  });

  it('has the test’s table name every page the dashboard serves', () => {
    expect(Object.keys(PAGE_ACCESS).sort()).toEqual(Object.keys(PAGES).sort());
  });

  it('walks every page as every person: the pages they may use open, the others are 403 and never in the menu', async () => {
    const wrong: string[] = [];
    // A statement's page names the caller's own statement: a partner's people read their partner's.
    const url = (route: string, caller: Caller) =>
      route.replace(
        ':id',
        String(
          route.startsWith('/webhooks/')
            ? ownWebhooks[caller.kind]
            : route.startsWith('/keys/')
              ? objects.own.key
              : route.startsWith('/partners/')
                ? objects.own.partner
                : route.startsWith('/statements/')
                  ? objects.own[caller.kind === 'partner' ? 'partnerStatement' : 'statement']
                  : route.startsWith('/advertisers/')
                    ? objects.own.advertiser
                    : objects.own.campaign,
        ),
      ) +
      (route.startsWith('/reports') ? '?window=hour' : '') +
      (route === '/statements/issue' ? '?month=2026-10' : '');
    for (const caller of CALLERS) {
      const browser = browsers.get(callerName(caller))!;
      const allowed = Object.keys(PAGES).filter((route) => mayOpenPage(caller, route));
      for (const route of Object.keys(PAGES)) {
        const answer = await browser.get(url(route, caller));
        const want = allowed.includes(route) ? 200 : 403;
        if (answer.status !== want)
          wrong.push(`${callerName(caller)} ${route} → ${answer.status} (expected ${want})`);
        const head = await headStatus(browser, url(route, caller));
        if (head !== want) wrong.push(`${callerName(caller)} HEAD ${route} → ${head} (expected ${want})`);
        if (route !== '/reports' || answer.status !== 200) continue;
        // The menu links every page of the table without an id that the person may open, and no other.
        const nav = /<nav aria-label="Sections">(.*?)<\/nav>/s.exec(answer.body)?.[1] ?? '';
        const linked = [...nav.matchAll(/href="([^"]+)"/g)].map((match) => match[1]).sort();
        // An advertiser's people also have their own advertiser's budget page, a partner's their blocks.
        const own =
          caller.kind === 'advertiser'
            ? [`/advertisers/${objects.own.advertiser}/budget`]
            : caller.kind === 'partner'
              ? [`/partners/${objects.own.partner}/blocks`]
              : [];
        const menu = [...allowed.filter((page) => !/[:.]|\/(new|figures|issue)$/.test(page)), ...own].sort();
        if (JSON.stringify(linked) !== JSON.stringify(menu))
          wrong.push(`${callerName(caller)} menu links ${linked.join(' ')}; may open ${menu.join(' ')}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('shows a campaign’s own page to whoever may see it, and another’s as missing', async () => {
    const wrong: string[] = [];
    for (const { caller, target } of callerTargets()) {
      const browser = browsers.get(callerName(caller))!;
      for (const page of ['', '/edit']) {
        // A page the person may not use is 403 whatever it names; one they may, 404 for another's.
        const want = mayOpenPage(caller, `/campaigns/:id${page}`)
          ? expected(caller, rule('advertiser', 'read'), target)
          : 403;
        const answer = await browser.get(`/campaigns/${objects[target].campaign}${page}`);
        if (answer.status !== want)
          wrong.push(
            `${callerName(caller)} ${target} campaign${page} page → ${answer.status} (expected ${want})`,
          );
      }
    }
    for (const caller of CALLERS) {
      const form = await browsers.get(callerName(caller))!.get('/campaigns/new');
      const wantForm = mayOpenPage(caller, '/campaigns/new') ? 200 : 403;
      if (form.status !== wantForm)
        wrong.push(`${callerName(caller)} new campaign form → ${form.status} (expected ${wantForm})`);
    }
    expect(wrong).toEqual([]);
  });

  it('names to a partner’s people, on their blocks page, the advertisers of campaigns they may be served and no other', async () => {
    const [draft] = await t.addCampaigns(
      [campaign({ status: 'draft', title: 'Unseen draft' })],
      'Unseen Ads',
    );
    const [approved] = await t.addCampaigns([campaign({ title: 'Seen' })], 'Seen Ads');
    const wrong: string[] = [];
    for (const caller of CALLERS.filter((c) => c.kind !== 'advertiser')) {
      const browser = browsers.get(callerName(caller))!;
      const page = await browser.get(`/partners/${objects.own.partner}/blocks`);
      if (page.status !== 200) wrong.push(`${callerName(caller)} blocks page → ${page.status}`);
      const seen = page.body.includes('Seen Ads');
      const unseen = page.body.includes('Unseen Ads');
      // The operator's people choose among every advertiser; a reporter is shown no choice at all.
      const chooses = caller.role !== 'reporter';
      if (seen !== chooses) wrong.push(`${callerName(caller)} ${seen ? 'sees' : 'misses'} Seen Ads`);
      if (unseen !== (chooses && caller.kind === 'operator'))
        wrong.push(`${callerName(caller)} ${unseen ? 'sees' : 'misses'} Unseen Ads`);
      if (caller.kind === 'partner' && /Foreign Partner/.test(page.body))
        wrong.push(`${callerName(caller)} sees another partner`);
    }
    expect(wrong).toEqual([]);
    expect(draft).not.toBe(approved);
  });

  it('answers every form as each person may, for their own objects and for another’s', async () => {
    const wrong: string[] = [];
    for (const { caller, target } of callerTargets()) {
      const browser = browsers.get(callerName(caller))!;
      for (const action of ACTIONS) {
        // Creating a key and inviting a user act on the person's own account: there is no foreign form.
        if (target === 'foreign' && action.path(objects.own) === action.path(objects.foreign)) continue;
        let want = expected(caller, action.rule, target);
        if (action.name === 'create key' && caller.kind !== 'partner') want = 403;
        if (action.name === 'create campaign' && caller.kind === 'partner') want = 403;
        const fields =
          action.name === 'invite user'
            ? { email: `${caller.kind}-${caller.role}-invited@matrix.example`, role: 'reporter' }
            : action.name === 'create campaign'
              ? // The operator chooses the advertiser; an advertiser's people always create their own.
                { ...action.fields, advertiserId: String(objects[target].advertiser) }
              : (action.fields ?? {});
        const answer = await browser.submit('/users', action.path(objects[target]), fields);
        if (!answers(want, answer.status))
          wrong.push(`${callerName(caller)} ${target}: ${action.name} → ${answer.status} (expected ${want})`);
        // Undone, so the next person's try is a change again, and the price stays the operator's.
        if (action.name === 'set advertiser pricing')
          await t.store.setAdvertiserPricing(objects[target].advertiser, 'operator');
      }
    }
    expect(wrong).toEqual([]);
  });
});
