import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { eachTestWithCampaign, type TestApp, type TestResponse } from './helpers/app.js';
import { committedConformance, DOCUMENT_PATH, type Document } from './helpers/openapi-conformance.js';

describe('the OpenAPI document', () => {
  let t: TestApp;
  let campaignId: number;
  eachTestWithCampaign((ready) => ({ app: t, campaignId } = ready));

  const served = async (): Promise<Document> => {
    const res = await t.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    return res.json() as Document;
  };

  it('is served at /openapi.json and equals the committed docs/openapi.json (run `npm run openapi` when this fails)', async () => {
    const committed = JSON.parse(fs.readFileSync(DOCUMENT_PATH, 'utf8')) as Document;
    expect(await served()).toEqual(committed);
  });

  it('is OpenAPI 3.1 covering the partner API with the contract’s examples, and the management API', async () => {
    const document = await served();
    expect(document.openapi).toBe('3.1.0');
    const fetchOk = document.paths['/api/v1/campaigns/fetch']['get'].responses['200'];
    expect(JSON.stringify(fetchOk)).toContain('#/components/schemas/FetchResponse');
    expect(JSON.stringify(document.components.schemas['FetchResponse'])).toContain('Tech Conference 2025');
    expect(JSON.stringify(document.paths['/api/v1/campaigns/impression'])).toContain(
      'Impression tracked successfully',
    );
    for (const route of [
      '/admin/v1/partners',
      '/admin/v1/campaigns/{id}/pause',
      '/admin/v1/reports',
      '/readyz',
    ]) {
      expect(Object.keys(document.paths)).toContain(route);
    }
  });

  /** A call that must get `status`; every answer is also checked against the document by `request`. */
  const expectStatus = async (call: Promise<TestResponse>, status: number): Promise<TestResponse> => {
    const res = await call;
    expect(res.statusCode, res.body).toBe(status);
    return res;
  };
  const idOf = (res: TestResponse): number => (res.json() as { data: { id: number } }).data.id;
  const partnerCall = (method: string, url: string, headers: Record<string, string>, payload?: string) =>
    t.request({ method, url, headers: { authorization: `Bearer ${t.apiKey}`, ...headers }, payload });

  /** A new campaign, waiting for review unless `draft`, for the actions that need one. */
  const pendingCampaign = async (draft = false): Promise<number> => {
    const advertiser = idOf(await t.admin('POST', '/advertisers', { name: `Advertiser ${Math.random()}` }));
    const created = await t.admin('POST', '/campaigns', {
      advertiserId: advertiser,
      title: 'Reviewed',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
    });
    if (!draft) await expectStatus(t.admin('POST', `/campaigns/${idOf(created)}/submit`), 200);
    return idOf(created);
  };

  it('lists every answer of every operation: each one’s success, and the errors every route can give', async () => {
    const conformance = committedConformance();
    const partner = idOf(await expectStatus(t.admin('POST', '/partners', { name: 'Documented' }), 201));
    const key = idOf(await expectStatus(t.admin('POST', `/partners/${partner}/keys`), 201));
    const advertiser = idOf(await expectStatus(t.admin('POST', '/advertisers', { name: 'Documented' }), 201));

    // The errors every operation shares, driven from the document itself so a new route gets them.
    const oversized = JSON.stringify({ padding: 'x'.repeat(1_100_000) });
    for (const [route, operations] of Object.entries(conformance.document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const verb = method.toUpperCase();
        const numeric = route.includes('{id}') && !route.startsWith('/admin/v1/placements/');
        const url = (id: string) => route.replace('{id}', id);
        const partnerRoute = route.startsWith('/api/v1/');
        const credentials: Record<string, string> = partnerRoute
          ? { authorization: `Bearer ${t.apiKey}` }
          : { authorization: `Bearer ${t.adminToken}` };
        if ((operation.security ?? []).length > 0) {
          await expectStatus(t.request({ method: verb, url: url('1') }), 401);
        }
        if (numeric) {
          await expectStatus(t.request({ method: verb, url: url('abc'), headers: credentials }), 400);
        }
        if (route.includes('{id}') && (verb === 'GET' || operation.requestBody === undefined)) {
          await expectStatus(t.request({ method: verb, url: url('999999'), headers: credentials }), 404);
        }
        if (verb === 'GET' || verb === 'HEAD') {
          if (partnerRoute) await expectStatus(partnerCall(verb, route, {}), 400);
          continue;
        }
        const send = (contentType: string, payload: string) =>
          t.request({
            method: verb,
            url: url(String(key)),
            headers: { ...credentials, 'content-type': contentType },
            payload,
          });
        await expectStatus(send('application/xml', '<hello/>'), 415);
        await expectStatus(send('application/json', oversized), 413);
        await expectStatus(send('application/json', '{"broken"'), 400);
      }
    }

    // Each operation's success, and the statuses particular to some.
    await expectStatus(t.admin('GET', '/partners'), 200);
    await expectStatus(t.admin('GET', `/partners/${partner}`), 200);
    await expectStatus(t.admin('PATCH', `/partners/${partner}`, { name: 'Renamed' }), 200);
    await expectStatus(t.admin('GET', `/partners/${partner}/keys`), 200);
    const shareFrom = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const share = { basisPoints: 7000, effectiveDate: shareFrom };
    await expectStatus(t.admin('POST', `/partners/${partner}/revenue-shares`, share), 201);
    await expectStatus(
      t.admin('POST', `/partners/${partner}/revenue-shares`, { ...share, effectiveDate: '2000-01-01' }),
      422,
    );
    await expectStatus(t.admin('GET', `/partners/${partner}/revenue-shares`), 200);
    // Statements (D18): on a store with no money yet any closed month may be issued; the partner's
    // adjustment makes its statement, which something payable lets be paid, once.
    const adjustment = { kind: 'partner', accountId: partner, amountMicros: 1_000_000, reason: 'docs' };
    await expectStatus(t.admin('POST', '/adjustments', adjustment), 201);
    await expectStatus(t.admin('GET', '/adjustments'), 200);
    await expectStatus(t.admin('GET', '/statement-months'), 200);
    const issued = await expectStatus(t.admin('POST', '/statements', { month: '2000-01' }), 201);
    const statement = (issued.json() as { data: { id: number }[] }).data[0].id;
    await expectStatus(t.admin('POST', '/statements', { month: '2000-01' }), 409);
    await expectStatus(t.admin('GET', '/statements?kind=partner'), 200);
    await expectStatus(t.admin('GET', `/statements/${statement}`), 200);
    await expectStatus(t.admin('GET', `/statements/${statement}?format=csv`), 200);
    await expectStatus(t.admin('POST', `/statements/${statement}/payment`, { reference: 'docs' }), 201);
    await expectStatus(t.admin('POST', `/statements/${statement}/payment`, { reference: 'docs' }), 409);
    await expectStatus(t.admin('GET', `/keys/${key}`), 200);
    const rotated = idOf(await expectStatus(t.admin('POST', `/keys/${key}/rotate`), 201));
    await expectStatus(t.admin('PUT', `/keys/${rotated}/rate-limits`, { fetchRate: 5 }), 200);
    await expectStatus(t.admin('POST', `/keys/${rotated}/suspend`, { reason: 'docs' }), 200);
    await expectStatus(t.admin('POST', `/keys/${rotated}/reinstate`), 200);
    await expectStatus(t.admin('POST', `/keys/${rotated}/revoke`), 200);
    // Key flags (D15), two raised on the test's own key as the flag job raises them.
    const at = new Date().toISOString();
    const evidence = { summary: 'docs', windowStart: at, windowEnd: at, measure: 1, threshold: 0.2 };
    const [first, second] = await Promise.all(
      (['burst', 'clicks without impressions'] as const).map(async (signal) => {
        const raised = await t.store.saveKeyFlag(
          { apiKeyId: key, partnerId: partner, signal, evidence },
          Date.now(),
        );
        return raised.flag.id;
      }),
    );
    await expectStatus(t.admin('GET', '/flags?status=open'), 200);
    await expectStatus(t.admin('GET', `/flags/${first}`), 200);
    await expectStatus(t.admin('POST', `/flags/${first}/dismiss`, { note: 'docs' }), 200);
    await expectStatus(t.admin('POST', `/flags/${second}/suspend`, {}), 200);
    await expectStatus(t.admin('GET', '/flag-policy'), 200);
    await expectStatus(t.admin('PUT', '/flag-policy', { autoSuspend: false }), 200);

    // Webhook endpoints (D19), with a message to read and replay.
    const hookUrl = 'https://hooks.example.com/docs';
    await expectStatus(t.admin('POST', '/webhooks', { url: 'https://10.0.0.1/', eventTypes: ['*'] }), 400);
    const hook = idOf(
      await expectStatus(t.admin('POST', '/webhooks', { url: hookUrl, eventTypes: ['*'] }), 201),
    );
    await expectStatus(t.admin('GET', '/webhooks'), 200);
    await expectStatus(t.admin('GET', `/webhooks/${hook}`), 200);
    await expectStatus(t.admin('PATCH', `/webhooks/${hook}`, { description: 'docs' }), 200);
    await expectStatus(t.admin('POST', `/webhooks/${hook}/rotate-secret`), 200);
    const message = idOf(await expectStatus(t.admin('POST', `/webhooks/${hook}/test`), 200));
    await expectStatus(t.admin('GET', `/webhooks/${hook}/messages`), 200);
    await expectStatus(t.admin('GET', `/webhook-messages/${message}`), 200);
    await expectStatus(t.admin('POST', `/webhook-messages/${message}/replay`), 200);
    await expectStatus(t.admin('POST', `/webhooks/${hook}/disable`), 200);
    await expectStatus(t.admin('POST', `/webhooks/${hook}/disable`), 409);
    await expectStatus(t.admin('POST', `/webhooks/${hook}/enable`), 200);

    await expectStatus(t.admin('GET', '/advertisers'), 200);
    await expectStatus(t.admin('GET', `/advertisers/${advertiser}`), 200);
    await expectStatus(t.admin('PATCH', `/advertisers/${advertiser}`, { name: 'Renamed' }), 200);

    const draft = {
      advertiserId: advertiser,
      title: 'Draft',
      destinationUrl: 'https://advertiser.example/',
      placements: ['header_banner'],
    };
    await expectStatus(t.admin('POST', '/campaigns', { ...draft, destinationUrl: 'ftp://nowhere' }), 422);
    const created = idOf(await expectStatus(t.admin('POST', '/campaigns', draft), 201));
    await expectStatus(t.admin('GET', '/campaigns'), 200);
    await expectStatus(t.admin('GET', `/campaigns/${created}`), 200);
    await expectStatus(t.admin('PATCH', `/campaigns/${created}`, { title: 'Edited' }), 200);
    const price = { model: 'cpm', amountMicros: 2_500_000 };
    await expectStatus(t.admin('PATCH', `/campaigns/${created}`, { price }), 200);
    await expectStatus(t.admin('GET', `/campaigns/${created}/prices`), 200);
    await expectStatus(t.admin('POST', `/campaigns/${created}/approve`), 409);
    await expectStatus(t.admin('POST', `/campaigns/${created}/submit`), 200);
    await expectStatus(t.admin('POST', `/campaigns/${created}/approve`), 200);
    await expectStatus(t.admin('POST', `/campaigns/${created}/pause`), 200);
    await expectStatus(t.admin('POST', `/campaigns/${created}/resume`), 200);
    await expectStatus(t.admin('GET', `/campaigns/${created}/why?placement=header_banner&location=US`), 200);
    await expectStatus(t.admin('POST', `/campaigns/${created}/archive`), 200);
    await expectStatus(
      t.admin('POST', `/campaigns/${await pendingCampaign()}/reject`, { reason: 'docs' }),
      200,
    );

    await expectStatus(t.admin('GET', '/placements'), 200);
    await expectStatus(t.admin('POST', '/placements', { id: 'docs_slot', description: 'Documented' }), 201);
    await expectStatus(t.admin('GET', '/placements/docs_slot'), 200);
    await expectStatus(t.admin('PATCH', '/placements/docs_slot', { description: 'Described' }), 200);
    await expectStatus(t.admin('POST', '/placements/docs_slot/disable'), 200);
    await expectStatus(t.admin('POST', '/placements/docs_slot/enable'), 200);
    await expectStatus(t.admin('GET', '/audit'), 200);

    const token = idOf(
      await expectStatus(t.admin('POST', '/tokens', { label: 'docs', expiresInHours: 1 }), 201),
    );
    await expectStatus(t.admin('GET', '/tokens'), 200);
    await expectStatus(t.admin('GET', `/tokens/${token}`), 200);
    await expectStatus(t.admin('POST', `/tokens/${token}/revoke`), 200);

    const user = idOf(
      await expectStatus(t.admin('POST', '/users', { email: 'docs@example.com', role: 'reporter' }), 201),
    );
    await expectStatus(t.admin('GET', '/users?account=operator'), 200);
    await expectStatus(t.admin('GET', `/users/${user}`), 200);
    await expectStatus(t.admin('POST', `/users/${user}/invite`), 200);
    await expectStatus(t.admin('POST', `/users/${user}/reset`), 200);
    await expectStatus(t.admin('POST', `/users/${user}/disable`), 200);

    const csv = await expectStatus(t.admin('GET', '/reports?groupBy=campaign,country&format=csv'), 200);
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    const accepted = await expectStatus(
      t.request({
        method: 'GET',
        url: '/admin/v1/reports',
        headers: { authorization: `Bearer ${t.adminToken}`, accept: 'text/csv' },
      }),
      200,
    );
    expect(accepted.headers['content-type']).toMatch(/^text\/csv/);
    await expectStatus(t.admin('GET', '/reports?groupBy=campaign,country'), 200);
    await expectStatus(t.admin('GET', '/money/summary'), 200);
    await expectStatus(t.admin('GET', '/money/summary?month=2026-02'), 200);

    await expectStatus(t.request({ method: 'GET', url: '/healthz' }), 200);
    await expectStatus(t.request({ method: 'GET', url: '/readyz' }), 200);
    await expectStatus(
      t.request({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${t.adminToken}` } }),
      200,
    );

    const tracked = JSON.stringify({
      campaignId,
      placement: 'header_banner',
      location: 'US',
      device: 'Mobile',
    });
    const json = { 'content-type': 'application/json' };
    await expectStatus(t.fetch('placement=header_banner&device=TABLET'), 200);
    await expectStatus(partnerCall('HEAD', '/api/v1/campaigns/fetch?placement=header_banner', {}), 200);
    await expectStatus(partnerCall('POST', '/api/v1/campaigns/impression', json, tracked), 200);
    await expectStatus(partnerCall('POST', '/api/v1/campaigns/click', json, tracked), 200);
    const unknown = JSON.stringify({ campaignId: 999_999, placement: 'header_banner' });
    await expectStatus(partnerCall('POST', '/api/v1/campaigns/click', json, unknown), 404);

    // Once shutdown begins, partner calls are refused until the instance is gone.
    t.services.appDeps.shutdown.begin();
    await expectStatus(t.fetch('placement=header_banner'), 503);
    await expectStatus(partnerCall('HEAD', '/api/v1/campaigns/fetch?placement=header_banner', {}), 503);
    await expectStatus(partnerCall('POST', '/api/v1/campaigns/impression', json, tracked), 503);

    const operations = Object.entries(conformance.document.paths).flatMap(([route, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
    );
    const succeeded = [...conformance.seen].filter((answer) => / 2\d\d$/.test(answer));
    const untested = operations.filter(
      (operation) => !succeeded.some((answer) => answer.startsWith(`${operation} `)),
    );
    expect(untested, 'operations this test never saw succeed: add a call for each').toEqual([]);
  });

  it('accepts exactly the requests the document allows, at the bounds of each documented field', async () => {
    const conformance = committedConformance();
    const partner = (await t.admin('GET', `/keys/${t.apiKeyId}`)).json() as { data: { partnerId: number } };
    const newKey = async () => idOf(await t.admin('POST', `/partners/${partner.data.partnerId}/keys`));
    const cases: { method: string; route: string; url: () => Promise<string>; body: unknown }[] = [
      ...[
        undefined,
        {},
        ...[null, 0, 0.5, 720, 720.5, -1, '2'].map((hours) => ({ expiresInHours: hours })),
      ].map((body) => ({
        method: 'POST',
        route: '/admin/v1/keys/{id}/rotate',
        url: async () => `/keys/${await newKey()}/rotate`,
        body,
      })),
      ...[1, 1_000_000, null, 0, 1.5, 1_000_001, '5'].flatMap((value) =>
        ['fetchRate', 'fetchBurst', 'eventsRate', 'eventsBurst'].map((field) => ({
          method: 'PUT',
          route: '/admin/v1/keys/{id}/rate-limits',
          url: async () => `/keys/${t.apiKeyId}/rate-limits`,
          body: { [field]: value },
        })),
      ),
      ...[undefined, { reason: 'off-brand' }, {}, { reason: '  ' }].map((body) => ({
        method: 'POST',
        route: '/admin/v1/campaigns/{id}/reject',
        url: async () => `/campaigns/${await pendingCampaign()}/reject`,
        body,
      })),
      ...['approve', 'pause', 'submit'].map((action) => ({
        method: 'POST',
        route: `/admin/v1/campaigns/{id}/${action}`,
        url: async () => {
          const id = await pendingCampaign(action === 'submit');
          if (action === 'pause') await t.admin('POST', `/campaigns/${id}/approve`);
          return `/campaigns/${id}/${action}`;
        },
        body: undefined,
      })),
    ];
    for (const { method, route, url, body } of cases) {
      const res = await t.admin(method, await url(), body);
      expect(
        res.statusCode < 300,
        `${method} ${route} ${JSON.stringify(body)}: the document ${conformance.acceptsBody(method, route, body) ? 'accepts' : 'refuses'} it, the server answered ${res.statusCode} ${res.body}`,
      ).toBe(conformance.acceptsBody(method, route, body));
    }

    // The document lists the device names in lower case and says that the server takes them in
    // any letter case (JSON Schema has no case-insensitive enum): the server accepts a device
    // exactly when the document accepts it in lower case.
    for (const device of ['mobile', 'MOBILE', 'Tablet', 'deskTop', 'phone', 'tv', '', 'mobile ']) {
      const fetched = await t.fetch(`placement=header_banner&device=${encodeURIComponent(device)}`);
      expect(fetched.statusCode < 300, `fetch device=${device}`).toBe(
        conformance.acceptsQuery('GET', '/api/v1/campaigns/fetch', 'device', device.toLowerCase()),
      );
      const body = { campaignId, placement: 'header_banner', device };
      const tracked = await t.track('impression', body);
      expect(tracked.statusCode < 300, `impression device=${device}`).toBe(
        conformance.acceptsBody('POST', '/api/v1/campaigns/impression', {
          ...body,
          device: device.toLowerCase(),
        }),
      );
    }
    for (const tokens of ['true', 'false', 'TRUE', 'False', '1', '0', 'yes', '']) {
      const fetched = await t.fetch(`placement=header_banner&tokens=${encodeURIComponent(tokens)}`);
      expect(fetched.statusCode < 300, `fetch tokens=${tokens}`).toBe(
        conformance.acceptsQuery('GET', '/api/v1/campaigns/fetch', 'tokens', tokens),
      );
    }
  });

  it('has a browsable page at /docs, with the security headers every HTML page gets', async () => {
    const page = await t.request({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('swagger-ui');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const initializer = await t.request({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.statusCode).toBe(200);
  });
});
