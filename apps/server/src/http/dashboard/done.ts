import type { CampaignAction } from '../../domain/lifecycle.js';

/** What each campaign action did, said on the next page: "Campaign “Spring sale” archived: …". */
const DONE: Record<CampaignAction, string> = {
  submit: 'submitted for review: it serves once the operator approves it',
  approve: 'approved: partners receive it within seconds, from the start of its flight',
  reject: 'rejected: its advertiser reads your reason beside it',
  pause: 'paused: partners stop receiving it within seconds',
  resume: 'resumed: partners receive it again within seconds',
  archive: 'archived: it no longer serves, and its reports stay',
};

/** The message after `action` on the campaign titled `title` (the service refuses any other action). */
export const campaignDone = (action: CampaignAction | 'none', title: string): string =>
  `Campaign “${title}” ${action === 'none' ? 'unchanged' : DONE[action]}.`;
