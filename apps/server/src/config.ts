import path from 'node:path';
import { FLAG_INTERVAL_MS } from './domain/key-flags.js';
import { DEFAULT_EVENT_TIME_WINDOW_MS } from './domain/event-time.js';
import { CURRENCY_RULE, isCurrencyCode, readMoney, type Micros } from './domain/money.js';
import { isTimeZone } from './domain/time-zones.js';
import { parseProxyRange } from './http/client-address.js';

/** How long partners may reuse a fetch answer unless configured: changes reach pages within this. */
export const DEFAULT_FETCH_MAX_AGE_SECONDS = 5;

/** The currency of a deployment that names none. */
export const DEFAULT_CURRENCY = 'USD';

/** Where every key this deployment writes in Redis starts unless configured. */
export const DEFAULT_REDIS_KEY_PREFIX = 'placard:';

/**
 * How long a closing instance keeps accepting connections unless configured (see `drainDelayMs`):
 * twice what the reference cluster's HAProxy takes to notice (2 failed checks 500 ms apart).
 */
export const DEFAULT_DRAIN_DELAY_MS = 2_000;

/** The whole service configuration, parsed once at start and frozen. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** `sqlite:<file>` or a `postgres://` URL; derived from dataDir when not set. */
  readonly databaseUrl: string;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How often every instance polls the store for changes to campaigns, placements and keys. */
  readonly refreshIntervalMs: number;
  /** Log one JSON line per request (route, status, duration). */
  readonly accessLog: boolean;
  /** An admin token to accept on the management API (registered at start); optional. */
  readonly adminToken: string | undefined;
  /** Revoke, at start, the tokens PLACARD_ADMIN_TOKEN named before the one it names now. */
  readonly revokePreviousAdminTokens: boolean;
  /** Days raw events are kept before background pruning; per-minute rollups are kept for good. */
  readonly eventRetentionDays: number;
  /** Seconds partners may reuse a fetch answer (`Cache-Control: private, max-age=N`); 0 forbids it. */
  readonly fetchMaxAgeSeconds: number;
  /** PostgreSQL: how long a statement or a new connection may take before its request gets 503. */
  readonly storeDeadlineMs: number;
  /** A `redis://` URL to share rate limits between instances; unset keeps them in memory. */
  readonly redisUrl: string | undefined;
  /** Start of every key this deployment writes in Redis, so deployments can share one database. */
  readonly redisKeyPrefix: string;
  /** Where people reach this deployment: the start of the one-time links the CLI and dashboard give out. */
  readonly publicUrl: string;
  /** Signs serve tokens (D15); unset: one generated at first start and kept in the store. */
  readonly tokenSecret: string | undefined;
  /** How often (ms) each instance's key flag job judges every key's last 5 minutes (D15). */
  readonly flagIntervalMs: number;
  /** How old (ms) a partner's `occurredAt` may be before the event is refused (D15). */
  readonly eventTimeWindowMs: number;
  /**
   * After SIGTERM, how long (ms) the instance fails readiness and answers every new request 503
   * before it stops accepting connections: long enough for a load balancer to notice.
   */
  readonly drainDelayMs: number;
  /** Addresses or CIDR ranges of reverse proxies whose `X-Forwarded-For` names the client. */
  readonly trustedProxies: readonly string[];
  /**
   * Fetches an hour an even campaign's placement is assumed to see until a full day of its traffic
   * is known (D16); 0: not assumed, each campaign starts at a small chance and learns them.
   */
  readonly pacingPriorFetchesPerHour: number;
  /** The ISO 4217 code of the one currency every amount of this deployment is in, as integer micros. */
  readonly currency: string;
  /** The IANA time zone billing dates are in: the day a revenue share takes effect, monthly statements (D18). */
  readonly billingTimeZone: string;
  /** A partner statement whose total is below this (micros) pays nothing and carries it forward (D18). */
  readonly minimumPayoutMicros: Micros;
  /** Webhooks may go to this machine (loopback), over plain http too: for development (D19). */
  readonly webhooksAllowLoopback: boolean;
  /** Webhooks may go to private networks (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10) (D19). */
  readonly webhooksAllowPrivate: boolean;
}

/** Thrown for a bad environment value; `main` prints the message and exits non-zero. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

interface Setting<K extends keyof Config> {
  key: K;
  env: string;
  description: string;
  /** Default shown in the docs; `undefined` means derived or unset. */
  defaultText: string;
  parse: (raw: string | undefined, partial: Partial<Config>) => Config[K];
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(env: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${env} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return Number(raw);
}

/** Visible ASCII (no spaces or control characters), `min` to `max` long; unset or empty: `fallback`. */
function visibleAscii<T>(
  env: string,
  raw: string | undefined,
  fallback: T,
  min: number,
  max: number,
): string | T {
  if (raw === undefined || raw === '') return fallback;
  if (raw.length < min || raw.length > max || !/^[\x21-\x7e]*$/.test(raw)) {
    throw new ConfigError(`${env} must be ${min} to ${max} visible ASCII characters`);
  }
  return raw;
}

/** A value `pattern` matches, said in `what` when it does not; unset or empty: undefined. */
function matching(env: string, raw: string | undefined, pattern: RegExp, what: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!pattern.test(raw)) throw new ConfigError(`${env} must be ${what}`);
  return raw;
}

function boolean(env: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(`${env} must be true or false (got "${raw}")`);
}

/**
 * Every `PLACARD_*` variable, in the order they are parsed (later ones may depend on earlier).
 * The README's configuration table is checked against this list by a test.
 */
export const SETTINGS: ReadonlyArray<Setting<keyof Config>> = [
  {
    key: 'host',
    env: 'PLACARD_HOST',
    description: 'Address the HTTP server listens on.',
    defaultText: '127.0.0.1',
    parse: (raw) => (raw === undefined || raw === '' ? '127.0.0.1' : raw),
  },
  {
    key: 'port',
    env: 'PLACARD_PORT',
    description: 'TCP port of the HTTP server (0 picks a free port).',
    defaultText: '8080',
    parse: (raw) => integer('PLACARD_PORT', raw, 8080, 0, 65535),
  },
  {
    key: 'dataDir',
    env: 'PLACARD_DATA_DIR',
    description:
      'Directory for the embedded SQLite database and the demo key file; Placard creates it and its files readable by their owner only.',
    defaultText: './data',
    parse: (raw) => path.resolve(raw === undefined || raw === '' ? 'data' : raw),
  },
  {
    key: 'databaseUrl',
    env: 'PLACARD_DATABASE_URL',
    description:
      '`postgres://user@host:port/db` to use PostgreSQL, or `sqlite:<file>`. Default: `sqlite:<data dir>/placard.db`.',
    defaultText: 'sqlite:<data dir>/placard.db',
    parse: (raw, partial) => {
      if (raw === undefined || raw === '')
        return `sqlite:${path.join(partial.dataDir ?? 'data', 'placard.db')}`;
      if (/^postgres(ql)?:\/\//.test(raw)) return raw;
      if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) {
        return `sqlite:${path.resolve(raw.slice('sqlite:'.length))}`;
      }
      throw new ConfigError('PLACARD_DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
    },
  },
  {
    key: 'logLevel',
    env: 'PLACARD_LOG_LEVEL',
    description: `Log level: ${LOG_LEVELS.join(', ')}.`,
    defaultText: 'info',
    parse: (raw) => {
      const value = raw === undefined || raw === '' ? 'info' : raw;
      if (!(LOG_LEVELS as readonly string[]).includes(value)) {
        throw new ConfigError(`PLACARD_LOG_LEVEL must be one of: ${LOG_LEVELS.join(', ')} (got "${value}")`);
      }
      return value;
    },
  },
  {
    key: 'refreshIntervalMs',
    env: 'PLACARD_REFRESH_INTERVAL_MS',
    description:
      'How often (ms) each instance checks the store for changed campaigns, placements and keys. Changes are served within about twice this.',
    defaultText: '500',
    parse: (raw) => integer('PLACARD_REFRESH_INTERVAL_MS', raw, 500, 50, 60_000),
  },
  {
    key: 'accessLog',
    env: 'PLACARD_ACCESS_LOG',
    description: 'Log one JSON line per request (request id, route, status, duration).',
    defaultText: 'false',
    parse: (raw) => boolean('PLACARD_ACCESS_LOG', raw, false),
  },
  {
    key: 'adminToken',
    env: 'PLACARD_ADMIN_TOKEN',
    description:
      'Admin token for the management API (`pla_` + 40 letters and digits), e.g. from a secret store. Without it, a token is generated at first start and printed once.',
    defaultText: '(generated)',
    parse: (raw) =>
      matching(
        'PLACARD_ADMIN_TOKEN',
        raw,
        /^pla_[0-9A-Za-z]{40}$/,
        '"pla_" followed by 40 letters and digits',
      ),
  },
  {
    key: 'revokePreviousAdminTokens',
    env: 'PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS',
    description:
      'With `true`, an instance that starts with `PLACARD_ADMIN_TOKEN` revokes every token an earlier value of it registered, so rotating the token retires the old one. Otherwise an old one stays valid, and each start logs it with the command that revokes it.',
    defaultText: 'false',
    parse: (raw) => boolean('PLACARD_REVOKE_PREVIOUS_ADMIN_TOKENS', raw, false),
  },
  {
    key: 'eventRetentionDays',
    env: 'PLACARD_EVENT_RETENTION_DAYS',
    description:
      'Days raw impression and click events are kept; older ones are pruned in the background. Per-minute rollups (and so reports) are kept. SQLite deletes expired events in small batches, so they are kept exactly this long; PostgreSQL keeps them in one partition per UTC day and drops a day once all of it has expired, so they are kept at least this long and at most a day longer.',
    defaultText: '90',
    parse: (raw) => integer('PLACARD_EVENT_RETENTION_DAYS', raw, 90, 1, 36_500),
  },
  {
    key: 'fetchMaxAgeSeconds',
    env: 'PLACARD_FETCH_MAX_AGE',
    description:
      'Seconds a partner may reuse a fetch answer, sent as `Cache-Control: private, max-age=N` (`no-store` when 0). A paused or capped campaign can stay on partners’ pages this long.',
    defaultText: String(DEFAULT_FETCH_MAX_AGE_SECONDS),
    parse: (raw) => integer('PLACARD_FETCH_MAX_AGE', raw, DEFAULT_FETCH_MAX_AGE_SECONDS, 0, 3_600),
  },
  {
    key: 'storeDeadlineMs',
    env: 'PLACARD_STORE_DEADLINE_MS',
    description:
      'PostgreSQL: milliseconds a statement or a new connection may take while serving; past it the request gets `503` with `Retry-After`. Migrations and the CLI have no deadline.',
    defaultText: '5000',
    parse: (raw) => integer('PLACARD_STORE_DEADLINE_MS', raw, 5_000, 100, 600_000),
  },
  {
    key: 'redisUrl',
    env: 'PLACARD_REDIS_URL',
    description:
      '`redis://[user:password@]host:port[/db]` (or `rediss://`) to share rate limits between instances. If Redis becomes unreachable, each instance limits on its own until it is back. Unset: limits in memory.',
    defaultText: '(unset)',
    parse: (raw) => matching('PLACARD_REDIS_URL', raw, /^rediss?:\/\/[^\s]+$/, 'a redis:// or rediss:// URL'),
  },
  {
    key: 'redisKeyPrefix',
    env: 'PLACARD_REDIS_KEY_PREFIX',
    description:
      'Start of every key Placard writes in Redis. Give each deployment that shares one Redis database its own (say `placard-staging:`), or their rate limits are one.',
    defaultText: DEFAULT_REDIS_KEY_PREFIX,
    parse: (raw) => visibleAscii('PLACARD_REDIS_KEY_PREFIX', raw, DEFAULT_REDIS_KEY_PREFIX, 1, 64),
  },
  {
    key: 'publicUrl',
    env: 'PLACARD_PUBLIC_URL',
    description:
      "Where people reach the dashboard, such as `https://ads.example.com`: the start of the invitation and password-reset links Placard gives out, and of the addresses the dashboard shows to copy (a report's link, the integration page's commands). Default: `http://127.0.0.1:<port>`.",
    defaultText: 'http://127.0.0.1:<port>',
    parse: (raw, partial) => {
      if (raw === undefined || raw === '') return `http://127.0.0.1:${partial.port ?? 8080}`;
      let url: URL | undefined;
      try {
        url = new URL(raw);
      } catch {
        url = undefined;
      }
      if (!url || !['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
        throw new ConfigError(`PLACARD_PUBLIC_URL must be an http:// or https:// address (got "${raw}")`);
      }
      return url.href.replace(/\/$/, '');
    },
  },
  {
    key: 'tokenSecret',
    env: 'PLACARD_TOKEN_SECRET',
    description:
      'The secret that signs serve tokens (fetch with `tokens=true`), 32 to 1024 visible ASCII characters, e.g. from a secret store; every instance needs the same. Unset: one is generated at first start and kept in the database, which every instance then reads. Changing it makes the tokens handed out in the last hour `bad token`.',
    defaultText: '(generated)',
    parse: (raw) => visibleAscii('PLACARD_TOKEN_SECRET', raw, undefined, 32, 1024),
  },
  {
    key: 'flagIntervalMs',
    env: 'PLACARD_FLAG_INTERVAL_MS',
    description:
      'How often (ms) each instance judges every key’s traffic of the last 5 minutes for flags (D15). A flag comes at most this long after its evidence is there; the window and thresholds do not change with it.',
    defaultText: String(FLAG_INTERVAL_MS),
    parse: (raw) => integer('PLACARD_FLAG_INTERVAL_MS', raw, FLAG_INTERVAL_MS, 1_000, 3_600_000),
  },
  {
    key: 'eventTimeWindowMs',
    env: 'PLACARD_EVENT_TIME_WINDOW_MS',
    description:
      'How old (ms) the `occurredAt` of an impression or click may be (D15): a partner catching up after an outage sends its backlog with the times its events happened, and is judged on them. An older one is refused with `400`. Keep it within a serve token’s lifetime and the click window, which are counted on the same times.',
    defaultText: String(DEFAULT_EVENT_TIME_WINDOW_MS),
    parse: (raw) =>
      integer('PLACARD_EVENT_TIME_WINDOW_MS', raw, DEFAULT_EVENT_TIME_WINDOW_MS, 10_000, 3_600_000),
  },
  {
    key: 'drainDelayMs',
    env: 'PLACARD_DRAIN_DELAY_MS',
    description:
      'After `SIGTERM`, how long (ms) the instance keeps accepting connections while `/readyz` fails, answering every new request `503` with `Retry-After` and `Connection: close`, before it stops listening. Set it above the time your load balancer takes to take a failing instance out.',
    defaultText: String(DEFAULT_DRAIN_DELAY_MS),
    parse: (raw) => integer('PLACARD_DRAIN_DELAY_MS', raw, DEFAULT_DRAIN_DELAY_MS, 0, 120_000),
  },
  {
    key: 'trustedProxies',
    env: 'PLACARD_TRUSTED_PROXIES',
    description:
      'Comma-separated addresses or CIDR ranges of the reverse proxies or load balancers in front of Placard, such as `10.0.0.5,10.1.0.0/16`. A request from one of them is counted against the client its `X-Forwarded-For` names (the nearest address there that is not a listed proxy) by the limits on failed authentication and sign-in; from any other address the header is ignored. Unset: every client is its TCP peer, so behind a proxy all clients count as one.',
    defaultText: '(unset)',
    parse: (raw) => {
      if (raw === undefined || raw.trim() === '') return [];
      const entries = raw.split(',').map((entry) => entry.trim());
      const bad = entries.find((entry) => parseProxyRange(entry) === undefined);
      if (bad !== undefined) {
        throw new ConfigError(
          `PLACARD_TRUSTED_PROXIES must list addresses or CIDR ranges separated by commas (got "${bad}")`,
        );
      }
      return entries;
    },
  },
  {
    key: 'pacingPriorFetchesPerHour',
    env: 'PLACARD_PACING_PRIOR_FETCHES_PER_HOUR',
    description:
      'Fetches an hour that even pacing (D16) assumes each placement sees until it has a full day of traffic; 0 assumes none: a new campaign starts at a small chance and learns them from its own draws.',
    defaultText: '0',
    parse: (raw) => integer('PLACARD_PACING_PRIOR_FETCHES_PER_HOUR', raw, 0, 0, 1_000_000_000),
  },
  {
    key: 'currency',
    env: 'PLACARD_CURRENCY',
    description:
      'The currency of every amount, an ISO 4217 code such as `EUR` or `JPY`, in capitals. Amounts are kept as whole millionths of it and never converted: choose it before any money is recorded.',
    defaultText: DEFAULT_CURRENCY,
    parse: (raw) => {
      if (raw === undefined || raw === '') return DEFAULT_CURRENCY;
      if (!isCurrencyCode(raw)) throw new ConfigError(`PLACARD_CURRENCY ${CURRENCY_RULE} (got "${raw}")`);
      return raw;
    },
  },
  {
    key: 'billingTimeZone',
    env: 'PLACARD_BILLING_TIME_ZONE',
    description:
      "The IANA time zone of billing dates, such as `Europe/Paris`: a revenue share dated a day takes effect at that day's midnight there, and monthly statements close at its month ends.",
    defaultText: 'UTC',
    parse: (raw) => {
      if (raw === undefined || raw === '') return 'UTC';
      if (!isTimeZone(raw)) {
        throw new ConfigError(
          `PLACARD_BILLING_TIME_ZONE must be an IANA time zone such as UTC or Europe/Paris (got "${raw}")`,
        );
      }
      return raw;
    },
  },
  {
    key: 'minimumPayoutMicros',
    env: 'PLACARD_MINIMUM_PAYOUT',
    description:
      "The smallest amount paid out to a partner, in units of the currency such as `50` or `50.00`: a monthly statement whose total is below it pays nothing and carries the total forward to the next month's statement.",
    defaultText: '0',
    parse: (raw) => {
      const read = readMoney(raw === undefined || raw === '' ? '0' : raw);
      if ('problem' in read) throw new ConfigError(`PLACARD_MINIMUM_PAYOUT ${read.problem} (got "${raw}")`);
      return read.micros;
    },
  },
  {
    key: 'webhooksAllowLoopback',
    env: 'PLACARD_WEBHOOKS_ALLOW_LOOPBACK',
    description:
      'With `true`, webhook endpoints may be on this machine (127.0.0.0/8, ::1, `localhost`), over plain `http` too: for developing a receiver. Otherwise endpoints must be `https` and resolve to public addresses.',
    defaultText: 'false',
    parse: (raw) => boolean('PLACARD_WEBHOOKS_ALLOW_LOOPBACK', raw, false),
  },
  {
    key: 'webhooksAllowPrivate',
    env: 'PLACARD_WEBHOOKS_ALLOW_PRIVATE',
    description:
      'With `true`, webhook endpoints may resolve to private networks (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7, 100.64.0.0/10), for receivers inside your own network. Link-local and cloud metadata addresses are refused whatever this says.',
    defaultText: 'false',
    parse: (raw) => boolean('PLACARD_WEBHOOKS_ALLOW_PRIVATE', raw, false),
  },
];

/** Parses the environment against {@link SETTINGS}; throws {@link ConfigError} on the first bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const partial: Record<string, unknown> = {};
  for (const setting of SETTINGS) {
    partial[setting.key] =
      setting.key in overrides ? overrides[setting.key] : setting.parse(env[setting.env], partial);
  }
  return Object.freeze(partial as unknown as Config);
}
