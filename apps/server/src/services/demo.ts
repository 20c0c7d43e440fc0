import fs from 'node:fs';
import path from 'node:path';
import { digestApiKey, isWellFormedApiKey } from '../domain/api-keys.js';
import { partnerKeyRefusal } from '../domain/credentials.js';
import { DEFAULT_PLACEMENTS } from '../domain/placements.js';
import type { Store } from '../store/store.js';
import { CampaignService } from './campaigns.js';
import { demoTrafficStart, seedDemoTraffic } from './demo-traffic.js';
import { audit, CLI_ACTOR } from './audit.js';
import { revenueShareView } from './revenue-shares.js';
import { PartnerService } from './partners.js';

const SEEDED_FLAG = 'demo_seeded';
export const DEMO_PARTNER = 'Demo Publisher';
export const DEMO_KEY_FILE = 'demo-api-key';

const ADVERTISERS = [
  { name: 'Northwind Outfitters', category: 'lifestyle', site: 'https://northwind.example/' },
  { name: 'Bluebird Travel', category: 'travel', site: 'https://bluebird-travel.example/' },
  { name: 'Helix Health', category: 'health', site: 'https://helix-health.example/' },
  { name: 'Quantum Labs', category: 'technology', site: 'https://quantum-labs.example/' },
  { name: 'Ledger & Co', category: 'business', site: 'https://ledger.example/' },
] as const;

const OFFERS = [
  'Spring sale: 30% off',
  'Free shipping this week',
  'New season collection',
  'Members save more',
  'Try it free for 30 days',
  'Limited-time bundle',
  'Award-winning service',
  'Book early and save',
];

/** Country sets cycled across demo campaigns; [] means every country. */
const COUNTRY_SETS = [[], ['US'], ['GB', 'IE'], [], ['DE', 'AT', 'CH'], ['FR'], [], ['US', 'CA']];
const DEVICE_SETS = [[], ['mobile'], [], ['desktop', 'tablet'], [], ['desktop']];
/** Every 10th campaign is not running, so the demo shows that only running campaigns are served. */
const NOT_RUNNING = ['paused', 'draft', 'pending_review', 'rejected'];

/**
 * Prices cycled across demo campaigns (D18), in micros of the deployment's currency: mostly CPMs of
 * 2.50 and 4.00, CPCs of 0.35, and a house campaign (no price) in every ten.
 */
const PRICES = [
  { model: 'cpm', amountMicros: 2_500_000 },
  { model: 'cpm', amountMicros: 4_000_000 },
  { model: 'cpc', amountMicros: 350_000 },
  { model: 'cpm', amountMicros: 2_500_000 },
  null,
  { model: 'cpm', amountMicros: 4_000_000 },
  { model: 'cpm', amountMicros: 2_500_000 },
  { model: 'cpc', amountMicros: 350_000 },
  { model: 'cpm', amountMicros: 4_000_000 },
  { model: 'cpm', amountMicros: 2_500_000 },
];

/** The demo data set: 5 advertisers and 40 campaigns spread over every placement, most of them priced. */
export function demoImportDocument(): { advertisers: Array<{ name: string; campaigns: unknown[] }> } {
  const placements = DEFAULT_PLACEMENTS.map((p) => p.id);
  const advertisers = ADVERTISERS.map((a) => ({ name: a.name, campaigns: [] as unknown[] }));
  for (let i = 0; i < 40; i++) {
    const advertiser = ADVERTISERS[i % ADVERTISERS.length]!;
    const offer = OFFERS[i % OFFERS.length]!;
    advertisers[i % ADVERTISERS.length]!.campaigns.push({
      title: `${advertiser.name}: ${offer}`,
      description: `${offer} at ${advertiser.name}. Demo campaign ${i + 1}.`,
      ...(i % 7 === 3 ? {} : { category: advertiser.category }),
      destinationUrl: `${advertiser.site}?utm_source=placard&utm_campaign=demo-${i + 1}`,
      status: i % 10 === 9 ? NOT_RUNNING[(i / 10) | 0] : 'running',
      priority: i % 5 === 0 ? 2 : i % 3 === 0 ? 1 : 0,
      weight: 1 + (i % 4),
      price: PRICES[i % PRICES.length],
      // Each campaign runs in two or three placements; together they cover all 15.
      placements: [
        ...new Set([placements[i % 15]!, placements[(i * 7 + 3) % 15]!, placements[(i * 4 + 1) % 15]!]),
      ],
      countries: COUNTRY_SETS[i % COUNTRY_SETS.length],
      devices: DEVICE_SETS[i % DEVICE_SETS.length],
    });
  }
  return { advertisers };
}

export interface DemoResult {
  /** True when this call created the data; false when it already existed. */
  created: boolean;
  /** The demo partner's key, only when this store accepts it now: a start never shows one it would refuse. */
  apiKey: string | undefined;
  keyFile: string;
  /**
   * Why no key is shown, when none is: the file is missing (`missing`), holds a key this store
   * knows but refuses now (`unusable`: suspended or expired), or one it does not know at all
   * (`unknown`: another store seeded the demo in this data directory since, or the key was revoked).
   */
  keyProblem?: 'missing' | 'unusable' | 'unknown';
}

/**
 * Seeds the demo data set once per store, with a week of the demo partner's traffic. The demo partner's key is written to a file in the data
 * directory (mode 0600) so that later starts can print it again; real keys are never written anywhere.
 *
 * The "seeded" flag lives in the store but the file in the data directory, and one data directory
 * can serve several stores in turn (`PLACARD_DATABASE_URL` set for one start, unset for the next):
 * each store's seeding writes the file, so it holds the key of the store seeded last. So the file
 * is only a reminder, and the store decides: a later start checks the key against the store's keys
 * as the partner API would, and shows it only when it would be accepted. (Naming the file per store
 * would keep each store's key, but still show a revoked or suspended one; the check covers both.)
 */
export async function seedDemo(store: Store, dataDir: string): Promise<DemoResult> {
  const keyFile = path.join(dataDir, DEMO_KEY_FILE);
  if (await store.getMeta(SEEDED_FLAG)) {
    if (!fs.existsSync(keyFile)) return { created: false, apiKey: undefined, keyFile, keyProblem: 'missing' };
    const written = fs.readFileSync(keyFile, 'utf8').trim();
    const keyProblem = await keyRefusal(store, written);
    return {
      created: false,
      apiKey: keyProblem ? undefined : written,
      keyFile,
      ...(keyProblem && { keyProblem }),
    };
  }
  const partners = new PartnerService(store);
  // The demo's campaigns are live at once: seeding it is the operator approving them.
  const { campaignIds } = await new CampaignService(store).import(demoImportDocument(), { approve: true });
  const partner = (await store.findPartner(DEMO_PARTNER)) ?? (await partners.createPartner(DEMO_PARTNER));
  const { plaintext, key } = await partners.createKey(partner.id, 'demo');
  const now = Date.now();
  await giveDemoShare(store, partner.id, demoTrafficStart(now), now);
  await seedDemoTraffic(
    store,
    await store.getCampaigns(campaignIds),
    { partnerId: partner.id, apiKeyId: key.id },
    now,
  );
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(keyFile, `${plaintext}\n`, { mode: 0o600 });
  await store.setMeta(SEEDED_FLAG, new Date().toISOString());
  return { created: true, apiKey: plaintext, keyFile };
}

/** The demo partner's revenue share (70%), so the demo's charged traffic earns it something. */
export const DEMO_SHARE_BASIS_POINTS = 7_000;

/**
 * Gives the demo partner its share from `from`, the start of its seeded traffic, audited. A past
 * instant, which the operator could not set: seeding makes the demo's history, as if the share had
 * been set before it began.
 */
async function giveDemoShare(store: Store, partnerId: number, from: number, now: number): Promise<void> {
  await store.transaction(async (tx) => {
    const share = await tx.addRevenueShare(
      { partnerId, effectiveFrom: from, basisPoints: DEMO_SHARE_BASIS_POINTS, actor: CLI_ACTOR.id },
      now,
    );
    const change = {
      objectType: 'partner',
      objectId: partnerId,
      action: 'set_revenue_share',
      reason: 'demo data',
      before: { revenueShare: null },
      after: { revenueShare: revenueShareView(share, 'UTC') },
    } as const;
    await audit(tx, CLI_ACTOR, change, now);
  });
}

/**
 * Why the partner API would refuse `plaintext` on this store, or undefined when it would accept it:
 * `partnerKeyRefusal`, the partner API's own rule, on the key as the store holds it (the serving state
 * is not loaded yet when the demo is seeded).
 */
async function keyRefusal(store: Store, plaintext: string): Promise<'unusable' | 'unknown' | undefined> {
  if (!isWellFormedApiKey(plaintext)) return 'unknown';
  const digest = digestApiKey(plaintext);
  const key = (await store.loadLiveKeys()).find((live) => live.digest === digest);
  if (!key) return 'unknown';
  return partnerKeyRefusal(key, Date.now()) === null ? undefined : 'unusable';
}
