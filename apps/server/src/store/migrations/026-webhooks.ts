import type { Kysely } from 'kysely';
import type { Engine } from '../connect.js';
import { withId } from './table-ids.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations must not depend on the current schema type
type AnyDb = Kysely<any>;

/**
 * Webhooks (D19): endpoints, their outbox, and every delivery attempt.
 *
 * - `webhook_endpoints`: an account's (`operator`, `advertiser:<id>`, `partner:<id>`) URL, the event
 *   types it takes (a JSON array), its `whsec_` secret and, while a rotation's overlap lasts, the
 *   previous one. The delivery state is the endpoint's, not each message's, because messages go out
 *   in the order they were written, one at a time: `next_attempt_at` (when the oldest waiting
 *   message may be tried), `failures` in a row and `failing_since`; `claimed_until` and
 *   `claimed_by` are one instance's claim on the endpoint (so a message is in flight on one
 *   instance at most); `disabled_at` with its reason once it failed for the whole retry period.
 * - `webhook_messages`: the outbox. A row per endpoint and event, written in the transaction of the
 *   change that caused it; `message_id` (`msg_…`) is the `webhook-id` every attempt sends, so a
 *   receiver recognises a repeat. `delivered_at` is set on the first 2xx.
 * - `webhook_attempts`: each attempt, with the answer's status, its first bytes, or the error.
 * - `webhook_key_expiry_notices`: the keys whose `key.expiring` was written, with the expiry it was
 *   for (a key given a new expiry is told again), so each instance's pass tells it once.
 */
export async function up(db: AnyDb, engine: Engine): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .$call(withId(engine))
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('event_types', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failing_since', 'bigint')
    .addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('claimed_by', 'text')
    .addColumn('disabled_at', 'bigint')
    .addColumn('disabled_reason', 'text')
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_account')
    .on('webhook_endpoints')
    .column('account')
    .execute();
  await db.schema
    .createTable('webhook_messages')
    .$call(withId(engine))
    .addColumn('message_id', 'text', (c) => c.notNull().unique())
    .addColumn('endpoint_id', 'bigint', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('delivered_at', 'bigint')
    .execute();
  // The delivery job's question: an endpoint's oldest message not yet delivered.
  await db.schema
    .createIndex('webhook_messages_waiting')
    .on('webhook_messages')
    .columns(['endpoint_id', 'delivered_at', 'id'])
    .execute();
  await db.schema
    .createTable('webhook_attempts')
    .$call(withId(engine))
    .addColumn('message_id', 'bigint', (c) => c.notNull())
    .addColumn('endpoint_id', 'bigint', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('answer', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('error', 'text')
    .addColumn('instance', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_message')
    .on('webhook_attempts')
    .columns(['message_id', 'id'])
    .execute();
  await db.schema
    .createTable('webhook_key_expiry_notices')
    .addColumn('api_key_id', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_key_expiry_notices_pk', ['api_key_id', 'expires_at'])
    .execute();
}
