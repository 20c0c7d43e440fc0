import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_FAILURE_POLICY } from '../src/http/auth-failures.js';
import { createTestApp, request, type TestApp } from './helpers/app.js';

/** A GET from a chosen loopback address (Linux routes all of 127/8 to the loopback interface). */
async function getFrom(localAddress: string, url: string, token?: string) {
  const { origin, pathname, search } = new URL(url);
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  const response = await request(origin, { method: 'GET', url: pathname + search, headers, localAddress });
  return { status: response.statusCode, retryAfter: response.headers['retry-after'] };
}

describe('failed authentication on the management API', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A clock that stands still: no bucket refills between requests, however slow the machine.
    const now = Date.now();
    t = await createTestApp({ clock: () => now });
  });
  afterAll(() => t.close());

  const wrong = `pla_${'x'.repeat(40)}`;

  it('is limited per client address: 401 for a burst, then 429 with Retry-After', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < AUTH_FAILURE_POLICY.burst; i++)
      statuses.push((await getFrom('127.0.0.1', `${t.url}/admin/v1/partners`, wrong)).status);
    expect(statuses.every((status) => status === 401)).toBe(true);
    const limited = await getFrom('127.0.0.1', `${t.url}/admin/v1/partners`, wrong);
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    // /metrics takes an admin token too, and shares the limit.
    expect((await getFrom('127.0.0.1', `${t.url}/metrics`, wrong)).status).toBe(429);
  });

  it('never limits a valid token, even from the limited address', async () => {
    expect((await getFrom('127.0.0.1', `${t.url}/admin/v1/partners`, t.adminToken)).status).toBe(200);
  });

  it('keeps other addresses apart: a second client still gets 401', async () => {
    expect((await getFrom('127.0.0.2', `${t.url}/admin/v1/partners`, wrong)).status).toBe(401);
  });

  it('shares the count with the partner API: a client limited on one is limited on the other', async () => {
    const fetched = await getFrom(
      '127.0.0.1',
      `${t.url}/api/v1/campaigns/fetch?placement=header_banner`,
      wrong,
    );
    expect(fetched.status).toBe(429);
  });

  it('does not count requests that present no credential at all: they guess nothing', async () => {
    const statuses = new Set<number>();
    for (let i = 0; i < AUTH_FAILURE_POLICY.burst * 2; i++)
      statuses.add((await getFrom('127.0.0.3', `${t.url}/admin/v1/partners`)).status);
    expect([...statuses]).toEqual([401]);
  });
});
