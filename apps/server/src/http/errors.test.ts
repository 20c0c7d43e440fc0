import { describe, expect, it } from 'vitest';
import { DomainError } from '../domain/errors.js';
import { describeError, errorBodyFor, HttpError } from './errors.js';

/** The body `url` would get for `error`, parsed. */
const bodyOf = (url: string, error: unknown): unknown => JSON.parse(errorBodyFor(url, describeError(error)));

describe('error bodies', () => {
  it('gives a management body the code of its failure, or of its status when it has none more specific', () => {
    const storeGone = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const cases: Array<[unknown, number, string]> = [
      [new Error('a bug'), 500, 'internal_error'],
      [storeGone, 503, 'unavailable'],
      [new DomainError('unavailable', 'service unavailable'), 503, 'unavailable'],
      [new HttpError(417, 'only the expectation 100-continue is supported'), 417, 'invalid_request'],
      [new HttpError(429, 'Rate limit exceeded'), 429, 'rate_limited'],
      [new DomainError('conflict', 'taken', [], 'already_exists'), 409, 'already_exists'],
    ];
    expect(
      cases.map(([error]) => [
        describeError(error).status,
        (bodyOf('/admin/v1/x', error) as { code: string }).code,
      ]),
    ).toEqual(cases.map(([, status, code]) => [status, code]));
  });

  it('never tells an unauthenticated caller more through the code than through the message', () => {
    const refused = new DomainError('unauthorized', 'token revoked', [], 'wrong_credential');
    expect(bodyOf('/admin/v1/partners', refused)).toEqual({
      status: 'error',
      code: 'unauthorized',
      message: 'unauthorized',
    });
  });

  it('keeps the contract’s body everywhere else (partner API section 7)', () => {
    expect(bodyOf('/api/v1/campaigns/fetch', new DomainError('forbidden', 'api key suspended'))).toEqual({
      status: 'error',
      message: 'api key suspended',
    });
  });
});
