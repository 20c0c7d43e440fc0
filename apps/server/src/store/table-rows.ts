// One row of one table, written or read the way most of the store's modules do: the queries their
// create, get and update functions share, so each module says only its table, columns and mapping.
import type { Insertable, Selectable, Updateable } from 'kysely';
import type { StoreContext } from './context.js';
import type { Database } from './schema.js';

type Table = keyof Database;

/* Typed loosely inside, for the reason `page` is (context.ts): Kysely's types cannot follow a query
   over a table named by a type parameter. The signatures keep the callers' rows and columns typed. */
/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return */

/** Inserts one row and returns it as stored (every column, defaults included). */
export function insertRow<T extends Table>(
  ctx: StoreContext,
  table: T,
  values: Insertable<Database[T]>,
): Promise<Selectable<Database[T]>> {
  const db = ctx.db as any;
  return db.insertInto(table).values(values).returningAll().executeTakeFirstOrThrow();
}

/** The row whose `column` holds `value` (every column), or undefined; the column is unique. */
export function rowWhere<T extends Table>(
  ctx: StoreContext,
  table: T,
  column: keyof Database[T] & string,
  value: string | number,
): Promise<Selectable<Database[T]> | undefined> {
  const db = ctx.db as any;
  return db.selectFrom(table).selectAll().where(column, '=', value).executeTakeFirst();
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
