import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestResponse } from '../helpers/app.js';
import { ENGINES } from '../helpers/engines.js';
import { DOCUMENT_PATH } from '../helpers/openapi-conformance.js';
import fs from 'node:fs';

/**
 * Hostile input on every management route, on both engines: NUL characters, a lone surrogate, long
 * text, empty text, numbers with trailing letters, integers past 2^53 and 2^63, negative, fractional
 * and overflowing numbers, wrong JSON types, in path ids, in query parameters and in every body field
 * (nested ones included). Whatever arrives, the answer is below 500, is one the API document
 * describes (the request helper checks that), and an error says what went wrong: a 400 or 422 lists
 * its problems field by field.
 */

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
}
interface Operation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}
const DOCUMENT = JSON.parse(fs.readFileSync(DOCUMENT_PATH, 'utf8')) as Document;

/** Raw JSON text put where a body field's value goes, so that 1e400 reaches the parser as written. */
const HOSTILE_JSON = [
  '"North\\u0000wind"',
  '"\\ud800"',
  `"${'x'.repeat(10_000)}"`,
  '""',
  '"12abc"',
  '9007199254740993',
  '9223372036854775808',
  '-1',
  '1.5',
  '1e400',
  'null',
  'true',
  '[]',
  '{}',
];
/** The same, as they arrive in a path segment or a query parameter (already percent-encoded). */
const HOSTILE_TEXT = [
  'a%00b',
  '%00',
  '%ED%A0%80',
  '%FF',
  'x'.repeat(10_000),
  '',
  '12abc',
  '9007199254740993',
  '9223372036854775808',
  '-1',
  '1.5',
  '1e400',
];

/** Valid bodies, so that a hostile value in one field goes as far into the service as it can. */
const VALID_BODIES: Record<string, Record<string, unknown>> = {
  'POST /admin/v1/partners': { name: 'Partner {n}' },
  'PATCH /admin/v1/partners/{id}': { name: 'Partner {n}' },
  'POST /admin/v1/partners/{id}/keys': { label: 'web' },
  'POST /admin/v1/keys/{id}/rotate': { expiresInHours: 1 },
  'PUT /admin/v1/keys/{id}/rate-limits': { fetchRate: 10, fetchBurst: 20, eventsRate: 10, eventsBurst: 20 },
  'POST /admin/v1/advertisers': { name: 'Advertiser {n}' },
  'PATCH /admin/v1/advertisers/{id}': { name: 'Advertiser {n}' },
  'POST /admin/v1/campaigns': {
    advertiserId: '{advertiser}',
    title: 'Spring',
    destinationUrl: 'https://a.example/',
    placements: ['header_banner'],
  },
  'PATCH /admin/v1/campaigns/{id}': { title: 'Summer' },
  'POST /admin/v1/placements': { id: 'slot_{n}', description: 'A slot' },
  'PATCH /admin/v1/placements/{id}': { description: 'A slot' },
  'POST /admin/v1/tokens': { label: 'fuzz', expiresInHours: 1 },
};

const resolve = (schema: Schema): Schema =>
  schema.$ref ? resolve(DOCUMENT.components.schemas[schema.$ref.split('/').pop()!]) : schema;

/** Where a value can go in a body of this schema: top-level fields, nested fields and array items. */
function fieldPaths(schema: Schema, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const resolved = resolve(schema);
  const variant = [resolved, ...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])].map(resolve);
  const object = variant.find((s) => s.properties);
  const array = variant.find((s) => s.items);
  const here = prefix.length > 0 ? [prefix] : [];
  if (object)
    return [
      ...here,
      ...Object.entries(object.properties!).flatMap(([name, field]) => fieldPaths(field, [...prefix, name])),
    ];
  if (array) return [...here, ...fieldPaths(array.items!, [...prefix, 0])];
  return here;
}

interface Route {
  method: string;
  template: string;
  query: string[];
  fields: Array<Array<string | number>>;
}

const ROUTES: Route[] = Object.entries(DOCUMENT.paths)
  .filter(([template]) => template.startsWith('/admin/v1/'))
  .flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => {
      const schema = operation.requestBody?.content['application/json']?.schema;
      return {
        method: method.toUpperCase(),
        template,
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        fields: schema ? fieldPaths(schema) : [],
      };
    }),
  );

const MARK = 'hostile-value-';

/** Sets `value` at `at` in a copy of `body`, creating objects and arrays on the way. */
function withValue(body: Record<string, unknown>, at: Array<string | number>, value: unknown) {
  const copy = structuredClone(body) as Record<string | number, unknown>;
  let node = copy;
  at.forEach((step, index) => {
    if (index === at.length - 1) node[step] = value;
    else {
      const next = typeof at[index + 1] === 'number' ? [] : {};
      if (typeof node[step] !== 'object' || node[step] === null) node[step] = next;
      node = node[step] as Record<string | number, unknown>;
    }
  });
  return copy;
}

function expectHandled(answer: TestResponse, what: string): void {
  expect(answer.statusCode, what).toBeLessThan(500);
  if (answer.statusCode < 400) return;
  // The request helper has checked the body against the document; here, that it explains itself.
  const body = answer.json() as { status: unknown; message: unknown; problems?: unknown };
  expect(body.status, what).toBe('error');
  expect(typeof body.message === 'string' && body.message.length > 0, what).toBe(true);
  if (answer.statusCode === 400 || answer.statusCode === 422)
    expect(Array.isArray(body.problems), what).toBe(true);
}

describe.each(ENGINES)('hostile management input on %s', (engine) => {
  let t: TestApp;
  /** Ids of objects that exist, so that hostile bodies reach the service, not only the look-up. */
  const existing: Record<string, string> = {};
  let counter = 0;
  beforeAll(async () => {
    t = await createTestApp({ engine });
    const created = async (path: string, body: unknown) =>
      String((await t.admin('POST', path, body)).json().data.id);
    existing['advertisers'] = await created('/advertisers', { name: 'Fuzzed advertiser' });
    existing['campaigns'] = await created('/campaigns', {
      ...VALID_BODIES['POST /admin/v1/campaigns'],
      advertiserId: Number(existing['advertisers']),
    });
    existing['partners'] = await created('/partners', { name: 'Fuzzed partner' });
    existing['keys'] = await created(`/partners/${existing['partners']}/keys`, { label: 'fuzzed' });
    // Not the token the test itself uses: revoking that one would turn every later call into a 401.
    existing['tokens'] = await created('/tokens', { label: 'fuzzed' });
    existing['placements'] = 'header_banner';
  });
  afterAll(() => t.close());

  const pathOf = (route: Route, id?: string) =>
    route.template.slice('/admin/v1'.length).replace('{id}', id ?? existing[route.template.split('/')[3]]);

  /** The route's valid body with the hostile raw JSON `token` at `at`, as JSON text. */
  function bodyText(route: Route, at: Array<string | number> | undefined, token: string): string | undefined {
    const valid = VALID_BODIES[`${route.method} ${route.template}`];
    if (!valid && route.fields.length === 0) return undefined;
    const base = JSON.stringify(valid ?? {})
      .replaceAll('{n}', String(++counter))
      .replace('"{advertiser}"', existing['advertisers']);
    if (!at) return base;
    return JSON.stringify(withValue(JSON.parse(base), at, 'MARK')).replace('"MARK"', token);
  }

  const send = (route: Route, path: string, body: string | undefined) =>
    t.request({
      method: route.method,
      url: `/admin/v1${path}`,
      headers: {
        authorization: `Bearer ${t.adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { payload: body }),
    });

  it.each(ROUTES.filter((route) => route.template.includes('{id}')))(
    '$method $template: hostile ids',
    async (route) => {
      for (const id of HOSTILE_TEXT) {
        const path = pathOf(route, id);
        expectHandled(await send(route, path, bodyText(route, undefined, '')), `${route.method} ${path}`);
      }
    },
  );

  it.each(ROUTES.filter((route) => route.query.length > 0))(
    '$method $template: hostile query parameters',
    async (route) => {
      for (const name of route.query)
        for (const value of HOSTILE_TEXT) {
          const path = `${pathOf(route)}?${name}=${value}`;
          expectHandled(await send(route, path, undefined), `${route.method} ${path.slice(0, 200)}`);
        }
    },
  );

  it.each(ROUTES.filter((route) => route.fields.length > 0))(
    '$method $template: hostile values in every body field',
    async (route) => {
      for (const at of route.fields)
        for (const token of HOSTILE_JSON) {
          const body = bodyText(route, at, token);
          expectHandled(
            await send(route, pathOf(route), body),
            `${route.method} ${at.join('.')}=${token.slice(0, 40)}`,
          );
        }
    },
  );

  // A change of nothing: `{}`, `null`, or no body at all.
  it.each(ROUTES.filter((route) => route.method !== 'GET'))(
    '$method $template: an empty body, null or none',
    async (route) => {
      for (const body of ['{}', 'null', undefined]) {
        const answer = await send(route, pathOf(route), body);
        expectHandled(answer, `${route.method} ${route.template} ${body ?? 'without a body'}`);
      }
    },
  );

  it('several hostile values at once, anywhere (fixed seed)', async () => {
    const withBodies = ROUTES.filter((route) => route.fields.length > 0);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...withBodies),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...HOSTILE_JSON)), { minLength: 1, maxLength: 4 }),
        async (route, picks) => {
          let body = JSON.parse(bodyText(route, undefined, '')!) as Record<string, unknown>;
          const tokens: string[] = [];
          for (const [index, token] of picks) {
            body = withValue(body, route.fields[index % route.fields.length], `${MARK}${tokens.length}`);
            tokens.push(token);
          }
          let text = JSON.stringify(body);
          tokens.forEach((token, i) => {
            text = text.replace(JSON.stringify(`${MARK}${i}`), token);
          });
          expectHandled(
            await send(route, pathOf(route), text),
            `${route.method} ${route.template} ${text.slice(0, 200)}`,
          );
        },
      ),
      { seed: 20261125, numRuns: 300 },
    );
  }, 120_000);
});
