import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/http/app.js';
import { DirectEventSink, type EventSink } from '../../src/ingest/event-sink.js';
import { CampaignService } from '../../src/services/campaigns.js';
import { DeliveryService } from '../../src/services/delivery.js';
import { PartnerService } from '../../src/services/partners.js';
import { ServingState } from '../../src/services/serving-state.js';
import type { Store } from '../../src/store/store.js';
import { createDatabase, type TestDatabase } from './engines.js';

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  state: ServingState;
  database: TestDatabase;
  campaigns: CampaignService;
  partners: PartnerService;
  /** A valid key of a partner created for the test. */
  apiKey: string;
  apiKeyId: number;
  /** Imports campaigns for one advertiser and reloads the index; returns their ids in order. */
  addCampaigns(campaigns: unknown[], advertiser?: string): Promise<number[]>;
  fetch(query: string, key?: string): Promise<LightMyRequestResponse>;
  track(
    kind: 'impression' | 'click',
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
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

/** The delivery API in-process (`app.inject`) over a fresh database of the given engine. */
export async function createTestApp(
  options: {
    engine?: 'sqlite' | 'postgres';
    events?: (store: Store) => EventSink;
    clock?: () => number;
  } = {},
): Promise<TestApp> {
  const database = await createDatabase(options.engine ?? 'sqlite');
  const store = await database.open();
  const logger = pino({ level: 'silent' });
  const state = new ServingState(store, logger, 60_000);
  await state.load();
  const events = options.events?.(store) ?? new DirectEventSink(store, () => undefined);
  const delivery = new DeliveryService(state, events, options.clock);
  const app = await buildApp({ logger, state, delivery, accessLog: false });
  const partners = new PartnerService(store);
  const partner = await partners.createPartner('Test Partner');
  const { plaintext, key } = await partners.createKey(partner.id);
  await state.refresh();
  const campaigns = new CampaignService(store);
  let advertiserCount = 0;

  return {
    app,
    store,
    state,
    database,
    campaigns,
    partners,
    apiKey: plaintext,
    apiKeyId: key.id,
    async addCampaigns(list, advertiser = `Advertiser ${++advertiserCount}`) {
      const summary = await campaigns.import({ advertisers: [{ name: advertiser, campaigns: list }] });
      await state.refresh();
      return summary.campaignIds;
    },
    fetch: (query, key = plaintext) =>
      app.inject({
        method: 'GET',
        url: `/api/v1/campaigns/fetch?${query}`,
        headers: { authorization: `Bearer ${key}` },
      }),
    track: (kind, body, headers = {}) =>
      app.inject({
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
