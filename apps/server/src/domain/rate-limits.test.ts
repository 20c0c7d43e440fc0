import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICIES, keyPolicies, rateLimitHeaders } from './rate-limits.js';

describe('rate limit policies (D7)', () => {
  it('uses a key’s own settings where it has them and the defaults elsewhere', () => {
    expect(keyPolicies({ fetchRate: null, fetchBurst: null, eventsRate: null, eventsBurst: null })).toEqual(
      DEFAULT_POLICIES,
    );
    expect(keyPolicies({ fetchRate: 5, fetchBurst: null, eventsRate: null, eventsBurst: 7 })).toEqual({
      fetch: { perSecond: 5, burst: 200 },
      events: { perSecond: 1000, burst: 7 },
    });
  });

  it('describes a refusal with Retry-After and the draft fields', () => {
    expect(rateLimitHeaders('fetch', DEFAULT_POLICIES.fetch, 1)).toEqual({
      'retry-after': '1',
      'ratelimit-policy': '"fetch";q=200;w=2',
      ratelimit: '"fetch";r=0;t=1',
    });
    // A window is never shorter than a second.
    expect(rateLimitHeaders('events', { perSecond: 1000, burst: 10 }, 1)['ratelimit-policy']).toBe(
      '"events";q=10;w=1',
    );
  });
});
