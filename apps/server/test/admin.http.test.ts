import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../src/domain/api-keys.js';
import { CAMPAIGN_STATUSES } from '../src/domain/campaigns.js';
import { campaign, createTestApp, inStatus, type TestApp } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

let t: TestApp;
let now: number;
const HOUR = 3_600_000;
beforeEach(async () => {
  now = Date.parse('2026-06-01T12:00:00Z');
  t = await createTestApp({ clock: () => now });
});
afterEach(() => t.close());

/** Creates an advertiser and a draft campaign through the API; returns the campaign id. */
async function draft(fields: Record<string, unknown> = {}): Promise<number> {
  const advertiser = await t.admin('POST', '/advertisers', { name: `Advertiser ${Math.random()}` });
  expect(advertiser.statusCode).toBe(201);
  const created = await t.admin('POST', '/campaigns', {
    advertiserId: advertiser.json().data.id,
    title: 'Managed',
    destinationUrl: 'https://managed.example/',
    placements: ['header_banner'],
    ...fields,
  });
  expect(created.statusCode).toBe(201);
  expect(created.json().data.status).toBe('draft');
  return created.json().data.id;
}

const act = (id: number, action: string, body: unknown = {}) =>
  t.admin('POST', `/campaigns/${id}/${action}`, body);
const served = async (query = 'placement=header_banner') =>
  (await t.fetch(query)).json().data.map((c: { id: number }) => c.id) as number[];

describe('admin authentication', () => {
  const get = (url: string, authorization?: string) =>
    t.request({ method: 'GET', url, headers: authorization ? { authorization } : {} });

  it('answers 401 without a token, with a wrong one, and with a malformed or unknown key, saying nothing more', async () => {
    for (const authorization of [
      undefined,
      'Bearer pla_' + 'x'.repeat(40),
      `Bearer ${t.apiKey.slice(0, -1)}${t.apiKey.endsWith('a') ? 'b' : 'a'}`,
      'Bearer plc_not-a-key',
      'Basic abc',
    ]) {
      const res = await get('/admin/v1/partners', authorization);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ status: 'error', code: 'unauthorized', message: 'unauthorized' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('tells a caller with a partner key that the route takes an admin token, still with 401', async () => {
    for (const key of [t.apiKey, generateApiKey().plaintext]) {
      for (const url of ['/admin/v1/partners', '/metrics']) {
        const res = await get(url, `Bearer ${key}`);
        expect(res.statusCode).toBe(401);
        // The management API names the case by its code; /metrics answers the bare error body.
        expect(res.json()).toEqual({
          status: 'error',
          ...(url.startsWith('/admin/') && { code: 'wrong_credential' }),
          message: 'unauthorized: this route takes an admin token (pla_...), not a partner API key',
        });
        expect(res.headers['www-authenticate']).toBe(
          'Bearer error="invalid_token", error_description="this route takes an admin token (pla_...), not a partner API key"',
        );
      }
    }
  });
});

describe('campaign lifecycle through the API (D11)', () => {
  it('allows exactly the transitions of D11 and refuses every other with 409', async () => {
    const statuses = CAMPAIGN_STATUSES;
    const allowed: Record<string, Record<string, string>> = {
      submit: { draft: 'pending_review' },
      approve: { pending_review: 'running' },
      reject: { pending_review: 'rejected' },
      pause: { running: 'paused', scheduled: 'paused' },
      resume: { paused: 'running' },
      archive: Object.fromEntries(statuses.filter((s) => s !== 'archived').map((s) => [s, 'archived'])),
    };
    for (const [action, moves] of Object.entries(allowed)) {
      // One campaign per starting state, imported directly in that state.
      const ids = await t.addCampaigns(statuses.map((status) => campaign(inStatus(status, now))));
      for (const [i, from] of statuses.entries()) {
        const res = await act(ids[i], action, { reason: 'because' });
        const expected = moves[from];
        if (expected) {
          expect(res.statusCode, `${action} from ${from}`).toBe(200);
          expect(res.json().data.status).toBe(expected);
        } else {
          expect(res.statusCode, `${action} from ${from}`).toBe(409);
          expect(res.json().message).toBe(`cannot ${action} a campaign that is ${from}`);
        }
      }
    }
  });

  it('runs a campaign from draft to archived, serving it only while running', async () => {
    const id = await draft();
    expect(await served()).not.toContain(id);
    expect((await act(id, 'submit')).json().data.status).toBe('pending_review');
    expect((await act(id, 'approve')).json().data.status).toBe('running');
    expect(await served()).toContain(id);
    expect((await act(id, 'pause')).json().data.status).toBe('paused');
    expect(await served()).not.toContain(id);
    expect((await act(id, 'resume')).json().data.status).toBe('running');
    expect(await served()).toContain(id);
    expect((await act(id, 'archive')).json().data.status).toBe('archived');
    expect(await served()).not.toContain(id);
  });

  it('refuses a transition with 409 naming the current state', async () => {
    const id = await draft();
    for (const action of ['approve', 'reject', 'pause', 'resume']) {
      const res = await act(id, action, { reason: 'x' });
      expect(res.statusCode).toBe(409);
      expect(res.json()).toEqual({
        status: 'error',
        code: 'conflict',
        message: `cannot ${action} a campaign that is draft`,
      });
    }
    await act(id, 'archive');
    expect((await act(id, 'submit')).json().message).toBe('cannot submit a campaign that is archived');
    expect((await t.admin('PATCH', `/campaigns/${id}`, { priority: 3 })).statusCode).toBe(409);
  });

  it('rejects with a reason, and an edit sends the campaign back to draft', async () => {
    const id = await draft();
    await act(id, 'submit');
    expect((await act(id, 'reject')).statusCode).toBe(400);
    const rejected = (await act(id, 'reject', { reason: 'landing page is broken' })).json().data;
    expect(rejected).toMatchObject({ status: 'rejected', rejectionReason: 'landing page is broken' });
    const edited = await t.admin('PATCH', `/campaigns/${id}`, {
      destinationUrl: 'https://managed.example/fixed',
    });
    expect(edited.json().data.status).toBe('draft');
  });

  it('sends an approved campaign back to review when its creative changes, not its targeting', async () => {
    const id = await draft();
    await act(id, 'submit');
    await act(id, 'approve');
    const retargeted = await t.admin('PATCH', `/campaigns/${id}`, { countries: ['US'], priority: 4 });
    expect(retargeted.json().data).toMatchObject({ status: 'running', countries: ['US'], priority: 4 });
    const retitled = await t.admin('PATCH', `/campaigns/${id}`, { title: 'New words' });
    expect(retitled.json().data.status).toBe('pending_review');
    expect(await served('placement=header_banner&location=US')).not.toContain(id);
  });

  it('refuses status in an edit, unknown fields and invalid values', async () => {
    const id = await draft();
    expect((await t.admin('PATCH', `/campaigns/${id}`, { status: 'running' })).json().message).toBe(
      'status changes through actions: submit, approve, reject, pause, resume, archive',
    );
    const unknown = await t.admin('PATCH', `/campaigns/${id}`, { color: 'red', title: 'Fine' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json()).toEqual({
      status: 'error',
      code: 'unknown_field',
      message: 'unknown field: color',
      problems: [{ field: 'color', message: 'is not a known field' }],
    });
    const bad = await t.admin('PATCH', `/campaigns/${id}`, {
      destinationUrl: 'ftp://x',
      timeZone: 'Mars/Base',
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toEqual({
      status: 'error',
      code: 'unprocessable',
      message:
        `invalid change to campaign ${id}: destinationUrl is required: an absolute http or https URL; ` +
        'timeZone must be an IANA time zone such as "Europe/Paris"',
      problems: [
        { field: 'destinationUrl', message: 'is required: an absolute http or https URL' },
        { field: 'timeZone', message: 'must be an IANA time zone such as "Europe/Paris"' },
      ],
    });
  });

  it('approves into scheduled when the start is ahead, and the clock starts and ends it', async () => {
    const { LifecycleJob } = await import('../src/jobs/lifecycle-job.js');
    const pino = (await import('pino')).default;
    const job = new LifecycleJob(t.store, pino({ level: 'silent' }), 1000, () => now);
    const id = await draft({
      startAt: new Date(now + HOUR).toISOString(),
      endAt: new Date(now + 2 * HOUR).toISOString(),
    });
    await act(id, 'submit');
    expect((await act(id, 'approve')).json().data.status).toBe('scheduled');
    expect(await job.runOnce()).toBe(0);
    now += HOUR;
    expect(await job.runOnce()).toBe(1);
    await t.state.refresh();
    expect(await served()).toContain(id);
    now += HOUR;
    expect(await served()).not.toContain(id);
    expect(await job.runOnce()).toBe(1);
    expect((await t.admin('GET', `/campaigns/${id}`)).json().data.status).toBe('completed');
    const trail = (await t.admin('GET', `/audit?objectType=campaign&objectId=${id}`)).json().data;
    expect(trail.map((e: { action: string; actor: string }) => `${e.actor} ${e.action}`)).toEqual([
      expect.stringMatching(/^admin:\d+ create$/),
      expect.stringMatching(/^admin:\d+ submit$/),
      expect.stringMatching(/^admin:\d+ approve$/),
      'system start',
      'system complete',
    ]);
  });
});

describe('keys (D6)', () => {
  async function newKey() {
    const partner = (await t.admin('POST', '/partners', { name: `Partner ${Math.random()}` })).json().data;
    const created = await t.admin('POST', `/partners/${partner.id}/keys`, { label: 'web' });
    expect(created.statusCode).toBe(201);
    return { partner, ...created.json().data } as {
      partner: { id: number };
      id: number;
      key: string;
      prefix: string;
    };
  }
  const fetchWith = async (key: string) => (await t.fetch('placement=header_banner', key)).statusCode;

  it('shows the plaintext once, and listings only the prefix', async () => {
    const created = await newKey();
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(200);
    const listed = await t.admin('GET', `/partners/${created.partner.id}/keys`);
    expect(listed.body).not.toContain(created.key);
    expect(listed.json().data[0]).toMatchObject({
      id: created.id,
      prefix: created.prefix,
      status: 'active',
      label: 'web',
    });
  });

  it('rotates: the old key works until its expiry, the new one at once', async () => {
    const created = await newKey();
    const rotated = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 2 });
    expect(rotated.statusCode).toBe(201);
    const { key: newKeyText, previous } = rotated.json().data;
    expect(previous.expiresAt).toBe(new Date(now + 2 * HOUR).toISOString());
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(200);
    expect(await fetchWith(newKeyText)).toBe(200);
    now += 2 * HOUR;
    expect(await fetchWith(created.key)).toBe(401);
    expect(await fetchWith(newKeyText)).toBe(200);
  });

  it('lists a rotated-out key as expired once it answers 401, and never rotates it back to life', async () => {
    const created = await newKey();
    const rotated = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 0 });
    expect(rotated.json().data.previous.status).toBe('expired');
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(401);
    const listed = (await t.admin('GET', `/partners/${created.partner.id}/keys`)).json().data;
    expect(listed.map((k: { id: number; status: string }) => [k.id, k.status])).toEqual([
      [created.id, 'expired'],
      [rotated.json().data.id, 'active'],
    ]);
    expect((await t.admin('GET', `/keys/${created.id}`)).json().data.status).toBe('expired');

    const again = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 24 });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe('cannot rotate an api key that is expired');
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(401);
    const suspend = await t.admin('POST', `/keys/${created.id}/suspend`, { reason: 'late' });
    expect(suspend.json().message).toBe('cannot suspend an api key that is expired');
    const revoked = await t.admin('POST', `/keys/${created.id}/revoke`);
    expect(revoked.json().data.status).toBe('revoked');
  });

  it('refuses to rotate a key again while its replacement overlaps it', async () => {
    const created = await newKey();
    expect((await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 2 })).statusCode).toBe(201);
    const again = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 24 });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(
      `api key ${created.id} was already rotated and stops working at ${new Date(now + 2 * HOUR).toISOString()}; rotate its replacement instead`,
    );
    expect((await t.admin('GET', `/keys/${created.id}`)).json().data.expiresAt).toBe(
      new Date(now + 2 * HOUR).toISOString(),
    );
  });

  it('refuses to rotate a suspended or revoked key: a replacement would bring a key the operator stopped back to life', async () => {
    const created = await newKey();
    await t.admin('POST', `/keys/${created.id}/suspend`, { reason: 'click fraud' });
    const suspended = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 2 });
    expect(suspended.statusCode).toBe(409);
    expect(suspended.json().message).toBe('cannot rotate an api key that is suspended');
    await t.admin('POST', `/keys/${created.id}/revoke`);
    const revoked = await t.admin('POST', `/keys/${created.id}/rotate`, { expiresInHours: 2 });
    expect(revoked.statusCode).toBe(409);
    expect(revoked.json().message).toBe('cannot rotate an api key that is revoked');
    const keys = (await t.admin('GET', `/partners/${created.partner.id}/keys`)).json().data;
    expect(keys.map((key: { id: number; status: string }) => [key.id, key.status])).toEqual([
      [created.id, 'revoked'],
    ]);
  });

  it('revokes, suspends and reinstates, refusing moves that make no sense', async () => {
    const created = await newKey();
    await t.state.refresh();
    expect((await t.admin('POST', `/keys/${created.id}/suspend`, {})).statusCode).toBe(400);
    const suspended = await t.admin('POST', `/keys/${created.id}/suspend`, { reason: 'click fraud' });
    expect(suspended.json().data).toMatchObject({ status: 'suspended', suspendedReason: 'click fraud' });
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(403);
    expect((await t.admin('POST', `/keys/${created.id}/reinstate`)).json().data.status).toBe('active');
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(200);
    expect((await t.admin('POST', `/keys/${created.id}/revoke`)).json().data.status).toBe('revoked');
    await t.state.refresh();
    expect(await fetchWith(created.key)).toBe(401);
    for (const action of ['revoke', 'reinstate', 'rotate']) {
      const res = await t.admin('POST', `/keys/${created.id}/${action}`, {});
      expect(res.statusCode).toBe(409);
    }
    expect((await t.admin('POST', '/keys/999999/revoke')).statusCode).toBe(404);
  });

  it('shows when a key was last used', async () => {
    const created = await newKey();
    await t.state.refresh();
    expect((await t.admin('GET', `/keys/${created.id}`)).json().data.lastUsedAt).toBeNull();
    expect(await fetchWith(created.key)).toBe(200);
    await t.services.keyUsage.flush();
    expect((await t.admin('GET', `/keys/${created.id}`)).json().data.lastUsedAt).toBe(
      new Date(now).toISOString(),
    );
  });

  it('stores per-key rate limits and validates them', async () => {
    const created = await newKey();
    const set = await t.admin('PUT', `/keys/${created.id}/rate-limits`, { fetchRate: 5, fetchBurst: 10 });
    expect(set.json().data.rateLimits).toEqual({
      fetchRate: 5,
      fetchBurst: 10,
      eventsRate: null,
      eventsBurst: null,
    });
    expect((await t.admin('PUT', `/keys/${created.id}/rate-limits`, { fetchRate: 0 })).statusCode).toBe(400);
    const unknown = await t.admin('PUT', `/keys/${created.id}/rate-limits`, { speed: 1 });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().message).toBe('unknown field: speed');
  });
});

describe.each(ENGINES)('per-key rate limits on %s (D7)', (engine) => {
  let app: TestApp;
  beforeEach(async () => {
    // A clock that stands still: no bucket refills between the requests, however slow the machine.
    const frozen = Date.parse('2026-06-01T12:00:00Z');
    app = await createTestApp({ engine, clock: () => frozen });
  });
  afterEach(() => app.close());

  it('changes only the limits given: the others keep their value, null restores the default', async () => {
    const limits = (body: unknown) => app.admin('PUT', `/keys/${app.apiKeyId}/rate-limits`, body);
    await limits({ fetchRate: 5, fetchBurst: 10, eventsRate: null, eventsBurst: null });
    const events = await limits({ eventsRate: 10 });
    expect(events.statusCode).toBe(200);
    expect(events.json().data.rateLimits).toEqual({
      fetchRate: 5,
      fetchBurst: 10,
      eventsRate: 10,
      eventsBurst: null,
    });
    expect((await limits({ fetchRate: null })).json().data.rateLimits).toEqual({
      fetchRate: null,
      fetchBurst: 10,
      eventsRate: 10,
      eventsBurst: null,
    });
    expect((await limits({})).json().data.rateLimits).toEqual({
      fetchRate: null,
      fetchBurst: 10,
      eventsRate: 10,
      eventsBurst: null,
    });
    await app.state.refresh();
    // The kept burst is what the serving key uses: the eleventh fetch at once is refused.
    const answers = [];
    for (let i = 0; i < 11; i++) answers.push((await app.fetch('placement=header_banner')).statusCode);
    expect(answers.filter((status) => status === 429)).toHaveLength(1);
  });
});

describe('partners', () => {
  it('creates, refuses duplicates, pages through the list with cursors', async () => {
    for (let i = 0; i < 4; i++)
      expect((await t.admin('POST', '/partners', { name: `P${i}` })).statusCode).toBe(201);
    expect((await t.admin('POST', '/partners', { name: 'P1' })).statusCode).toBe(409);
    const first = (await t.admin('GET', '/partners?limit=2')).json();
    expect(first.data).toHaveLength(2);
    const second = (await t.admin('GET', `/partners?limit=2&cursor=${first.nextCursor}`)).json();
    const third = (await t.admin('GET', `/partners?limit=2&cursor=${second.nextCursor}`)).json();
    // The test partner plus four: 2 + 2 + 1, and the last page says so.
    expect([...first.data, ...second.data, ...third.data].map((p: { name: string }) => p.name)).toEqual([
      'Test Partner',
      'P0',
      'P1',
      'P2',
      'P3',
    ]);
    expect(third.nextCursor).toBeNull();
    expect((await t.admin('GET', '/partners?limit=0')).statusCode).toBe(400);
    expect((await t.admin('GET', '/partners?cursor=%%%')).statusCode).toBe(400);
  });

  it('never serves a blocked category to that partner', async () => {
    const [politics, sports] = await t.addCampaigns([
      campaign({ category: 'politics' }),
      campaign({ category: 'sports' }),
    ]);
    expect(await served()).toEqual(expect.arrayContaining([politics, sports]));
    const partnerId = (await t.partners.findPartner('Test Partner')).id;
    const blocked = await t.admin('PATCH', `/partners/${partnerId}`, { blockedCategories: ['politics'] });
    expect(blocked.json().data.blockedCategories).toEqual(['politics']);
    await t.state.refresh();
    for (let i = 0; i < 20; i++) expect(await served()).toEqual([sports]);
    const tracked = await t.track('click', { campaignId: politics, placement: 'header_banner' });
    expect(tracked.statusCode).toBe(404);
  });
});

describe('placements (D1)', () => {
  it('lists the 15, adds one, and disables and enables one for fetch', async () => {
    expect((await t.admin('GET', '/placements')).json().data).toHaveLength(15);
    expect(
      (await t.admin('POST', '/placements', { id: 'video_preroll', description: 'before a video' }))
        .statusCode,
    ).toBe(201);
    expect(
      (await t.admin('POST', '/placements', { id: 'video_preroll', description: 'again' })).statusCode,
    ).toBe(409);
    expect((await t.admin('POST', '/placements', { id: 'Bad Id', description: 'x' })).statusCode).toBe(400);
    await t.state.refresh();
    expect((await t.fetch('placement=video_preroll')).statusCode).toBe(200);

    expect((await t.admin('POST', '/placements/header_banner/disable')).json().data.enabled).toBe(false);
    await t.state.refresh();
    expect((await t.fetch('placement=header_banner')).json()).toEqual({
      status: 'error',
      message: 'unknown placement: header_banner',
    });
    await t.admin('POST', '/placements/header_banner/enable');
    await t.state.refresh();
    expect((await t.fetch('placement=header_banner')).statusCode).toBe(200);
    const described = await t.admin('PATCH', '/placements/header_banner', {
      description: 'top of every page',
    });
    expect(described.json().data).toEqual({
      id: 'header_banner',
      description: 'top of every page',
      enabled: true,
    });
  });
});

describe('audit log', () => {
  it('records who, what, before and after, and why, for every kind of change', async () => {
    const partner = (await t.admin('POST', '/partners', { name: 'Audited' })).json().data;
    await t.admin('PATCH', `/partners/${partner.id}`, { name: 'Audited Ltd' });
    const key = (await t.admin('POST', `/partners/${partner.id}/keys`, {})).json().data;
    await t.admin('POST', `/keys/${key.id}/suspend`, { reason: 'odd clicks' });
    await t.admin('POST', '/placements/interstitial/disable');
    const advertiser = (await t.admin('POST', '/advertisers', { name: 'Audited Ads' })).json().data;

    const partnerTrail = (await t.admin('GET', `/audit?objectType=partner&objectId=${partner.id}`)).json()
      .data;
    expect(partnerTrail).toEqual([
      expect.objectContaining({
        action: 'create',
        before: null,
        after: expect.objectContaining({ name: 'Audited' }),
      }),
      expect.objectContaining({
        action: 'update',
        actor: expect.stringMatching(/^admin:\d+$/),
        before: expect.objectContaining({ name: 'Audited' }),
        after: expect.objectContaining({ name: 'Audited Ltd' }),
        at: new Date(now).toISOString(),
      }),
    ]);
    const keyTrail = (await t.admin('GET', `/audit?objectType=api_key&objectId=${key.id}`)).json().data;
    expect(keyTrail.map((e: { action: string }) => e.action)).toEqual(['create', 'suspend']);
    expect(keyTrail[1]).toMatchObject({
      reason: 'odd clicks',
      before: { status: 'active' },
      after: { status: 'suspended' },
    });
    expect(JSON.stringify(keyTrail)).not.toContain(key.key);
    const placementTrail = (await t.admin('GET', '/audit?objectType=placement&objectId=interstitial')).json()
      .data;
    expect(placementTrail[0]).toMatchObject({
      action: 'disable',
      before: { enabled: true },
      after: { enabled: false },
    });
    const advertiserTrail = (
      await t.admin('GET', `/audit?objectType=advertiser&objectId=${advertiser.id}`)
    ).json().data;
    expect(advertiserTrail[0]).toMatchObject({ action: 'create' });
  });

  it('gives the latest entries first with order=newest, paging towards older ones', async () => {
    const partner = (await t.admin('POST', '/partners', { name: 'Renamed' })).json().data;
    for (const name of ['Renamed 1', 'Renamed 2', 'Renamed 3'])
      await t.admin('PATCH', `/partners/${partner.id}`, { name });
    const trail = `/audit?objectType=partner&objectId=${partner.id}`;
    const names = (page: { data: Array<{ after: { name: string } }> }) => page.data.map((e) => e.after.name);

    expect(names((await t.admin('GET', `${trail}&limit=2`)).json())).toEqual(['Renamed', 'Renamed 1']);
    const newest = (await t.admin('GET', `${trail}&limit=2&order=newest`)).json();
    expect(names(newest)).toEqual(['Renamed 3', 'Renamed 2']);
    const older = (await t.admin('GET', `${trail}&limit=2&order=newest&cursor=${newest.nextCursor}`)).json();
    expect(names(older)).toEqual(['Renamed 1', 'Renamed']);

    const refused = await t.admin('GET', `${trail}&order=latest`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('order must be oldest or newest');
  });
});
