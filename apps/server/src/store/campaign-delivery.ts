// What the campaigns list shows of each campaign's delivery: counted impressions and clicks today
// and in total, and its spend in total. Part of the Store façade (store.ts): functions over a StoreContext.
import { sql } from 'kysely';
import type { Totals } from '../domain/campaigns.js';
import { addMicros, micros, type Micros } from '../domain/money.js';
import type { StoreContext } from './context.js';
import { COMPACTED_BEFORE } from './event-ledger.js';

/**
 * A campaign's counted impressions and clicks since its local midnight, and over its whole life,
 * and what its billable events have cost over its whole life (in micros of the deployment's currency).
 */
export interface CampaignDelivery {
  today: Totals;
  total: Totals;
  spendMicros: Micros;
}

interface DeliveryRow {
  part: 'summed' | 'slot' | 'minute';
  campaign_id: number | string;
  at: number | string;
  impressions: number | string | null;
  clicks: number | string | null;
  spend: number | string | null;
}

/**
 * The delivery of a page of campaigns, each with the instant its "today" starts (its local
 * midnight), in one statement, so every part reads the same moment of the store (a compaction that
 * commits meanwhile neither counts a quarter hour twice nor drops it):
 *
 * - `campaign_delivery`: each campaign's sums before the compaction mark (migration 018);
 * - `campaign_rollups` from the earliest midnight asked: today's quarter hours before the mark;
 * - `event_rollups` from the mark on, by minute (its `campaign_id, minute` index): the rest.
 *
 * Three index reads bounded by the page and by a day, whatever the number of campaigns stored. The
 * spend is summed like the counts (only counted events have a cost), in total only: `slot` rows are
 * today's alone, and only the total is shown.
 */
export async function campaignDelivery(
  ctx: StoreContext,
  campaigns: ReadonlyArray<{ id: number; todayFrom: number }>,
): Promise<Map<number, CampaignDelivery>> {
  const found = new Map<number, CampaignDelivery>();
  if (campaigns.length === 0) return found;
  const ids = campaigns.map((campaign) => campaign.id);
  const since = Math.min(...campaigns.map((campaign) => campaign.todayFrom));
  const idList = sql.join(ids);
  const mark = sql`(select cast(value as bigint) from meta where key = ${COMPACTED_BEFORE})`;
  const impressions = sql`sum(case when kind = 'impression' then count else 0 end)`;
  const clicks = sql`sum(case when kind = 'click' then count else 0 end)`;
  const spend = sql`sum(spend_micros)`;
  const { rows } = await sql<DeliveryRow>`
    select 'summed' as part, campaign_id, 0 as at, impressions, clicks, spend_micros as spend
      from campaign_delivery where campaign_id in (${idList})
    union all
    select 'slot' as part, campaign_id, slot as at, ${impressions} as impressions, ${clicks} as clicks,
      ${spend} as spend
      from campaign_rollups
      where campaign_id in (${idList}) and slot >= ${since} and verdict = 'counted'
      group by campaign_id, slot
    union all
    select 'minute' as part, campaign_id, minute as at, ${impressions} as impressions, ${clicks} as clicks,
      ${spend} as spend
      from event_rollups_live
      where campaign_id in (${idList}) and minute >= ${mark} and verdict = 'counted'
      group by campaign_id, minute`.execute(ctx.db);
  for (const campaign of campaigns)
    found.set(campaign.id, {
      today: { impressions: 0, clicks: 0 },
      total: { impressions: 0, clicks: 0 },
      spendMicros: 0 as Micros,
    });
  const todayFrom = new Map(campaigns.map((campaign) => [campaign.id, campaign.todayFrom]));
  for (const row of rows) {
    const id = Number(row.campaign_id);
    const delivery = found.get(id);
    if (!delivery) continue;
    const counts = { impressions: Number(row.impressions ?? 0), clicks: Number(row.clicks ?? 0) };
    if (row.part !== 'slot') {
      add(delivery.total, counts);
      // PostgreSQL sums bigints into a numeric, which node-postgres gives as a string.
      delivery.spendMicros = addMicros(delivery.spendMicros, micros(row.spend ?? 0));
    }
    if (row.part !== 'summed' && Number(row.at) >= (todayFrom.get(id) ?? Infinity))
      add(delivery.today, counts);
  }
  return found;
}

function add(to: Totals, counts: Totals): void {
  to.impressions += counts.impressions;
  to.clicks += counts.clicks;
}
