import { CompiledQuery, sql, type Insertable } from 'kysely';
import type { Database, Db } from '../../src/store/schema.js';

/** The plan of a compiled statement, one JSON line per row of EXPLAIN's answer. */
export async function planOf(db: Db, engine: 'sqlite' | 'postgres', query: CompiledQuery): Promise<string> {
  const explain = engine === 'sqlite' ? 'explain query plan ' : 'explain ';
  const plan = await db.executeQuery(CompiledQuery.raw(explain + query.sql, [...query.parameters]));
  return plan.rows.map((row) => JSON.stringify(row)).join('\n');
}

/**
 * Inserts rows in batches, then has PostgreSQL gather the table's statistics. SQLite plans
 * without statistics (the store never runs ANALYZE): that is where picking rows in key order
 * walked a whole table. PostgreSQL plans from the statistics its autovacuum keeps, and without
 * them would rightly scan tables this small.
 */
export async function fill<T extends keyof Database>(
  db: Db,
  engine: 'sqlite' | 'postgres',
  table: T,
  rows: ReadonlyArray<Insertable<Database[T]>>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 500))
      .execute();
  if (engine === 'postgres') await sql`analyze ${sql.table(table)}`.execute(db);
}
