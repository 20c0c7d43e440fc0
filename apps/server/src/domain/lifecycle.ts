import { totalCapReached, type Caps, type CampaignStatus, type Totals } from './campaigns.js';
import { DomainError } from './errors.js';

/** Operator actions on a campaign (rule D11). Time-driven moves are in `timedStatus`. */
export const CAMPAIGN_ACTIONS = ['submit', 'approve', 'reject', 'pause', 'resume', 'archive'] as const;
export type CampaignAction = (typeof CAMPAIGN_ACTIONS)[number];

/** The states each action may start from. */
const ALLOWED_FROM: Record<CampaignAction, readonly CampaignStatus[]> = {
  submit: ['draft'],
  approve: ['pending_review'],
  reject: ['pending_review'],
  pause: ['running', 'scheduled'],
  resume: ['paused'],
  archive: ['draft', 'pending_review', 'rejected', 'scheduled', 'running', 'paused', 'completed'],
};

/** The states in which an action is done already: a retried action whose answer was lost may count it done. */
const DONE_IN: Record<CampaignAction, readonly CampaignStatus[]> = {
  submit: ['pending_review'],
  approve: ['scheduled', 'running', 'paused', 'completed'],
  reject: ['rejected'],
  pause: ['paused'],
  resume: ['scheduled', 'running'],
  archive: ['archived'],
};

/**
 * The campaign's fields a partner receives in a fetch and shows to its readers (with `id`, `status`
 * and `createdAt`, which nobody edits): changing one of an approved campaign sends it back to review.
 */
export const CREATIVE_FIELDS = ['title', 'description', 'category', 'destinationUrl'] as const;

interface Flight {
  status: CampaignStatus;
  startAt: number | null;
  endAt: number | null;
}

/** Where an approved campaign lands at `now`: before its start, inside its window, or past its end. */
function landing(flight: Flight, now: number): CampaignStatus {
  if (flight.endAt !== null && flight.endAt <= now) return 'completed';
  if (flight.startAt !== null && flight.startAt > now) return 'scheduled';
  return 'running';
}

/**
 * The status after an operator action, or a 409 naming the current state when the action is not
 * allowed from it. Approving and resuming land on scheduled, running or completed by the clock.
 */
export function statusAfterAction(flight: Flight, action: CampaignAction, now: number): CampaignStatus {
  if (!ALLOWED_FROM[action].includes(flight.status)) {
    const code = DONE_IN[action].includes(flight.status) ? 'already_done' : 'conflict';
    throw new DomainError('conflict', `cannot ${action} a campaign that is ${flight.status}`, [], code);
  }
  switch (action) {
    case 'submit':
      return 'pending_review';
    case 'reject':
      return 'rejected';
    case 'pause':
      return 'paused';
    case 'archive':
      return 'archived';
    case 'approve':
    case 'resume':
      return landing(flight, now);
  }
}

/** The states of an approved campaign: an import that asks for one skips review. */
export const APPROVED_STATUSES: readonly CampaignStatus[] = ['scheduled', 'running', 'paused', 'completed'];

/**
 * Where a campaign imported with approval lands: asked for as scheduled or running, it follows the
 * clock as an approval does (a future start is scheduled, a passed end completed); paused and
 * completed stay as asked, and anything else is not an approval at all.
 */
export function statusOnImport(flight: Flight, now: number): CampaignStatus {
  return flight.status === 'scheduled' || flight.status === 'running' ? landing(flight, now) : flight.status;
}

/**
 * The status after an edit (D11): a rejected campaign goes back to draft; an approved one whose
 * creative changed goes back to review; archived campaigns cannot be edited at all. A completed
 * campaign keeps its creative: raising its total cap makes it paused, and a resume would then serve
 * a creative nobody reviewed.
 */
export function statusAfterEdit(status: CampaignStatus, changedFields: readonly string[]): CampaignStatus {
  if (status === 'archived') throw new DomainError('conflict', 'cannot edit a campaign that is archived');
  if (status === 'rejected') return 'draft';
  const creative = changedFields.some((field) => (CREATIVE_FIELDS as readonly string[]).includes(field));
  if (creative && status === 'completed') {
    throw new DomainError(
      'conflict',
      'cannot change the title, description, category or destination of a campaign that is completed',
    );
  }
  const approved = status === 'scheduled' || status === 'running' || status === 'paused';
  return approved && creative ? 'pending_review' : status;
}

/**
 * The status after an edit of a campaign's caps (D11): a campaign completed by its total cap while
 * its flight is not over was stopped by the cap alone, so when the new caps are no longer reached
 * it becomes paused, for the operator to resume. One completed by its end time stays final.
 */
export function statusAfterCapChange(
  campaign: Flight & { caps: Caps },
  newCaps: Caps,
  totals: Totals,
  now: number,
): CampaignStatus {
  const flightOver = campaign.endAt !== null && campaign.endAt <= now;
  const heldByCap = campaign.status === 'completed' && !flightOver && totalCapReached(campaign.caps, totals);
  return heldByCap && !totalCapReached(newCaps, totals) ? 'paused' : campaign.status;
}

/** The move the clock makes on its own (start reached, end passed), or null for none. */
export function timedStatus(flight: Flight, now: number): CampaignStatus | null {
  const ended = flight.endAt !== null && flight.endAt <= now;
  if ((flight.status === 'running' || flight.status === 'paused' || flight.status === 'scheduled') && ended) {
    return 'completed';
  }
  if (flight.status === 'scheduled' && (flight.startAt === null || flight.startAt <= now)) return 'running';
  return null;
}

/** The actions a campaign in `status` allows, in the order of CAMPAIGN_ACTIONS. */
export function allowedActions(status: CampaignStatus): CampaignAction[] {
  return CAMPAIGN_ACTIONS.filter((action) => ALLOWED_FROM[action].includes(status));
}
