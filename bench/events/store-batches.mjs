// bench/events/store-batches.mjs: stores BATCHES batches of 35 tracking events (20 impressions to 1
// click) straight through the store, no HTTP, on a fresh SQLite store of 1,000 campaigns seeded with
// money on or off (MONEY=false). Run under valgrind by `instructions.mjs`; by itself it only stores.
import fs from 'node:fs';
import path from 'node:path';
import * as bench from '../lib.mjs';
import { connect } from '../../apps/server/dist/store/connect.js';
import { Store } from '../../apps/server/dist/store/store.js';
import { seedCampaigns } from '../seed.mjs';

const money = process.env.MONEY !== 'false';
const batches = Number(process.env.BATCHES ?? 100);
const dir = bench.tempDir('placard-bench-store-batches-');
try {
  const url = `sqlite:${path.join(dir, 'placard.db')}`;
  const { keyId, pairs } = await seedCampaigns(url, 1_000, { money });
  const store = new Store(connect(url));
  try {
    const key = await store.db
      .selectFrom('api_keys')
      .select('partner_id')
      .where('id', '=', keyId)
      .executeTakeFirstOrThrow();
    const start = Date.now();
    let sent = 0;
    for (let batch = 0; batch < batches; batch++) {
      const events = [];
      for (let i = 0; i < 35; i++, sent++) {
        // Campaigns in a fixed scattered order, as a partner's traffic spreads over them.
        const [campaignId, placement] = pairs[(sent * 7_919) % pairs.length];
        events.push({
          kind: i % 21 === 20 ? 'click' : 'impression',
          campaignId,
          placement,
          country: 'US',
          device: 'desktop',
          partnerId: Number(key.partner_id),
          apiKeyId: keyId,
          occurredAt: start + sent,
          eventAt: null,
          verdict: 'counted',
          reason: null,
          idempotencyKey: `batch-${sent}`,
          userAddress: null,
          viewer: false,
          mayHitCap: false,
          priced: money,
        });
      }
      await store.insertEvents(events);
    }
  } finally {
    await store.close();
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
