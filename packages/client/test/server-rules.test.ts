import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../apps/server/src/domain/errors.js';
import { parseFetchQuery, parseTrackingBody } from '../../../apps/server/src/domain/requests.js';
import { IDEMPOTENCY_KEY_REUSED_MESSAGE } from '../../../apps/server/src/domain/verdicts.js';
import { SUSPENDED_KEY_MESSAGE } from '../../../apps/server/src/http/auth.js';
import { BROWSER_REFUSAL } from '../../../apps/server/src/http/partner-api.js';
import { generate, GENERATED } from '../../../scripts/client-generate.mjs';
import { CONTRACT_MESSAGES } from '../src/codes.js';
import { checkFetchArguments, checkTracking } from '../src/rules.js';

/** The outcome of a check: the normalised value, or the message it refused with. */
function outcome(run: () => unknown): unknown {
  try {
    return { value: run() };
  } catch (error) {
    if (error instanceof Error && (error instanceof DomainError || error.name === 'ValidationError')) {
      return { refused: error.message };
    }
    throw error;
  }
}

const text = fc.oneof(
  fc.constantFrom('', 'us', 'US', 'gb', 'ZZ', 'XK', 'mobile', 'Desktop', 'TABLET', 'watch', 'header_banner'),
  fc.string({ maxLength: 4 }),
);

describe('the SDK’s rules are the server’s', () => {
  it('generated.ts is what the generator writes from docs/openapi.json (run `npm run client:generate` when this fails)', async () => {
    expect(fs.readFileSync(GENERATED, 'utf8')).toBe(await generate());
  });

  it('the messages the SDK tells cases of one status apart by are the ones the server sends', () => {
    const table = [...CONTRACT_MESSAGES].flatMap(([status, messages]) =>
      [...messages].map(([message, code]) => ({ status, message, code })),
    );
    expect(table).toEqual([
      { status: 403, message: SUSPENDED_KEY_MESSAGE, code: 'key_suspended' },
      { status: 403, message: BROWSER_REFUSAL, code: 'sent_from_browser' },
      { status: 422, message: IDEMPOTENCY_KEY_REUSED_MESSAGE, code: 'idempotency_key_reused' },
    ]);
  });

  it('fetch arguments: the SDK accepts exactly what the server accepts, normalised alike, refused with its message', () => {
    fc.assert(
      fc.property(
        text,
        fc.option(fc.oneof(fc.integer({ min: -5, max: 205 }), fc.double({ min: 0, max: 200 })), {
          nil: undefined,
        }),
        fc.option(text, { nil: undefined }),
        fc.option(text, { nil: undefined }),
        (placement, limit, location, device) => {
          const query: Record<string, string> = { placement };
          if (limit !== undefined) query['limit'] = String(limit);
          if (location !== undefined) query['location'] = location;
          if (device !== undefined) query['device'] = device;
          const server = outcome(() => parseFetchQuery(query));
          const sdk = outcome(() =>
            checkFetchArguments({
              placement,
              ...(limit !== undefined && { limit }),
              ...(location !== undefined && { location }),
              ...(device !== undefined && { device: device as 'mobile' }),
            }),
          );
          expect(sdk).toEqual(server);
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('tracking fields: the same verdicts as the server for ids, locations and devices', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: -3, max: 2 ** 53 }), fc.double(), fc.constant(1.5)),
        fc.constantFrom('header_banner', 'x'),
        fc.option(text, { nil: undefined }),
        fc.option(text, { nil: undefined }),
        (campaignId, placement, location, device) => {
          const context = {
            ...(location !== undefined && { location }),
            ...(device !== undefined && { device: device as 'mobile' }),
          };
          const server = outcome(() => parseTrackingBody({ campaignId, placement, ...context }));
          const sdk = outcome(() => checkTracking(campaignId, placement, context));
          expect(sdk).toEqual(server);
        },
      ),
      { numRuns: 5_000 },
    );
  });
});
