// Standard Webhooks signatures (https://www.standardwebhooks.com): secrets, message ids and the
// `webhook-signature` header. Written with node:crypto rather than the `standardwebhooks` package:
// signing is the specification's one formula (HMAC-SHA256 over `id.timestamp.body`), node:crypto
// computes it natively, and the tests verify every signature with that package instead, so the two
// sides are independent implementations that must agree.
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new endpoint secret: `whsec_` and 32 random bytes in base64, as the specification has them. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A new message id (the `webhook-id` header): `msg_` and 16 random bytes, URL-safe. */
export function newMessageId(): string {
  return `msg_${randomBytes(16).toString('base64url')}`;
}

/** One `v1,<base64>` signature of a delivery with one secret. */
function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/**
 * The three Standard Webhooks headers of a delivery. During a rotation's overlap `secrets` holds the
 * new secret and the previous one, and the signature header carries both signatures, space
 * separated, so a receiver still configured with the previous secret verifies it too.
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  at: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(at / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}
