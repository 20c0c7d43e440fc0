import type { ReportDimension } from '../domain/report-request.js';
import type { Db } from './schema.js';

/** The rollup column behind each dimension ('' in country, device and reason means absent). */
const COLUMNS = {
  campaign: 'event_rollups.campaign_id',
  advertiser: 'campaigns.advertiser_id',
  partner: 'event_rollups.partner_id',
  placement: 'event_rollups.placement_id',
  country: 'event_rollups.country',
  device: 'event_rollups.device',
  verdict: 'event_rollups.verdict',
  reason: 'event_rollups.reason',
} as const;

export interface RollupQuery {
  /** Inclusive start and exclusive end, epoch ms; both on a slot boundary. */
  from: number;
  to: number;
  /** Width of the time slots rows are summed into, in ms: a whole number of minutes. */
  slotMs: number;
  groupBy: readonly ReportDimension[];
  /** Only rows whose dimension value is one of these (strings as stored; '' for absent). */
  filters: Partial<Record<ReportDimension, readonly (string | number)[]>>;
}

/** Summed rollup counts of one time slot and one combination of the grouped dimensions. */
export interface RollupSlice {
  slot: number;
  values: Partial<Record<ReportDimension, string | number>>;
  kind: string;
  verdict: string;
  count: number;
}

/** Reads per-minute rollups summed into slots and grouped by the asked dimensions. */
export async function readRollups(db: Db, query: RollupQuery): Promise<RollupSlice[]> {
  const needsCampaigns = query.groupBy.includes('advertiser') || query.filters.advertiser !== undefined;
  let select = db
    .selectFrom('event_rollups')
    .$if(needsCampaigns, (q) => q.innerJoin('campaigns', 'campaigns.id', 'event_rollups.campaign_id'))
    .where('event_rollups.minute', '>=', query.from)
    .where('event_rollups.minute', '<', query.to);
  for (const [dimension, values] of Object.entries(query.filters) as [
    ReportDimension,
    (string | number)[],
  ][]) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column is one of COLUMNS, chosen at run time
    select = select.where(COLUMNS[dimension] as any, 'in', values);
  }
  const grouped = query.groupBy.filter((dimension) => dimension !== 'verdict');
  const rows = await select
    .select((eb) => [
      eb(eb.ref('event_rollups.minute'), '-', eb(eb.ref('event_rollups.minute'), '%', query.slotMs)).as(
        'slot',
      ),
      'event_rollups.kind as kind',
      'event_rollups.verdict as verdict',
      eb.fn.sum<number | string>('event_rollups.count').as('count'),
      // The verdict is selected above already; grouping by it adds no second column.
      ...grouped.map((dimension) =>
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
        eb.ref(COLUMNS[dimension] as any).as(dimension),
      ),
    ])
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- grouping by the aliases selected above
    .groupBy(['slot', 'kind', 'verdict', ...grouped] as any)
    .execute();
  return rows.map((row) => {
    const record = row as Record<string, unknown>;
    const values: RollupSlice['values'] = {};
    for (const dimension of query.groupBy) {
      const value = record[dimension];
      values[dimension] = typeof value === 'string' ? value : Number(value);
    }
    return {
      slot: Number(record['slot']),
      values,
      kind: String(record['kind']),
      verdict: String(record['verdict']),
      count: Number(record['count']),
    };
  });
}
