import http from 'node:http';
import { HIGHEST_LIMITS } from '../../src/domain/rate-limits.js';
import { managementClient, type ServerProcess } from './process.js';

/** What a partner's server saw of one impression it reported. */
export interface TrackingAnswer {
  /** 0 when the connection failed before an answer came (see `error`). */
  status: number;
  retryAfter?: string | undefined;
  error?: string;
  /** Whether it went on a kept-alive connection that had carried an earlier answer. */
  reused?: boolean;
}

/** Reports one impression with an Idempotency-Key; never rejects, so load loops can count failures. */
export function postImpression(
  url: string,
  apiKey: string,
  body: string,
  key: string,
  agent: http.Agent,
): Promise<TrackingAnswer> {
  const headers = {
    authorization: `Bearer ${apiKey}`,
    'content-type': 'application/json',
    'idempotency-key': key,
  };
  return send('POST', `${url}/api/v1/campaigns/impression`, agent, headers, body);
}

/** A GET on the given agent's connection; never rejects, like `postImpression`. */
export function getOn(
  url: string,
  agent: http.Agent,
  headers: Record<string, string> = {},
): Promise<TrackingAnswer> {
  return send('GET', url, agent, headers, undefined);
}

function send(
  method: string,
  url: string,
  agent: http.Agent,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<TrackingAnswer> {
  return new Promise((resolve) => {
    const request = http.request(url, { method, agent, headers }, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] }),
      );
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ status: 0, error: error.code ?? error.message, reused: request.reusedSocket }),
    );
    request.end(body);
  });
}

/** A tracking body for the first campaign the demo serves in `header_banner`. */
export async function demoImpressionBody(server: ServerProcess): Promise<string> {
  const fetched = await fetch(`${server.url}/api/v1/campaigns/fetch?placement=header_banner`, {
    headers: { authorization: `Bearer ${server.summary.demoApiKey}` },
  });
  const campaignId = ((await fetched.json()) as { data: Array<{ id: number }> }).data[0].id;
  return JSON.stringify({ campaignId, placement: 'header_banner' });
}

/**
 * Lifts the demo key's rate limits to the highest an operator may set, through the management API,
 * so that a load test meets the faults it is about and not the default limit of D7 (on a fast
 * machine, eight clients exceed 1,000 events a second). `adminToken`: the one the server printed
 * at its first start, or the one it was given in `PLACARD_ADMIN_TOKEN`.
 */
export async function liftDemoKeyLimits(
  server: ServerProcess,
  adminToken = server.summary.adminToken,
): Promise<void> {
  const admin = managementClient(server.url, adminToken!);
  const partners = await admin<Array<{ id: number }>>('GET', '/partners');
  const keys = (
    await Promise.all(partners.map((partner) => admin<ApiKeyRow[]>('GET', `/partners/${partner.id}/keys`)))
  ).flat();
  const demo = keys.find((key) => server.summary.demoApiKey!.startsWith(key.prefix));
  if (!demo) throw new Error('the demo key is not listed');
  await admin('PUT', `/keys/${demo.id}/rate-limits`, HIGHEST_LIMITS);
}

interface ApiKeyRow {
  id: number;
  prefix: string;
}
