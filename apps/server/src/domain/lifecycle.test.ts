import { describe, expect, it } from 'vitest';
import { CAMPAIGN_STATUSES, type CampaignStatus } from './campaigns.js';
import {
  CAMPAIGN_ACTIONS,
  statusAfterAction,
  statusAfterEdit,
  timedStatus,
  type CampaignAction,
} from './lifecycle.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HOUR = 3_600_000;
const flight = (status: CampaignStatus, startAt: number | null = null, endAt: number | null = null) => ({
  status,
  startAt,
  endAt,
});

/** Every allowed (action, from) pair of D11 and where it lands with an open flight window. */
const ALLOWED: Record<CampaignAction, Partial<Record<CampaignStatus, CampaignStatus>>> = {
  submit: { draft: 'pending_review' },
  approve: { pending_review: 'running' },
  reject: { pending_review: 'rejected' },
  pause: { running: 'paused', scheduled: 'paused' },
  resume: { paused: 'running' },
  archive: {
    draft: 'archived',
    pending_review: 'archived',
    rejected: 'archived',
    scheduled: 'archived',
    running: 'archived',
    paused: 'archived',
    completed: 'archived',
  },
};

describe('campaign lifecycle actions (D11)', () => {
  for (const action of CAMPAIGN_ACTIONS) {
    for (const from of CAMPAIGN_STATUSES) {
      const to = ALLOWED[action][from];
      if (to) {
        it(`${action}: ${from} → ${to}`, () => expect(statusAfterAction(flight(from), action, NOW)).toBe(to));
      } else {
        it(`${action}: refused from ${from}, naming the state`, () => {
          expect(() => statusAfterAction(flight(from), action, NOW)).toThrow(
            `cannot ${action} a campaign that is ${from}`,
          );
          try {
            statusAfterAction(flight(from), action, NOW);
          } catch (error) {
            expect((error as { kind: string }).kind).toBe('conflict');
          }
        });
      }
    }
  }

  it('approving lands on scheduled before the start and completed after the end', () => {
    expect(statusAfterAction(flight('pending_review', NOW + HOUR), 'approve', NOW)).toBe('scheduled');
    expect(statusAfterAction(flight('pending_review', NOW - 2 * HOUR, NOW - HOUR), 'approve', NOW)).toBe(
      'completed',
    );
    expect(statusAfterAction(flight('paused', NOW + HOUR), 'resume', NOW)).toBe('scheduled');
  });
});

describe('edits (D11)', () => {
  it('send a rejected campaign back to draft', () =>
    expect(statusAfterEdit('rejected', ['priority'])).toBe('draft'));

  it.each(['scheduled', 'running', 'paused'] as const)(
    'send %s back to review when the creative changes',
    (status) => {
      for (const field of ['title', 'description', 'category', 'destinationUrl']) {
        expect(statusAfterEdit(status, [field])).toBe('pending_review');
      }
      expect(statusAfterEdit(status, ['priority', 'countries', 'endAt'])).toBe(status);
    },
  );

  it('leave drafts and reviews where they are, and refuse archived campaigns', () => {
    expect(statusAfterEdit('draft', ['title'])).toBe('draft');
    expect(statusAfterEdit('pending_review', ['title'])).toBe('pending_review');
    expect(() => statusAfterEdit('archived', ['title'])).toThrow('cannot edit a campaign that is archived');
  });

  it('keep a completed campaign’s creative, so reopening it by its cap never serves one unreviewed', () => {
    for (const field of ['title', 'description', 'category', 'destinationUrl'])
      expect(() => statusAfterEdit('completed', [field, 'caps'])).toThrow(
        'cannot change the title, description, category or destination of a campaign that is completed',
      );
    expect(statusAfterEdit('completed', ['caps', 'priority'])).toBe('completed');
  });
});

describe('the clock (D11)', () => {
  it('starts scheduled campaigns and completes live ones', () => {
    expect(timedStatus(flight('scheduled', NOW), NOW)).toBe('running');
    expect(timedStatus(flight('scheduled', NOW + 1), NOW)).toBeNull();
    for (const status of ['scheduled', 'running', 'paused'] as const) {
      expect(timedStatus(flight(status, null, NOW), NOW)).toBe('completed');
    }
    expect(timedStatus(flight('running', null, NOW + 1), NOW)).toBeNull();
    expect(timedStatus(flight('draft', null, NOW - 1), NOW)).toBeNull();
  });
});
