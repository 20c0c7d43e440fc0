import type { CompiledQuery } from 'kysely';
import { micros, type Micros } from '../domain/money.js';
import type { ReportDimension } from '../domain/report-request.js';
import { rollupsCompactedBefore } from './campaign-rollups.js';
import { QUARTER_HOUR } from './event-ledger.js';
import type { Db } from './schema.js';

/** The column behind each dimension in a rollup table ('' in country, device and reason means absent). */
const COLUMNS = {
  campaign: 'campaign_id',
  partner: 'partner_id',
  placement: 'placement_id',
  country: 'country',
  device: 'device',
  verdict: 'verdict',
  reason: 'reason',
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

/** Summed rollup counts and spend of one time slot and one combination of the grouped dimensions. */
export interface RollupSlice {
  slot: number;
  values: Partial<Record<ReportDimension, string | number>>;
  kind: string;
  verdict: string;
  count: number;
  /** What the slice's events cost (only counted events of a priced campaign cost anything). */
  spend: Micros;
  /** What the slice's events earned their partners (their share of the cost, fixed with it). */
  earnings: Micros;
  /** How many of the slice's events named a viewer (D20). */
  withViewer: number;
}

/** The per-minute rollups, or their sums by campaign and quarter hour (migration 013). */
type RollupTable = 'event_rollups_live' | 'campaign_rollups';

/** A statement of a report: summed slices of one table over part of the range. */
export interface RollupStatement {
  execute(): Promise<Record<string, unknown>[]>;
  compile(): CompiledQuery;
}

/** The dimensions `campaign_rollups` can answer for: the campaign, and through it the advertiser. */
const BY_CAMPAIGN: readonly ReportDimension[] = ['campaign', 'advertiser'];

/**
 * One statement: the rows of `table` from `from` to `to` (exclusive) summed into the query's slots
 * and grouped by its dimensions (`campaigns` is joined only to group by advertiser).
 */
function slicesOf(db: Db, table: RollupTable, from: number, to: number, query: RollupQuery): RollupStatement {
  // Typed as `event_rollups_live`: `campaign_rollups` has the columns read here under the same names,
  // but for its time, the quarter hour's start, in `slot`.
  const time = (
    table === 'event_rollups_live' ? 'event_rollups_live.minute' : 'campaign_rollups.slot'
  ) as 'event_rollups_live.minute';
  const column = (name: string) => `${table}.${name}` as 'event_rollups_live.campaign_id';
  const dimensionColumn = (dimension: ReportDimension) =>
    dimension === 'advertiser' ? 'campaigns.advertiser_id' : column(COLUMNS[dimension]);
  let select = db
    .selectFrom(table as 'event_rollups_live')
    .$if(query.groupBy.includes('advertiser'), (q) =>
      q.innerJoin('campaigns', 'campaigns.id', column('campaign_id')),
    )
    .where(time, '>=', from)
    .where(time, '<', to);
  for (const [dimension, values] of Object.entries(query.filters) as [
    ReportDimension,
    (string | number)[],
  ][]) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the column is one of COLUMNS, chosen at run time
    select = select.where(dimensionColumn(dimension) as any, 'in', values);
  }
  const grouped = query.groupBy.filter((dimension) => dimension !== 'verdict');
  return (
    select
      .select((eb) => [
        eb(eb.ref(time), '-', eb(eb.ref(time), '%', query.slotMs)).as('slot'),
        eb.ref(column('kind') as 'event_rollups_live.kind').as('kind'),
        eb.ref(column('verdict') as 'event_rollups_live.verdict').as('verdict'),
        eb.fn.sum<number | string>(column('count') as 'event_rollups_live.count').as('count'),
        eb.fn.sum<number | string>(column('spend_micros') as 'event_rollups_live.spend_micros').as('spend'),
        eb.fn
          .sum<number | string>(column('earnings_micros') as 'event_rollups_live.earnings_micros')
          .as('earnings'),
        eb.fn
          .sum<number | string>(column('with_viewer') as 'event_rollups_live.with_viewer')
          .as('with_viewer'),
        // The verdict is selected above already; grouping by it adds no second column.
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
        ...grouped.map((dimension) => eb.ref(dimensionColumn(dimension) as any).as(dimension)),
      ])
      // `slot` is a column of campaign_rollups too, which PostgreSQL groups by rather than by the
      // alias: the same thing there, since its slots are the quarter hours the query sums into.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- grouping by the aliases selected above
      .groupBy(['slot', 'kind', 'verdict', ...grouped] as any)
  );
}

/**
 * The query with its advertiser filter turned into a filter of their campaigns (within the campaign
 * filter, if any), or null when that leaves no campaign. Both tables are then read by campaign
 * (through `event_rollups_campaign`, and in the order of `campaign_rollups`): as a subquery or a
 * join, the planners were free to read every campaign's rows of the range instead, and PostgreSQL
 * did on small tables.
 */
export async function byCampaign(db: Db, query: RollupQuery): Promise<RollupQuery | null> {
  const { advertiser, ...filters } = query.filters;
  if (advertiser === undefined) return query;
  const rows = await db
    .selectFrom('campaigns')
    .select('id')
    .where('advertiser_id', 'in', advertiser.map(Number))
    .execute();
  const named = filters.campaign?.map(Number);
  const campaigns = rows
    .map((row) => Number(row.id))
    .filter((id) => named === undefined || named.includes(id));
  return campaigns.length === 0 ? null : { ...query, filters: { ...filters, campaign: campaigns } };
}

/**
 * The statements a report runs (its advertiser filter already turned into campaigns by
 * `byCampaign`), given how far `campaign_rollups` go (`compactedBefore`). Reports by quarter hour
 * (hour and day) that need no dimension but the campaign or advertiser read `campaign_rollups` for
 * the whole quarter hours before that mark, and the per-minute rollups for the rest of the range;
 * every other report reads the per-minute rollups. Each minute of the range is read from one table
 * only, so the slices simply add up (the caller sums them by slot).
 */
export function rollupStatements(db: Db, query: RollupQuery, compactedBefore: number): RollupStatement[] {
  const dimensions = [...query.groupBy, ...(Object.keys(query.filters) as ReportDimension[])];
  const start = Math.ceil(query.from / QUARTER_HOUR) * QUARTER_HOUR;
  const end = Math.max(start, Math.min(query.to - (query.to % QUARTER_HOUR), compactedBefore));
  if (
    query.slotMs !== QUARTER_HOUR ||
    !dimensions.every((dimension) => BY_CAMPAIGN.includes(dimension)) ||
    start >= end
  )
    return [slicesOf(db, 'event_rollups_live', query.from, query.to, query)];
  return [
    ...(query.from < start ? [slicesOf(db, 'event_rollups_live', query.from, start, query)] : []),
    slicesOf(db, 'campaign_rollups', start, end, query),
    ...(end < query.to ? [slicesOf(db, 'event_rollups_live', end, query.to, query)] : []),
  ];
}

/**
 * Reads the rollups (counts, spend and earnings) summed into slots and grouped by the asked dimensions. A slot may come in more
 * than one slice (from both tables); the caller adds them up. Consistent without a transaction:
 * rollups are never deleted, and `campaign_rollups` before the mark change only together with the
 * per-minute rows they sum, so a compaction or a batch in between reads like one just after.
 */
export async function readRollups(db: Db, asked: RollupQuery): Promise<RollupSlice[]> {
  const query = await byCampaign(db, asked);
  if (query === null) return [];
  const compactedBefore = query.slotMs === QUARTER_HOUR ? await rollupsCompactedBefore(db) : 0;
  const slices: RollupSlice[] = [];
  for (const statement of rollupStatements(db, query, compactedBefore)) {
    for (const record of await statement.execute()) {
      const values: RollupSlice['values'] = {};
      for (const dimension of query.groupBy) {
        const value = record[dimension];
        values[dimension] = typeof value === 'string' ? value : Number(value);
      }
      slices.push({
        slot: Number(record['slot']),
        values,
        kind: String(record['kind']),
        verdict: String(record['verdict']),
        count: Number(record['count']),
        // PostgreSQL sums bigints into a numeric, which node-postgres gives as a string.
        spend: micros(record['spend'] as number | string),
        earnings: micros(record['earnings'] as number | string),
        withViewer: Number(record['with_viewer']),
      });
    }
  }
  return slices;
}
