import { HELD_UNTIL_RAISED } from './advertiser-budgets.js';
import type { Campaign, CampaignStatus } from './campaigns.js';
import type { PacingHold } from './pacing.js';
import { nextRunAt, runsAt, scheduleText } from './schedules.js';
import type { Device } from './targeting.js';
import { NO_BLOCKS, type PartnerBlocks } from './partner-blocks.js';

/** What a fetch asks, for the explainer: each part optional, as in `placard campaigns why`. */
export interface ServingQuery {
  placement?: string;
  location?: string;
  device?: Device;
  /** What the partner whose key would fetch blocks: categories, advertisers. */
  blocks?: PartnerBlocks;
}

/**
 * One reason a campaign would not be returned, in the order `explainNotServing` checks them; the
 * fields beside `code` say what it is about.
 */
export type NotServingReason =
  | { code: 'status'; status: CampaignStatus; rejectionReason: string | null; startAt: number | null }
  | { code: 'flight_ended'; endAt: number }
  | { code: 'flight_not_started'; startAt: number }
  /** Outside the hours of the week its schedule allows; `nextRunAt` null: not within 8 days. */
  | { code: 'outside_schedule'; schedule: string; timeZone: string; nextRunAt: number | null }
  | { code: 'daily_cap_reached'; cappedUntil: number }
  /** `budgetHeldUntil` null: its advertiser's total budget, until it changes. */
  | { code: 'advertiser_budget_spent'; budgetHeldUntil: number | null }
  | ({ code: 'pacing_ahead' } & PacingHold)
  | { code: 'placements_disabled'; placements: string[] }
  | { code: 'placement_not_targeted'; placement: string; placements: string[] }
  | { code: 'placement_disabled'; placement: string }
  | { code: 'country_not_targeted'; location: string; countries: string[] }
  | { code: 'device_not_targeted'; device: Device; devices: Device[] }
  | { code: 'category_blocked'; category: string }
  /** `advertiserName` where the explainer knows it. */
  | { code: 'advertiser_blocked'; advertiserId: number; advertiserName?: string };

/**
 * Why a campaign would not be returned now, to a fetch like `query` if one is given, in the order
 * the reasons apply: its status first (only running campaigns are served, D11; a campaign that is
 * not running has no other reason), then its flight, its schedule's hours, a daily cap holding it for the rest of its day
 * (D12; a total cap completes it, so it shows as its status), its placements all disabled, then the
 * query's placement, country and device (D3) and a category or the advertiser the partner blocks. Empty: it is
 * eligible, and drawn by priority and weight among the others (D4).
 */
export function explainNotServing(
  campaign: Campaign,
  now: number,
  enabledPlacements: ReadonlySet<string>,
  query: ServingQuery = {},
  /** How even pacing holds it back now (D16), as the pacing job decided at its last step. */
  pacingHold?: PacingHold,
): NotServingReason[] {
  if (campaign.status !== 'running') {
    const { status, rejectionReason, startAt } = campaign;
    return [{ code: 'status', status, rejectionReason, startAt }];
  }
  const reasons: NotServingReason[] = [];
  if (campaign.endAt !== null && campaign.endAt <= now)
    reasons.push({ code: 'flight_ended', endAt: campaign.endAt });
  if (campaign.startAt !== null && campaign.startAt > now)
    reasons.push({ code: 'flight_not_started', startAt: campaign.startAt });
  const { schedule, timeZone } = campaign;
  if (schedule !== null && !runsAt(schedule, now, timeZone))
    reasons.push({
      code: 'outside_schedule',
      schedule: scheduleText(schedule),
      timeZone,
      nextRunAt: nextRunAt(schedule, now, timeZone),
    });
  if (campaign.cappedUntil !== null && campaign.cappedUntil > now)
    reasons.push({ code: 'daily_cap_reached', cappedUntil: campaign.cappedUntil });
  else if (campaign.budgetHeldUntil !== null && campaign.budgetHeldUntil > now)
    reasons.push({
      code: 'advertiser_budget_spent',
      budgetHeldUntil: campaign.budgetHeldUntil === HELD_UNTIL_RAISED ? null : campaign.budgetHeldUntil,
    });
  else if (pacingHold) reasons.push({ code: 'pacing_ahead', ...pacingHold });
  const disabled = campaign.placements.filter((placement) => !enabledPlacements.has(placement));
  if (disabled.length === campaign.placements.length)
    reasons.push({ code: 'placements_disabled', placements: disabled });
  const { placement, location, device, blocks = NO_BLOCKS } = query;
  if (placement !== undefined && !campaign.placements.includes(placement))
    reasons.push({ code: 'placement_not_targeted', placement, placements: campaign.placements });
  else if (
    placement !== undefined &&
    !enabledPlacements.has(placement) &&
    disabled.length < campaign.placements.length
  )
    reasons.push({ code: 'placement_disabled', placement });
  if (location !== undefined && campaign.countries.length > 0 && !campaign.countries.includes(location))
    reasons.push({ code: 'country_not_targeted', location, countries: campaign.countries });
  if (device !== undefined && campaign.devices.length > 0 && !campaign.devices.includes(device))
    reasons.push({ code: 'device_not_targeted', device, devices: campaign.devices });
  if (campaign.category !== null && blocks.blockedCategories.includes(campaign.category))
    reasons.push({ code: 'category_blocked', category: campaign.category });
  if (blocks.blockedAdvertisers.includes(campaign.advertiserId))
    reasons.push({ code: 'advertiser_blocked', advertiserId: campaign.advertiserId });
  return reasons;
}

/** What each status says and what to do about it, for people. */
function statusWords(
  reason: Extract<NotServingReason, { code: 'status' }>,
  at: (ms: number) => string,
): string {
  switch (reason.status) {
    case 'draft':
      return 'It is a draft: submit it for review when it is ready.';
    case 'pending_review':
      return 'It waits for the operator’s review; it is served once approved.';
    case 'rejected':
      return `The operator rejected it: ${reason.rejectionReason ?? 'no reason given'}. Edit it (it returns to draft) and submit it again.`;
    case 'scheduled':
      return `It is approved and starts at ${reason.startAt === null ? 'its start' : at(reason.startAt)}.`;
    case 'paused':
      return 'It is paused: resume it to serve it again.';
    case 'completed':
      return 'It is completed: its end time passed or a total cap was reached.';
    case 'archived':
      return 'It is archived and never served again.';
    case 'running':
      return 'It is running.';
  }
}

const whole = (count: number): string => Math.floor(count).toLocaleString('en-US');

/** One reason in words, with what to do about it; `at` formats an instant for people. */
export function reasonInWords(reason: NotServingReason, at: (ms: number) => string): string {
  switch (reason.code) {
    case 'status':
      return statusWords(reason, at);
    case 'flight_ended':
      return `Its flight ended at ${at(reason.endAt)}.`;
    case 'flight_not_started':
      return `Its flight starts at ${at(reason.startAt)}.`;
    case 'outside_schedule':
      return `It runs only in its scheduled hours (${reason.schedule}, ${reason.timeZone} time)${
        reason.nextRunAt === null ? '.' : `: it is served again from ${at(reason.nextRunAt)}.`
      }`;
    case 'daily_cap_reached':
      return `A daily cap was reached: it is served again from ${at(reason.cappedUntil)}.`;
    case 'advertiser_budget_spent':
      return reason.budgetHeldUntil === null
        ? 'Its advertiser’s total budget is spent: it is served again once the budget is raised.'
        : `Its advertiser’s monthly budget is spent: it is served again from ${at(reason.budgetHeldUntil)}.`;
    case 'pacing_ahead':
      return reason.unit === 'micros'
        ? `Held by pacing: ${whole(reason.delivered)} micros spent of ${whole(reason.planned)} planned by now (its budget is ${whole(reason.cap)}), released at ${at(reason.releasedAt)}.`
        : `Held by pacing: ${whole(reason.delivered)} of ${whole(reason.planned)} planned by now (its cap is ${whole(reason.cap)}), released at ${at(reason.releasedAt)}.`;
    case 'placements_disabled':
      return `None of its placements is enabled (${reason.placements.join(', ')}): ask the operator.`;
    case 'placement_not_targeted':
      return `It does not target ${reason.placement} (it targets ${reason.placements.join(', ')}).`;
    case 'placement_disabled':
      return `The placement ${reason.placement} is disabled: ask the operator.`;
    case 'country_not_targeted':
      return `It does not target ${reason.location} (it targets ${reason.countries.join(', ')}).`;
    case 'device_not_targeted':
      return `It does not target ${reason.device} devices (it targets ${reason.devices.join(', ')}).`;
    case 'category_blocked':
      return `The partner blocks its category, ${reason.category}.`;
    case 'advertiser_blocked':
      return `The partner blocks its advertiser, ${reason.advertiserName ?? `advertiser ${reason.advertiserId}`}.`;
  }
}

/**
 * Why a campaign is not served now, in words for the dashboard's campaign page: the reasons of
 * {@link explainNotServing} that hold for every fetch. An empty list means it is served to fetches
 * that match its targeting. `at` formats an instant for people.
 */
export function notServingReasons(
  campaign: Campaign,
  now: number,
  enabledPlacements: ReadonlySet<string>,
  at: (ms: number) => string,
  pacingHold?: PacingHold,
): string[] {
  return explainNotServing(campaign, now, enabledPlacements, {}, pacingHold).map((reason) =>
    reasonInWords(reason, at),
  );
}
