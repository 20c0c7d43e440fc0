// One row of one table, written or read the way most of the store's modules do: the queries their
// create, get and update functions share, so each module says only its table, columns and mapping.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { StoreContext } from './context.js';
import type { Database } from './schema.js';

type Table = keyof Database;

/* Typed loosely inside, for the reason `page` is (context.ts): Kysely's types cannot follow a query
   over a table named by a type parameter. The signatures keep the callers' rows and columns typed. */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */

/**
 * Inserts one row and returns it as stored, defaults included: every column, or only `columns` (a
 * row holding a secret's digest returns the others, as the digest never leaves the store).
 */
export function insertRow<T extends Table>(
  ctx: StoreContext,
  table: T,
  values: Insertable<Database[T]>,
): Promise<Selectable<Database[T]>>;
export function insertRow<T extends Table, C extends keyof Selectable<Database[T]> & string>(
  ctx: StoreContext,
  table: T,
  values: Insertable<Database[T]>,
  columns: readonly C[],
): Promise<Pick<Selectable<Database[T]>, C>>;
export function insertRow(
  ctx: StoreContext,
  table: Table,
  values: unknown,
  columns?: readonly string[],
): Promise<unknown> {
  const inserted = (ctx.db as any).insertInto(table).values(values);
  return (columns ? inserted.returning(columns) : inserted.returningAll()).executeTakeFirstOrThrow();
}

/**
 * The row whose `column` holds `value` (the column is unique), made a record by `toRecord`, or
 * undefined: every column of it, or only `columns` (as `insertRow` returns them).
 */
export function findRow<T extends Table, Record>(
  ctx: StoreContext,
  table: T,
  column: keyof Database[T] & string,
  value: string | number,
  toRecord: (row: Selectable<Database[T]>) => Record,
): Promise<Record | undefined>;
export function findRow<T extends Table, C extends keyof Selectable<Database[T]> & string, Record>(
  ctx: StoreContext,
  table: T,
  column: keyof Database[T] & string,
  value: string | number,
  toRecord: (row: Pick<Selectable<Database[T]>, C>) => Record,
  columns: readonly C[],
): Promise<Record | undefined>;
export async function findRow(
  ctx: StoreContext,
  table: Table,
  column: string,
  value: string | number,
  toRecord: (row: any) => unknown,
  columns?: readonly string[],
): Promise<unknown> {
  const from = (ctx.db as any).selectFrom(table);
  const row = await (columns ? from.select(columns) : from.selectAll())
    .where(column, '=', value)
    .executeTakeFirst();
  return row && toRecord(row);
}

/** Sets the columns given on the row with this id; a column whose value is undefined is left as it is. */
export async function updateRow<T extends Table>(
  ctx: StoreContext,
  table: T,
  id: number,
  columns: Updateable<Database[T]>,
): Promise<void> {
  const db = ctx.db as any;
  // Kysely leaves a column whose value is undefined out of the SET clause.
  await db.updateTable(table).set(columns).where('id', '=', id).execute();
}

/* eslint-enable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */
