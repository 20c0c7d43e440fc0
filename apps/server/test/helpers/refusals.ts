import { expect } from 'vitest';
import type { TestApp, TestResponse } from './app.js';

/** Checks that `res` is the partner API contract's 400: `{ status: 'error', message }`. */
export function expectContract400(res: TestResponse, message: string): void {
  expect(res.statusCode).toBe(400);
  expect(res.json()).toEqual({ status: 'error', message });
}

/**
 * Tracks an impression of `campaignId` in the header banner with `fields` over it, and checks that it
 * is refused with the contract's 400 naming `message`.
 */
export async function expectImpressionRefused(
  t: TestApp,
  campaignId: number,
  fields: Record<string, unknown>,
  message: string,
): Promise<void> {
  expectContract400(
    await t.track('impression', { campaignId, placement: 'header_banner', ...fields }),
    message,
  );
}
