import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { withId as idColumn } from './table-ids.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * People (D13): users with a role in one account (the operator, an advertiser or a partner), the
 * one-time links that let them set a password (invitations and resets), and their sessions. Links
 * and sessions are stored as SHA-256 digests, so a copy of the database opens no account.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  const withId = idColumn(engine);

  await withId(db.schema.createTable('users'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('account_kind', 'text', (c) => c.notNull())
    .addColumn('account_id', 'bigint')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('password_changed_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .execute();
  await db.schema.createIndex('users_account').on('users').columns(['account_kind', 'account_id']).execute();

  await withId(db.schema.createTable('user_links'))
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id'))
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('user_links_user').on('user_links').column('user_id').execute();

  await withId(db.schema.createTable('sessions'))
    .addColumn('digest', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
}
