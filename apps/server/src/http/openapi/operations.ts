import { Type } from 'typebox';
import { errors, withOperationIds } from './common.js';

const Checks = Type.Record(Type.String(), Type.String(), {
  description: 'Each check and its state: `ok`, or what is wrong.',
});

const LastCheckAge = Type.Integer({
  minimum: 0,
  description:
    'Milliseconds since the background check of the store last ended: the answer is read from it, ' +
    'never from a round trip made for the request.',
});

/** Schemas of `/healthz`, `/readyz` and `/metrics`, for the OpenAPI document. */
export const OPERATIONS_ROUTES = withOperationIds({
  healthz: {
    tags: ['Operations'],
    summary: 'Liveness: the process answers',
    security: [],
    response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'Alive.' }) },
  },
  readyz: {
    tags: ['Operations'],
    summary: 'Readiness: store reachable, migrations applied, not shutting down',
    security: [],
    description:
      '`degraded` (still 200) while the configured Redis is unreachable and rate limits are per instance. ' +
      'A failing check is named with its class only (`unavailable`, a timeout, `shutting down`, pending ' +
      'migrations); send an admin token to see the underlying error, which may name internal hosts. ' +
      'Answered from state kept in memory (the store is checked in the background every 500 ms, and a ' +
      'check unanswered for 2 s fails), so it answers at once however busy the instance is.',
    response: {
      200: Type.Object(
        {
          status: Type.Union([Type.Literal('ready'), Type.Literal('degraded')]),
          checks: Checks,
          lastCheckAgeMs: LastCheckAge,
        },
        { description: 'Can serve.' },
      ),
      503: Type.Object(
        {
          status: Type.Literal('error'),
          message: Type.String(),
          checks: Checks,
          lastCheckAgeMs: LastCheckAge,
        },
        { description: 'Cannot serve; `message` names the failing check. With `Retry-After`.' },
      ),
    },
  },
  metrics: {
    tags: ['Operations'],
    summary: 'Prometheus metrics',
    description: 'Request durations, events by kind and verdict, batches, rate limiting, the index.',
    security: [{ adminToken: [] }],
    response: {
      // Only the success is text; a refused token gets the JSON error body every route gives.
      200: {
        description: 'Prometheus text format 0.0.4.',
        content: { 'text/plain': { schema: Type.String() } },
      },
      ...errors(401, 403, 429),
    },
  },
});
