import { describeFrequencyCaps } from '../domain/frequency-caps.js';
import { invalidField, notFound } from '../domain/errors.js';
import { UNPACED, type Pace } from '../domain/pacing.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../domain/requests.js';
import { explainNotServing, reasonInWords, type NotServingReason } from '../domain/serving-reasons.js';
import { parseDevice, parseLocation, type Device } from '../domain/targeting.js';
import { NO_BLOCKS, type PartnerBlocks } from '../domain/partner-blocks.js';
import type { Store } from '../store/store.js';
import type { Actor } from './audit.js';
import type { CampaignIndex } from '../serving/campaign-index.js';
import { CampaignService } from './campaigns.js';
import { sees } from './scope.js';

/** A fetch to explain, as people and scripts give it: every part optional, checked here. */
export interface WhyQuery {
  placement?: unknown;
  location?: unknown;
  device?: unknown;
  /** An API key id: its partner's blocked categories and advertisers apply. */
  key?: unknown;
  limit?: unknown;
}

/** Why a campaign would or would not be returned now (the management API's and the CLI's answer). */
export interface ServingExplanation {
  campaignId: number;
  /** No reason holds: returned to such fetches, drawn among the other eligible campaigns. */
  eligible: boolean;
  /**
   * What may still keep it from a particular fetch that the explainer cannot see: its frequency
   * caps (D20), which depend on who the viewer is.
   */
  notes: string[];
  /** In the order they apply; each with its code, what it is about, and the same in words. */
  reasons: Array<{ code: NotServingReason['code']; message: string; [detail: string]: unknown }>;
  /** With a placement and no reason: its chance against the campaigns the index holds now (D4). */
  chance: {
    limit: number;
    ahead: number;
    rivals: number;
    weightShare: number;
    inResponse: number;
  } | null;
}

const iso = (ms: number): string => new Date(ms).toISOString();

function optionalId(value: unknown, field: string, problem = 'must be an id'): number | undefined {
  if (value === undefined) return undefined;
  const id =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d{1,15}$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw invalidField(field, problem);
  return id;
}

/**
 * "Why isn't it serving?": the reasons of `explainNotServing` for one campaign the actor sees (a
 * foreign one is not found, D13) and, when it is eligible for a fetch with a placement, its chance
 * in the serving index of this instance.
 */
export async function explainCampaign(
  store: Store,
  actor: Actor,
  index: CampaignIndex,
  now: number,
  id: number,
  raw: WhyQuery,
  /** Each campaign's pace as this instance's pacing job last decided it (`ServingState.paceOf`). */
  paceOf: (id: number) => Pace = () => UNPACED,
): Promise<ServingExplanation> {
  const campaign = await new CampaignService(store, actor, () => now).get(id);
  const placements = await store.listPlacements();
  const placement = raw.placement;
  if (
    placement !== undefined &&
    (typeof placement !== 'string' || !placements.some((p) => p.id === placement))
  )
    throw invalidField('placement', `unknown placement: ${JSON.stringify(placement)}`);
  // Checked as a fetch checks them (D2).
  const location = raw.location === undefined ? undefined : parseLocation(raw.location);
  const device: Device | undefined = raw.device === undefined ? undefined : parseDevice(raw.device);
  const limitProblem = `must be an integer between 1 and ${MAX_LIMIT}`;
  const limit = optionalId(raw.limit, 'limit', limitProblem) ?? DEFAULT_LIMIT;
  if (limit > MAX_LIMIT) throw invalidField('limit', limitProblem);
  const keyId = optionalId(raw.key, 'key');
  let blocks: PartnerBlocks = NO_BLOCKS;
  if (keyId !== undefined) {
    const key = await store.getApiKey(keyId);
    if (!key || !sees(actor, { kind: 'partner', id: key.partnerId }))
      throw notFound(`api key ${keyId} not found`);
    blocks = (await store.findPartner(key.partnerId)) ?? NO_BLOCKS;
  }
  const enabled = new Set(placements.filter((p) => p.enabled).map((p) => p.id));
  const query = {
    ...(placement !== undefined && { placement }),
    ...(location !== undefined && { location }),
    ...(device !== undefined && { device }),
    blocks,
  };
  // As this instance's pacing job decided at its last step, with the plan it serves by (D16).
  const pace = paceOf(campaign.id);
  const hold = campaign.pacing === 'even' && pace.held ? pace.hold : undefined;
  const found = explainNotServing(campaign, now, enabled, query, hold);
  // A blocked advertiser is named: whoever sees the campaign sees its advertiser.
  const advertiserName = found.some((reason) => reason.code === 'advertiser_blocked')
    ? (await store.findAdvertiser(campaign.advertiserId))?.name
    : undefined;
  const reasons = found
    .map((reason) =>
      reason.code === 'advertiser_blocked' && advertiserName !== undefined
        ? { ...reason, advertiserName }
        : reason,
    )
    .map((reason) =>
      reason.code === 'pacing_ahead'
        ? // Its figures are in the message; the code is what scripts read.
          { code: reason.code, message: reasonInWords(reason, iso) }
        : {
            ...reason,
            // Instants named `…At` become ISO strings on the way out; this one is named otherwise.
            ...(reason.code === 'daily_cap_reached' && { cappedUntil: iso(reason.cappedUntil) }),
            ...(reason.code === 'advertiser_budget_spent' && {
              budgetHeldUntil: reason.budgetHeldUntil === null ? null : iso(reason.budgetHeldUntil),
            }),
            message: reasonInWords(reason, iso),
          },
    );
  const chance =
    reasons.length === 0 && placement !== undefined
      ? {
          limit,
          // Drawn with the weight the index serves it with: its pace multiplies it (D16).
          ...index.chance(
            index.campaign(campaign.id, now) ?? campaign,
            {
              placement,
              limit,
              ...(location !== undefined && { location }),
              ...(device !== undefined && { device }),
            },
            now,
            blocks,
          ),
        }
      : null;
  const notes =
    campaign.frequencyCaps.length === 0
      ? []
      : [
          `Frequency caps: ${describeFrequencyCaps(campaign.frequencyCaps)} per viewer. A fetch that names a viewer who has reached one leaves it out; fetches and impressions without a viewer are not capped.`,
        ];
  return { campaignId: campaign.id, eligible: reasons.length === 0, notes, reasons, chance };
}
