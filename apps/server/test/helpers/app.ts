import { micros } from '../../src/domain/money.js';
import { afterEach, beforeEach, expect } from 'vitest';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { HIGHEST_LIMITS } from '../../src/domain/rate-limits.js';
import { buildApp } from '../../src/http/app.js';
import { GroupCommitSink } from '../../src/ingest/group-commit.js';
import { CampaignService } from '../../src/services/campaigns.js';
import { PartnerService } from '../../src/services/partners.js';
import type { Store } from '../../src/store/store.js';
import { wireServices, type Services, type WiringOptions } from '../../src/wiring.js';
import { createDatabase, type TestDatabase } from './engines.js';
import { committedConformance } from './openapi-conformance.js';

/** A response read in full, shaped like Fastify's inject response so tests read naturally. */
export interface TestResponse {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json(): any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests inspect arbitrary bodies
}

export interface RequestOptions {
  method: string;
  url: string;
  headers?: Record<string, string>;
  payload?: string;
  /** The client's own address, e.g. `127.0.0.2` (Linux routes all of 127/8 to loopback). */
  localAddress?: string;
}

const agent = new http.Agent({ keepAlive: true });

/**
 * One HTTP request over loopback to a listening server. Every answer a test sees is checked against
 * the committed API document, so an answer the document does not describe fails the test that saw it.
 */
export function request(base: string, options: RequestOptions): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      new URL(options.url, base),
      // The agent pools connections per local address, so each address keeps its own.
      { method: options.method, headers: options.headers, agent, localAddress: options.localAddress },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const answer = { statusCode: res.statusCode ?? 0, headers: res.headers, body };
          const problem = committedConformance().problem(options.method, options.url, answer);
          if (problem !== undefined) {
            reject(new Error(`undocumented answer: ${problem}`));
            return;
          }
          resolve({
            statusCode: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json: () => JSON.parse(body),
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.payload);
  });
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  state: Services['state'];
  /** Everything the wiring created, for tests that drive a job by hand. */
  services: Services;
  database: TestDatabase;
  campaigns: CampaignService;
  partners: PartnerService;
  /** Base URL of the listening server, e.g. http://127.0.0.1:41234 */
  url: string;
  request(options: RequestOptions): Promise<TestResponse>;
  /** An admin token for the management API. */
  adminToken: string;
  /** A management API call with the admin token (or `token`); `body` is sent as JSON. */
  admin(method: string, path: string, body?: unknown, token?: string): Promise<TestResponse>;
  /** A valid key of a partner created for the test. */
  apiKey: string;
  apiKeyId: number;
  /** Imports campaigns for one advertiser and reloads the index; returns their ids in order. */
  addCampaigns(campaigns: unknown[], advertiser?: string): Promise<number[]>;
  fetch(query: string, key?: string): Promise<TestResponse>;
  track(kind: 'impression' | 'click', body: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  close(): Promise<void>;
}

/** The contract's answers to a tracked impression and click (2.2, 2.3), byte for byte. */
export const TRACKED_ANSWER = {
  impression: JSON.stringify({ status: 'success', message: 'Impression tracked successfully' }),
  click: JSON.stringify({ status: 'success', message: 'Click tracked successfully' }),
};

/** Checks that `res` is the contract's 200 for a tracked `kind`, whatever the verdict behind it (D3). */
export function expectTracked(res: TestResponse, kind: 'impression' | 'click'): void {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).toBe(TRACKED_ANSWER[kind]);
}

/**
 * A well-formed key that differs from `key` in its last character only, so its checksum no longer
 * matches. The replacement always differs: a fixed letter would give back the key itself whenever
 * the key happened to end in it.
 */
/** The events a store holds, oldest first, as `kind:verdict:reason` (the reason blank where none). */
export async function storedVerdicts(store: Store): Promise<string[]> {
  const rows = await store.db
    .selectFrom('events')
    .select(['kind', 'verdict', 'reason'])
    .orderBy('id')
    .execute();
  return rows.map((row) => `${row.kind}:${row.verdict}:${row.reason ?? ''}`);
}

export function withWrongLastCharacter(key: string): string {
  return `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
}

/** A campaign for the import format with sensible defaults; override what the test is about. */
export function campaign(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    title: 'Test campaign',
    destinationUrl: 'https://advertiser.example/landing',
    status: 'running',
    placements: ['header_banner'],
    ...fields,
  };
}

/**
 * Fields that import a campaign in `status` at `now`: an approved import of a scheduled campaign
 * lands on the clock's status, so a scheduled one needs a start ahead.
 */
export function inStatus(status: string, now: number): Record<string, unknown> {
  return {
    status,
    title: status,
    ...(status === 'scheduled' && { startAt: new Date(now + 3_600_000).toISOString() }),
  };
}

/**
 * The service in-process, listening on a free loopback port (the partner routes are served by the
 * `node:http` handler in front of Fastify, so tests call it over real HTTP), on a fresh database.
 */
export async function createTestApp(
  options: {
    engine?: 'sqlite' | 'postgres';
    events?: WiringOptions['events'];
    clock?: () => number;
    /** The limits' clock; by default the test's `clock`, so a test that freezes one freezes both. */
    monotonic?: () => number;
    /** Addresses or ranges whose `X-Forwarded-For` names the client (`PLACARD_TRUSTED_PROXIES`). */
    trustedProxies?: readonly string[];
    fetchMaxAgeSeconds?: number;
    /** `PLACARD_PACING_PRIOR_FETCHES_PER_HOUR`; 0 by default. */
    pacingPriorFetchesPerHour?: number;
    /** Where the service logs; silent by default. */
    logger?: Logger;
    /** How long a request may take to arrive before its 408 (the product's default: 30 s). */
    requestTimeoutMs?: number;
    /** The port to listen on (from `freePort()`), for a test that must know it before the start. */
    port?: number;
    /** `PLACARD_PUBLIC_URL`: the address pages give out (`http://127.0.0.1:8080` by default). */
    publicUrl?: string;
    /** `PLACARD_CURRENCY` (USD by default). */
    currency?: string;
    /** `PLACARD_BILLING_TIME_ZONE`: the zone of billing dates (UTC by default). */
    billingTimeZone?: string;
    /** The smallest payout to a partner, in micros (`PLACARD_MINIMUM_PAYOUT`). */
    minimumPayoutMicros?: number;
    /** `PLACARD_WEBHOOKS_ALLOW_LOOPBACK`: webhook endpoints on this machine (false by default). */
    webhooksAllowLoopback?: boolean;
    /** Logs a line per partner request, as `PLACARD_ACCESS_LOG` does (off by default in tests). */
    accessLog?: boolean;
  } = {},
): Promise<TestApp> {
  const database = await createDatabase(options.engine ?? 'sqlite');
  const store = await database.open();
  const logger = options.logger ?? pino({ level: 'silent' });
  const clock = options.clock ?? Date.now;
  // The production wiring, with a poll so slow that only explicit refreshes (and the product's own
  // refresh-on-change paths) move the serving state.
  const services = wireServices(store, logger, {
    refreshIntervalMs: 60_000,
    accessLog: options.accessLog ?? false,
    eventRetentionDays: 90,
    clock,
    monotonic: options.monotonic ?? clock,
    ...(options.trustedProxies && { trustedProxies: options.trustedProxies }),
    ...(options.events && { events: options.events }),
    ...(options.fetchMaxAgeSeconds !== undefined && { fetchMaxAgeSeconds: options.fetchMaxAgeSeconds }),
    ...(options.pacingPriorFetchesPerHour !== undefined && {
      pacingPriorFetchesPerHour: options.pacingPriorFetchesPerHour,
    }),
    ...(options.publicUrl !== undefined && { publicUrl: options.publicUrl }),
    ...(options.currency !== undefined && { currency: options.currency }),
    ...(options.billingTimeZone !== undefined && { billingTimeZone: options.billingTimeZone }),
    ...(options.minimumPayoutMicros !== undefined && {
      minimumPayoutMicros: micros(options.minimumPayoutMicros),
    }),
    ...(options.webhooksAllowLoopback !== undefined && {
      webhooksAllowLoopback: options.webhooksAllowLoopback,
    }),
  });
  const { state, events } = services;
  await state.load();
  const adminToken = (await services.tokens.create({ label: 'tests' })).plaintext;
  const app = await buildApp({
    ...services.appDeps,
    ...(options.requestTimeoutMs !== undefined && { requestTimeoutMs: options.requestTimeoutMs }),
  });
  const url = await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const call = (options: RequestOptions) => request(url, options);
  const partners = new PartnerService(store, undefined, clock);
  const partner = await partners.createPartner('Test Partner');
  const { plaintext, key } = await partners.createKey(partner.id);
  // Tests of other behaviour make hundreds of calls with this key; the rate-limit tests set their
  // own limits or use a fresh key with the defaults of D7.
  await partners.setKeyLimits(key.id, HIGHEST_LIMITS);
  await state.refresh();
  const campaigns = new CampaignService(store, undefined, clock);
  let advertiserCount = 0;

  return {
    app,
    url,
    services,
    request: call,
    adminToken,
    admin: (method, path, body, token = adminToken) =>
      call({
        method,
        url: `/admin/v1${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { payload: JSON.stringify(body) }),
      }),
    store,
    state,
    database,
    campaigns,
    partners,
    apiKey: plaintext,
    apiKeyId: key.id,
    async addCampaigns(list, advertiser = `Advertiser ${++advertiserCount}`) {
      const summary = await campaigns.import(
        { advertisers: [{ name: advertiser, campaigns: list }] },
        { approve: true },
      );
      await state.refresh();
      return summary.campaignIds;
    },
    fetch: (query, key = plaintext) =>
      call({
        method: 'GET',
        url: `/api/v1/campaigns/fetch?${query}`,
        headers: { authorization: `Bearer ${key}` },
      }),
    track: (kind, body, headers = {}) =>
      call({
        method: 'POST',
        url: `/api/v1/campaigns/${kind}`,
        headers: { authorization: `Bearer ${plaintext}`, 'content-type': 'application/json', ...headers },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    async close() {
      await app.close();
      await events.close();
      await store.close();
      await database.drop();
    },
  };
}

/**
 * Registers hooks that give each test of the enclosing block a fresh app with one running campaign
 * (the default `campaign()`), handed over through `onReady`, and close it afterwards.
 */
export function eachTestWithCampaign(onReady: (ready: { app: TestApp; campaignId: number }) => void): void {
  let app: TestApp | undefined;
  beforeEach(async () => {
    app = await createTestApp();
    const [campaignId] = await app.addCampaigns([campaign()]);
    onReady({ app, campaignId });
  });
  afterEach(() => app?.close());
}

/** The advertiser a campaign belongs to, as the store has it. */
export async function advertiserOf(store: Store, campaignId: number): Promise<number> {
  const row = await store.db
    .selectFrom('campaigns')
    .select('advertiser_id')
    .where('id', '=', campaignId)
    .executeTakeFirstOrThrow();
  return Number(row.advertiser_id);
}

/**
 * Event commits that fail like a broken disk while `failing` is set, and reach the store otherwise:
 * pass `events` to `createTestApp` to see what a `503` leaves behind and what its retry gets.
 */
export function failingEventStore(): { failing: boolean; events: NonNullable<WiringOptions['events']> } {
  const control = {
    failing: false,
    events: (store: Store, onCap: () => void) =>
      new GroupCommitSink(
        {
          insertEvents: (events: Parameters<Store['insertEvents']>[0]) =>
            control.failing ? Promise.reject(new Error('disk I/O error')) : store.insertEvents(events),
        },
        () => undefined,
        onCap,
      ),
  };
  return control;
}
