import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { eachTestWithCampaign, type TestApp, type TestResponse } from './helpers/app.js';
import { ROOT } from './helpers/process.js';

const COMMITTED = path.join(ROOT, 'docs/openapi.json');

type Document = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  components: { schemas: Record<string, unknown> };
};

describe('the OpenAPI document', () => {
  let t: TestApp;
  let campaignId: number;
  eachTestWithCampaign((app, id) => {
    t = app;
    campaignId = id;
  });

  const served = async (): Promise<Document> => {
    const res = await t.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    return res.json() as Document;
  };

  it('is served at /openapi.json and equals the committed docs/openapi.json (run `npm run openapi` when this fails)', async () => {
    const committed = JSON.parse(fs.readFileSync(COMMITTED, 'utf8')) as Document;
    expect(await served()).toEqual(committed);
  });

  it('is OpenAPI 3.1 covering the partner API with the contract’s examples, and the management API', async () => {
    const document = await served();
    expect(document.openapi).toBe('3.1.0');
    const fetchOk = document.paths['/api/v1/campaigns/fetch']!['get']!.responses['200']!;
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

  it('describes what the server really answers: responses validate against their documented schemas', async () => {
    const document = await served();
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ ...document, $id: 'placard:openapi' });
    const pointer = (...parts: string[]) =>
      parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const check = (method: string, route: string, res: TestResponse, status = 200) => {
      expect(res.statusCode, `${method} ${route}: ${res.body}`).toBe(status);
      const schemaRef = `placard:openapi#/${pointer('paths', route, method, 'responses', String(res.statusCode), 'content', 'application/json', 'schema')}`;
      expect(
        document.paths[route]?.[method]?.responses[String(res.statusCode)],
        `${method} ${route} ${res.statusCode} is documented`,
      ).toBeDefined();
      const validate = ajv.compile({ $ref: schemaRef });
      const valid = validate(res.json());
      expect(
        valid,
        `${method} ${route} ${res.statusCode}: ${ajv.errorsText(validate.errors)}\n${res.body}`,
      ).toBe(true);
    };

    check('get', '/api/v1/campaigns/fetch', await t.fetch('placement=header_banner'));
    check('get', '/api/v1/campaigns/fetch', await t.fetch(''), 400);
    check('get', '/api/v1/campaigns/fetch', await t.fetch('placement=header_banner', 'wrong'), 401);
    const body = { campaignId, placement: 'header_banner', location: 'US', device: 'mobile' };
    check('post', '/api/v1/campaigns/impression', await t.track('impression', body));
    check('post', '/api/v1/campaigns/click', await t.track('click', body));
    check('post', '/api/v1/campaigns/click', await t.track('click', { ...body, campaignId: 999_999 }), 404);

    check('get', '/admin/v1/partners', await t.admin('GET', '/partners'));
    const partner = await t.admin('POST', '/partners', { name: 'Documented' });
    check('post', '/admin/v1/partners', partner, 201);
    const partnerId = (partner.json() as { data: { id: number } }).data.id;
    const key = await t.admin('POST', `/partners/${partnerId}/keys`, { label: 'docs' });
    check('post', '/admin/v1/partners/{id}/keys', key, 201);
    const keyId = (key.json() as { data: { id: number } }).data.id;
    check('post', '/admin/v1/keys/{id}/rotate', await t.admin('POST', `/keys/${keyId}/rotate`, {}), 201);
    check(
      'put',
      '/admin/v1/keys/{id}/rate-limits',
      await t.admin('PUT', `/keys/${keyId}/rate-limits`, { fetchRate: 5 }),
    );
    check('get', '/admin/v1/campaigns', await t.admin('GET', '/campaigns'));
    check('get', '/admin/v1/campaigns/{id}', await t.admin('GET', `/campaigns/${campaignId}`));
    check(
      'post',
      '/admin/v1/campaigns/{id}/pause',
      await t.admin('POST', `/campaigns/${campaignId}/pause`, { reason: 'docs' }),
    );
    check('get', '/admin/v1/advertisers', await t.admin('GET', '/advertisers'));
    check('get', '/admin/v1/placements', await t.admin('GET', '/placements'));
    check('get', '/admin/v1/placements/{id}', await t.admin('GET', '/placements/nowhere'), 404);
    check('get', '/admin/v1/audit', await t.admin('GET', '/audit'));
    const token = await t.admin('POST', '/tokens', { label: 'docs', expiresInHours: 1 });
    check('post', '/admin/v1/tokens', token, 201);
    const tokenId = (token.json() as { data: { id: number } }).data.id;
    check('get', '/admin/v1/tokens', await t.admin('GET', '/tokens'));
    check('post', '/admin/v1/tokens/{id}/revoke', await t.admin('POST', `/tokens/${tokenId}/revoke`));
    check('get', '/admin/v1/reports', await t.admin('GET', '/reports?groupBy=campaign,country'));
    check('get', '/readyz', await t.request({ method: 'GET', url: '/readyz' }));
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
