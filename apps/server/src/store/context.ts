import type { Connection, Engine } from './connect.js';
import { ENGINE_TRAITS, type EngineTraits } from './engine-traits.js';
import type { EventLedger } from './event-ledger.js';
import { postgresLedger } from './event-ledger-postgres.js';
import { sqliteLedger } from './event-ledger-sqlite.js';
import type { NumberedPage, NumberedPageRequest, PageRequest } from './rows.js';
import type { Db } from './schema.js';

/**
 * What every module of the store works with: the database, or the transaction it runs in, and its
 * engine's traits and event ledger (chosen once, when the store is opened). The engine's name is
 * not here on purpose: what differs between engines is a trait or the ledger, never a branch.
 */
export interface StoreContext {
  readonly db: Db;
  readonly traits: EngineTraits;
  readonly ledger: EventLedger;
  /** `PLACARD_BILLING_TIME_ZONE`: the zone whose months advertisers' monthly budgets count (D18). */
  readonly billingTimeZone: string;
}

/** Each engine's event ledger, made for a newly opened connection. */
const LEDGERS: { readonly [E in Engine]: (connection: Connection) => EventLedger } = {
  sqlite: (connection) => sqliteLedger(connection.sqlite ?? missingHandle()),
  postgres: () => postgresLedger,
};

/** The context of a newly opened connection. */
export function openContext(connection: Connection, billingTimeZone = 'UTC'): StoreContext {
  return {
    db: connection.db,
    traits: ENGINE_TRAITS[connection.engine],
    ledger: LEDGERS[connection.engine](connection),
    billingTimeZone,
  };
}

function missingHandle(): never {
  throw new Error('this SQLite store has no database handle');
}

/** Runs `body` in one transaction; inside a transaction it simply joins it. */
export function transact<T>(ctx: StoreContext, body: (tx: StoreContext) => Promise<T>): Promise<T> {
  if (ctx.db.isTransaction) return body(ctx);
  return ctx.db.transaction().execute((db) => body({ ...ctx, db }));
}

export const DEFAULT_PAGE = 50;

export function page<T extends { where: (...args: never[]) => T }>(
  query: T,
  request: PageRequest,
  idColumn: string,
): T {
  // Typed loosely on purpose: every paged table has a numeric `id` column, which Kysely's types
  // cannot say of a generic query.
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
  let q = query as any;
  const newestFirst = request.newestFirst === true;
  if (request.after !== undefined) q = q.where(idColumn, newestFirst ? '<' : '>', request.after);
  return q.orderBy(idColumn, newestFirst ? 'desc' : 'asc').limit(request.limit ?? DEFAULT_PAGE);
  /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
}

/**
 * One numbered page of the rows of `filtered`, newest (highest `order` column, the next column
 * breaking ties) first, each made a record by `toRecord`, and how many rows it selects: every list
 * the dashboard pages through reads this way. `filtered` is a query with its conditions and nothing selected (every column is read),
 * or, with `selected`, one whose columns are already chosen (a join such as the keys' usage): its
 * count clears that choice, so the join must not multiply rows.
 */
export async function numberedPage<Row, Record>(
  filtered: unknown,
  order: string | readonly string[],
  request: NumberedPageRequest,
  toRecord: (row: Row) => Record,
  { selected = false }: { selected?: boolean } = {},
): Promise<NumberedPage<Record>> {
  // Typed loosely for the reason `page` is: Kysely's types cannot say a generic query has `id`.
  /* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
  const query = filtered as any;
  let rows = selected ? query : query.selectAll();
  for (const column of typeof order === 'string' ? [order] : order) rows = rows.orderBy(column, 'desc');
  const counting = selected ? query.clearSelect() : query;
  const [found, counted] = await Promise.all([
    rows.limit(request.size).offset(request.offset).execute(),
    counting.select((eb: any) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: (found as Row[]).map(toRecord), total: Number(counted.total) };
  /* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
}
