import type { Campaign } from './campaigns.js';

/**
 * Why a campaign is not served now, each reason with what to do about it, in the order they
 * apply: its status first (only running campaigns are served, D11), then its flight, a daily cap
 * holding it for the rest of its day (D12), and disabled placements. An empty list means it is
 * served to fetches that match its targeting. `at` formats an instant for people.
 */
export function notServingReasons(
  campaign: Campaign,
  now: number,
  enabledPlacements: ReadonlySet<string>,
  at: (ms: number) => string,
): string[] {
  switch (campaign.status) {
    case 'draft':
      return ['It is a draft: submit it for review when it is ready.'];
    case 'pending_review':
      return ['It waits for the operator’s review; it is served once approved.'];
    case 'rejected':
      return [
        `The operator rejected it: ${campaign.rejectionReason ?? 'no reason given'}. Edit it (it returns to draft) and submit it again.`,
      ];
    case 'scheduled':
      return [
        `It is approved and starts at ${campaign.startAt === null ? 'its start' : at(campaign.startAt)}.`,
      ];
    case 'paused':
      return ['It is paused: resume it to serve it again.'];
    case 'completed':
      return ['It is completed: its end time passed or a total cap was reached.'];
    case 'archived':
      return ['It is archived and never served again.'];
    case 'running':
      break;
  }
  const reasons: string[] = [];
  if (campaign.endAt !== null && campaign.endAt <= now)
    reasons.push(`Its flight ended at ${at(campaign.endAt)}.`);
  if (campaign.startAt !== null && campaign.startAt > now)
    reasons.push(`Its flight starts at ${at(campaign.startAt)}.`);
  if (campaign.cappedUntil !== null && campaign.cappedUntil > now)
    reasons.push(`A daily cap was reached: it is served again from ${at(campaign.cappedUntil)}.`);
  const disabled = campaign.placements.filter((placement) => !enabledPlacements.has(placement));
  if (disabled.length === campaign.placements.length)
    reasons.push(`None of its placements is enabled (${disabled.join(', ')}): ask the operator.`);
  return reasons;
}
