import type { CreateTableBuilder } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * Adds an auto-incrementing `id` primary key: SQLite's rowid alias, PostgreSQL's bigserial. For
 * migrations from 008 on (released migrations keep their own copy: they are never edited).
 */
export function withId(engine: Engine) {
  return <T extends string>(table: CreateTableBuilder<T>) =>
    engine === 'sqlite'
      ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
      : table.addColumn('id', 'bigserial', (c) => c.primaryKey());
}
