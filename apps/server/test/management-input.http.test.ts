import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CampaignService } from '../src/services/campaigns.js';
import { campaign, createTestApp, type TestApp, type TestResponse } from './helpers/app.js';
import { ENGINES } from './helpers/engines.js';

const DOCUMENT = JSON.parse(fs.readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'));

/** Every management operation in the committed API document, with a concrete path. */
function managementOperations(): Array<{ method: string; path: string; lists: boolean }> {
  return Object.entries(DOCUMENT.paths as Record<string, Record<string, unknown>>)
    .filter(([path]) => path.startsWith('/admin/v1/'))
    .flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => ({
        method: method.toUpperCase(),
        // The checks run before any look-up, so the objects need not exist.
        path: path
          .slice('/admin/v1'.length)
          .replace('{id}', path.startsWith('/admin/v1/placements') ? 'header_banner' : '1'),
        lists: method === 'get' && !path.endsWith('{id}'),
      })),
    );
}

const OPERATIONS = managementOperations();
const WRITES = OPERATIONS.filter((operation) => operation.method !== 'GET');
const LISTS = OPERATIONS.filter((operation) => operation.lists);

/** A management API refusal: its status, and the body each one has, naming the fields at fault. */
function expectRefusal(
  answer: TestResponse,
  status: number,
  code: string,
  message: string,
  problems: Array<{ field: string; message: string }> = [],
): void {
  expect(answer.statusCode).toBe(status);
  expect(answer.json()).toEqual({ status: 'error', code, message, problems });
}

interface Operation {
  requestBody?: { content: Record<string, { schema?: { additionalProperties?: unknown } }> };
}

it('documents every management body as refusing the fields it does not name', () => {
  const bodies = Object.entries(DOCUMENT.paths as Record<string, Record<string, Operation>>)
    .filter(([path]) => path.startsWith('/admin/v1/'))
    .flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => {
        const schema = operation.requestBody?.content['application/json']?.schema;
        return schema ? [{ at: `${method} ${path}`, closed: schema.additionalProperties === false }] : [];
      }),
    );
  expect(bodies.length).toBeGreaterThan(15);
  expect(bodies.filter((body) => !body.closed)).toEqual([]);
});

describe.each(ENGINES)('management input on %s', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ engine });
  });
  afterEach(() => t.close());

  const newAdvertiser = async () =>
    (await t.admin('POST', '/advertisers', { name: `Advertiser ${Math.random()}` })).json().data.id as number;

  it.each(WRITES)('$method $path refuses a field it does not know with 422 naming it', async (op) => {
    const answer = await t.admin(op.method, op.path, { imageUrl: 'https://x.example/a.png' });
    expectRefusal(answer, 422, 'unknown_field', 'unknown field: imageUrl', [
      { field: 'imageUrl', message: 'is not a known field' },
    ]);
  });

  it.each(LISTS)('$method $path refuses a query parameter it does not know with 400', async (op) => {
    const answer = await t.admin('GET', `${op.path}?advertiserId=6`);
    expectRefusal(answer, 400, 'unknown_field', 'unknown query parameter: advertiserId', [
      { field: 'advertiserId', message: 'is not a known query parameter' },
    ]);
  });

  it('stores nothing from a campaign with unknown fields, naming each, nested ones by their path', async () => {
    const advertiserId = await newAdvertiser();
    const answer = await t.admin('POST', '/campaigns', {
      advertiserId,
      title: 'Spring',
      destinationUrl: 'https://a.example/',
      placements: ['header_banner'],
      imageUrl: 'https://a.example/x.png',
      bidStrategy: 'lowest-cost',
      caps: { impressionsTotal: 10, monthly: 5 },
    });
    expect(answer.statusCode).toBe(422);
    expect(answer.json().message).toBe('unknown fields: imageUrl, bidStrategy, caps.monthly');
    expect((await t.admin('GET', `/campaigns?advertiser=${advertiserId}`)).json().data).toEqual([]);
    // The filters a route knows still work.
    expect((await t.admin('GET', `/campaigns?advertiser=${advertiserId}&status=draft`)).statusCode).toBe(200);
  });

  it('lists every problem of a campaign in a message readable alone and one by one in problems', async () => {
    const answer = await t.admin('POST', '/campaigns', {
      advertiserId: await newAdvertiser(),
      destinationUrl: 'ftp://a.example/',
      placements: ['header_banner'],
    });
    expect(answer.statusCode).toBe(422);
    expect(answer.json()).toEqual({
      status: 'error',
      code: 'unprocessable',
      message:
        'invalid campaign: title is required: a string of 1 to 200 characters; ' +
        'destinationUrl is required: an absolute http or https URL',
      problems: [
        { field: 'title', message: 'is required: a string of 1 to 200 characters' },
        { field: 'destinationUrl', message: 'is required: an absolute http or https URL' },
      ],
    });
  });

  it('names the field of a 400, and gives an empty list when no one field is at fault', async () => {
    expect((await t.admin('GET', '/partners?limit=0')).json()).toEqual({
      status: 'error',
      code: 'invalid_request',
      message: 'limit must be an integer between 1 and 200',
      problems: [{ field: 'limit', message: 'must be an integer between 1 and 200' }],
    });
    const notJson = await t.request({
      method: 'POST',
      url: '/admin/v1/advertisers',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expectRefusal(notJson, 400, 'invalid_request', 'request body must be a JSON object');
  });

  it('reads a path id and a body before the route runs, answering what cannot be one in the product’s words', async () => {
    const idProblem = {
      status: 'error',
      code: 'invalid_request',
      message: 'id must be a positive integer',
      problems: [{ field: 'id', message: 'must be a positive integer' }],
    };
    for (const path of ['/campaigns/abc', '/partners/0/keys', '/keys/1.5/rotate', '/users/-2/disable']) {
      const method = path.endsWith('keys') || path.startsWith('/campaigns') ? 'GET' : 'POST';
      const answer = await t.admin(method, path);
      expect(answer.statusCode, path).toBe(400);
      expect(answer.json(), path).toEqual(idProblem);
    }
    // Leading zeros name the same record: the id arrives as a number.
    const created = (await t.admin('POST', '/partners', { name: 'Padded' })).json().data as { id: number };
    const padded = await t.admin('GET', `/partners/00${created.id}`);
    expect(padded.json().data).toMatchObject({ id: created.id, name: 'Padded' });

    for (const payload of ['[]', '"Acme"', '7', 'true']) {
      const answer = await t.request({
        method: 'POST',
        url: '/admin/v1/advertisers',
        headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
        payload,
      });
      expect(answer.statusCode, payload).toBe(400);
      expect(answer.json(), payload).toEqual({
        status: 'error',
        code: 'invalid_request',
        message: 'request body must be a JSON object',
        problems: [],
      });
    }
    // No body at all is no fields: a lifecycle action takes it.
    const draft = await t.admin('POST', '/campaigns', {
      advertiserId: await newAdvertiser(),
      title: 'Spring',
      destinationUrl: 'https://a.example/',
      placements: ['header_banner'],
    });
    expect(draft.statusCode, draft.body).toBe(201);
    const submitted = await t.admin('POST', `/campaigns/${draft.json().data.id}/submit`);
    expect(submitted.json().data.status).toBe('pending_review');
  });

  it('answers NUL characters and ids beyond any stored one with the same 400 or 422 as SQLite', async () => {
    const nul = await t.admin('POST', '/advertisers', { name: 'North\u0000wind' });
    expect(nul.statusCode).toBe(400);
    expect(nul.json().problems).toEqual([{ field: 'name', message: 'must not contain the NUL character' }]);
    const inQuery = await t.admin('GET', '/audit?objectType=campaign%00');
    expect(inQuery.json().message).toBe('objectType must not contain the NUL character');
    const inPath = await t.admin('GET', '/placements/header%00banner');
    expect(inPath.json().message).toBe('id must not contain the NUL character');

    const huge = await t.admin('POST', '/campaigns', {
      advertiserId: 2 ** 63,
      title: 'Spring',
      destinationUrl: 'https://a.example/',
    });
    expect(huge.statusCode).toBe(422);
    expect(huge.json().problems).toEqual([{ field: 'advertiserId', message: 'must be an advertiser id' }]);
    const hugeFilter = await t.admin('GET', '/campaigns?advertiser=9223372036854775808');
    expect(hugeFilter.statusCode).toBe(400);
    expect((await t.admin('GET', '/campaigns/9223372036854775808')).statusCode).toBe(400);
  });

  it('answers a path that is not UTF-8, or an id too long to be one, in the management error body', async () => {
    const notUtf8 = await t.admin('GET', '/partners/%FF');
    expectRefusal(
      notUtf8,
      400,
      'invalid_request',
      'the path is not valid: a percent-encoded part is not UTF-8',
    );
    const long = await t.admin('GET', `/campaigns/${'7'.repeat(101)}`);
    expectRefusal(long, 400, 'invalid_request', 'id must be at most 100 characters', [
      { field: 'id', message: 'must be at most 100 characters' },
    ]);
  });

  it('refuses a key label or a reason that is not text instead of storing no label', async () => {
    const partner = (await t.admin('POST', '/partners', { name: `Partner ${Math.random()}` })).json().data;
    for (const label of [7, true, ['a']]) {
      const answer = await t.admin('POST', `/partners/${partner.id}/keys`, { label });
      expect(answer.statusCode).toBe(400);
      expect(answer.json().problems).toEqual([
        { field: 'label', message: 'must be a string of at most 100 characters' },
      ]);
    }
    expect((await t.admin('POST', `/partners/${partner.id}/keys`, { label: 'web' })).statusCode).toBe(201);
    expect((await t.admin('POST', '/campaigns/1/pause', { reason: 5 })).json().problems).toEqual([
      { field: 'reason', message: 'must be a string' },
    ]);
  });
});

describe.each(ENGINES)('import files on %s', (engine) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ engine });
  });
  afterEach(() => t.close());

  it('refuses NUL characters anywhere in an import file, naming each field, and stores nothing', async () => {
    const importing = new CampaignService(t.store).import({
      advertisers: [
        {
          name: 'North\u0000wind',
          campaigns: [campaign({ title: 'Spring\u0000', description: 'Fresh\u0000', status: 'draft' })],
        },
      ],
    });
    await expect(importing).rejects.toMatchObject({
      kind: 'unprocessable',
      problems: [
        { field: 'advertisers[0].name', message: 'must not contain the NUL character' },
        { field: 'advertisers[0].campaigns[0].title', message: 'must not contain the NUL character' },
        { field: 'advertisers[0].campaigns[0].description', message: 'must not contain the NUL character' },
      ],
    });
    expect((await t.admin('GET', '/advertisers')).json().data).toEqual([]);
  });
});

/** Rules answered before anything is stored, so SQLite alone shows them. */
describe('import files and the partner API', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('refuses fields an import file does not know, at every level, naming each by its path', async () => {
    // Approved, so that the running status the helper gives is not a problem of its own.
    const importing = new CampaignService(t.store).import(
      {
        advertisers: [
          { name: 'Imported', colour: 'red', campaigns: [campaign({ imageUrl: 'https://a.example/x.png' })] },
        ],
        version: 2,
      },
      { approve: true },
    );
    await expect(importing).rejects.toMatchObject({
      kind: 'unprocessable',
      message:
        'invalid import file: version is not a known field; advertisers[0].colour is not a known field; ' +
        'advertisers[0].campaigns[0].imageUrl is not a known field',
    });
  });

  it('the partner API keeps the contract error body, without problems, and ignores unknown tracking fields', async () => {
    const bad = await t.track('impression', { campaignId: 0, placement: 'header_banner' });
    expect(bad.json()).toEqual({ status: 'error', message: 'campaignId must be a positive integer' });
    const [id] = await t.addCampaigns([campaign()]);
    const tracked = await t.track('impression', { campaignId: id, placement: 'header_banner', extra: 1 });
    expect(tracked.statusCode).toBe(200);
  });

  describe('JSON nested too deep', () => {
    const nested = (depth: number) => `{"name":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    const TOO_DEEP = 'request body must not nest deeper than 32 levels';

    it('refuses a body nested 2,500 deep with 400 naming the limit on every management write', async () => {
      for (const op of WRITES) {
        const answer = await t.request({
          method: op.method,
          url: `/admin/v1${op.path}`,
          headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
          payload: nested(2_500),
        });
        expect(answer.statusCode, `${op.method} ${op.path}`).toBe(400);
        expect(answer.json()).toEqual({
          status: 'error',
          code: 'invalid_request',
          message: TOO_DEEP,
          problems: [],
        });
      }
    });

    it('reads a body nested 32 deep, and refuses one nested 33 deep', async () => {
      const send = (payload: string) =>
        t.request({
          method: 'POST',
          url: '/admin/v1/advertisers',
          headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
          payload,
        });
      // Brackets inside a string are text, not nesting.
      const atLimit = await send(`{"name":"${'['.repeat(40)}",${nested(32).slice(1)}`);
      expect(atLimit.statusCode).toBe(400);
      expect(atLimit.json().message).not.toBe(TOO_DEEP);
      expect((await send(nested(33))).json().message).toBe(TOO_DEEP);
    });

    it('the partner API answers a tracking body nested too deep with the contract message', async () => {
      const answer = await t.track(
        'impression',
        `{"campaignId":1,"placement":"header_banner","x":${nested(2_500).slice(8, -1)}}`,
      );
      expect(answer.statusCode).toBe(400);
      expect(answer.json()).toEqual({ status: 'error', message: 'request body must be a JSON object' });
    });

    it('the dashboard answers a JSON form nested too deep with 400', async () => {
      const answer = await t.request({
        method: 'POST',
        url: '/sign-in',
        headers: { 'content-type': 'application/json', origin: t.url },
        payload: nested(2_500),
      });
      expect(answer.statusCode).toBe(400);
      expect(answer.body).toContain(TOO_DEEP);
    });
  });
});
