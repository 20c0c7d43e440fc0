import http from 'node:http';
import type { ServerProcess } from './process.js';

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
  return new Promise((resolve) => {
    const request = http.request(
      `${url}/api/v1/campaigns/impression`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
      },
      (response) => {
        response.resume();
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] }),
        );
      },
    );
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
  const campaignId = ((await fetched.json()) as { data: Array<{ id: number }> }).data[0]!.id;
  return JSON.stringify({ campaignId, placement: 'header_banner' });
}
