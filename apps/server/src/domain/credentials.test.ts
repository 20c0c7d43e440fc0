import { describe, expect, it } from 'vitest';
import { isExpired, lifecycleStatus } from './credentials.js';

describe('credential lifecycle', () => {
  it('expires at the expiry instant itself, never without one', () => {
    expect(isExpired(null, 5)).toBe(false);
    expect(isExpired(6, 5)).toBe(false);
    expect(isExpired(5, 5)).toBe(true);
    expect(isExpired(4, 5)).toBe(true);
  });

  it('reports revoked before expired', () => {
    expect(lifecycleStatus(false, null, 5)).toBe('active');
    expect(lifecycleStatus(false, 5, 5)).toBe('expired');
    expect(lifecycleStatus(true, 5, 5)).toBe('revoked');
    expect(lifecycleStatus(true, null, 5)).toBe('revoked');
  });
});
