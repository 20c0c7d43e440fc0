import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARED_REDIS_URL } from '../../test/helpers/redis.js';
import { frequencyCapReached, PERIOD_MS, type FrequencyCap } from '../domain/frequency-caps.js';
import { RedisRateLimiter } from './redis-limiter.js';
import {
  HOLD_MS,
  MemoryViewerFrequency,
  RedisViewerFrequency,
  type ViewerFrequency,
} from './viewer-frequency.js';

const quiet = pino({ level: 'silent' });
const T0 = Date.parse('2026-11-28T10:00:00Z');
const TWO_AN_HOUR: FrequencyCap[] = [{ impressions: 2, per: 'hour' }];
const HOUR_AND_DAY: FrequencyCap[] = [
  { impressions: 2, per: 'hour' },
  { impressions: 3, per: 'day' },
];

const opened: RedisRateLimiter[] = [];
afterAll(async () => {
  for (const limiter of opened) await limiter.close();
});
/** A store on a Redis connection of its own, as each instance of a cluster has. */
async function redisStore(): Promise<RedisViewerFrequency> {
  const limiter = await RedisRateLimiter.connect(SHARED_REDIS_URL, quiet, undefined, 'placard-test:');
  opened.push(limiter);
  return new RedisViewerFrequency(limiter);
}

const STORES: Array<[string, () => Promise<ViewerFrequency>]> = [
  ['memory', () => Promise.resolve(new MemoryViewerFrequency())],
  ['redis', redisStore],
];

describe.each(STORES)('viewer frequency in %s (D20)', (_name, open) => {
  it('reserves up to each cap in its rolling window, and releases what the store did not keep', async () => {
    const store = await open();
    const viewer = randomUUID();
    const capsOf = (id: number) => (id === 1 ? HOUR_AND_DAY : undefined);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, T0)).toBe(true);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, T0 + 1000)).toBe(true);
    expect([...(await store.reached(viewer, capsOf, T0 + 2000))]).toEqual([1]);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, T0 + 2000)).toBe(false);
    // An hour later the hourly cap allows one more, and then the daily cap (3) holds.
    const later = T0 + PERIOD_MS.hour + 1000;
    expect([...(await store.reached(viewer, capsOf, later))]).toEqual([]);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, later)).toBe(true);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, later + 1)).toBe(false);
    // The store did not keep the last billable one: released, the viewer may be shown it again.
    await store.release(viewer, 1, later);
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, later + 2)).toBe(true);
    // Another campaign and another viewer are counted apart.
    expect(await store.reserve(viewer, 2, TWO_AN_HOUR, later + 3)).toBe(true);
    expect(await store.reserve(randomUUID(), 1, HOUR_AND_DAY, later + 3)).toBe(true);
    // A day after the first, every window has moved on.
    expect(await store.reserve(viewer, 1, HOUR_AND_DAY, T0 + PERIOD_MS.day + PERIOD_MS.hour + 5000)).toBe(
      true,
    );
  });
});

describe.each(STORES)('answers held for a viewer in %s (D20)', (_name, open) => {
  it('counts a fetch’s answer until its impression takes its place, or until it lapses', async () => {
    const store = await open();
    const viewer = randomUUID();
    const once: FrequencyCap[] = [{ impressions: 1, per: 'hour' }];
    const capsOf = (id: number) => (id === 1 ? once : undefined);
    // Two tabs fetch at once: the second is not given what the first will show.
    expect(await store.hold(viewer, [{ id: 1, frequencyCaps: once }], T0)).toEqual([]);
    expect([...(await store.reached(viewer, capsOf, T0 + 10))]).toEqual([1]);
    // A second tab through another instance, which had not seen the hold: refused, not held.
    expect(await store.hold(viewer, [{ id: 1, frequencyCaps: once }], T0 + 20)).toEqual([1]);
    // The first tab's impression takes the hold's place: billed, and the cap now reached by it.
    expect(await store.reserve(viewer, 1, once, T0 + 500)).toBe(true);
    expect([...(await store.reached(viewer, capsOf, T0 + 600))]).toEqual([1]);
    expect(await store.reserve(viewer, 1, once, T0 + 700)).toBe(false);
    // An answer never displayed stops counting after HOLD_MS.
    const other = randomUUID();
    await store.hold(other, [{ id: 1, frequencyCaps: once }], T0);
    expect([...(await store.reached(other, capsOf, T0 + HOLD_MS + 1))]).toEqual([]);
    expect(await store.reserve(other, 1, once, T0 + HOLD_MS + 1)).toBe(true);
  });
});

describe('viewer frequency shared by instances through Redis (D20)', () => {
  it('holds a cap exactly when three instances reserve the same viewer at once', async () => {
    const instances = await Promise.all([redisStore(), redisStore(), redisStore()]);
    const viewer = randomUUID();
    const caps: FrequencyCap[] = [{ impressions: 5, per: 'day' }];
    const answers = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => instances[i % 3].reserve(viewer, 7, caps, T0 + i)),
    );
    expect(answers.filter(Boolean)).toHaveLength(5);
    const reached = await instances[1].reached(viewer, () => caps, T0 + 100);
    expect([...reached]).toEqual([7]);
  });

  it('keeps a viewer no longer than its campaigns’ longest window', async () => {
    const limiter = await RedisRateLimiter.connect(SHARED_REDIS_URL, quiet, undefined, 'placard-test:');
    opened.push(limiter);
    const store = new RedisViewerFrequency(limiter);
    const viewer = randomUUID();
    await store.reserve(viewer, 1, TWO_AN_HOUR, Date.now());
    const ttl = Number(
      await limiter.evaluate(
        "return redis.call('PTTL', KEYS[1])",
        'unused',
        `placard-test:viewer:${viewer}`,
        [],
      ),
    );
    expect(ttl).toBeGreaterThan(PERIOD_MS.hour - 60_000);
    expect(ttl).toBeLessThanOrEqual(PERIOD_MS.hour);
  });
});

describe('viewer frequency in memory', () => {
  it('forgets the least recent viewer past its bound, and a viewer once its windows have passed', () => {
    const store = new MemoryViewerFrequency(2);
    const capsOf = () => TWO_AN_HOUR;
    for (const viewer of ['a', 'b']) {
      store.reserve(viewer, 1, TWO_AN_HOUR, T0);
      store.reserve(viewer, 1, TWO_AN_HOUR, T0);
    }
    store.reserve('c', 1, TWO_AN_HOUR, T0 + 1);
    expect(store.size).toBe(2);
    expect(store.reached('a', capsOf, T0 + 2).size).toBe(0); // forgotten: the oldest
    expect(store.reached('b', capsOf, T0 + 2).size).toBe(1);
    store.reserve('d', 1, TWO_AN_HOUR, T0 + PERIOD_MS.hour + 120_000);
    expect(store.size).toBe(1); // b and c swept: their hour had passed
  });

  it('forgets every viewer whose windows have passed within a minute of changes, however many', () => {
    const store = new MemoryViewerFrequency();
    // Five campaigns each: more entries than a viewer's first block holds, so each viewer moved once.
    for (let viewer = 0; viewer < 10_000; viewer++)
      for (let campaign = 1; campaign <= 5; campaign++)
        store.reserve(`old-${viewer}`, campaign, TWO_AN_HOUR, T0);
    const later = T0 + PERIOD_MS.hour;
    // One new viewer a second for a minute: the sweep runs with each, over a sixtieth of the map.
    for (let second = 0; second <= 60; second++)
      store.reserve(`new-${second}`, 1, TWO_AN_HOUR, later + second * 1_000);
    expect(store.size).toBe(61);
    // And their memory with them: what is left is the new viewers' first blocks (128 bytes each).
    expect(store.blockBytes).toBe(61 * 128);
  });
});

/**
 * The rules of `ViewerFrequency` written as plainly as they read, one list of times per viewer and
 * campaign: what the memory store's packed, grouped entries must always agree with.
 */
class PlainViewerFrequency {
  private readonly shown = new Map<string, { times: number[]; held: number[] }>();

  private of(viewer: string, campaignId: number): { times: number[]; held: number[] } {
    const key = `${viewer}/${campaignId}`;
    let found = this.shown.get(key);
    if (found === undefined) this.shown.set(key, (found = { times: [], held: [] }));
    return found;
  }

  private counted(viewer: string, campaignId: number, at: number): number[] {
    const { times, held } = this.of(viewer, campaignId);
    return [...times, ...held.filter((time) => time > at - HOLD_MS)];
  }

  reached(
    viewer: string,
    capsOf: (id: number) => FrequencyCap[] | undefined,
    ids: number[],
    now: number,
  ): number[] {
    return ids.filter((id) => {
      const caps = capsOf(id);
      return caps !== undefined && frequencyCapReached(this.counted(viewer, id, now), caps, now);
    });
  }

  hold(viewer: string, campaigns: { id: number; frequencyCaps: FrequencyCap[] }[], now: number): number[] {
    const refused: number[] = [];
    for (const { id, frequencyCaps } of campaigns)
      if (frequencyCapReached(this.counted(viewer, id, now), frequencyCaps, now)) refused.push(id);
      else this.of(viewer, id).held.push(now);
    return refused;
  }

  reserve(viewer: string, campaignId: number, caps: FrequencyCap[], at: number): boolean {
    const shown = this.of(viewer, campaignId);
    const live = shown.held.filter((time) => time > at - HOLD_MS).sort((a, b) => a - b);
    shown.held = live.slice(1);
    if (frequencyCapReached(this.counted(viewer, campaignId, at), caps, at)) return false;
    shown.times.push(at);
    return true;
  }

  release(viewer: string, campaignId: number, at: number): void {
    const { times } = this.of(viewer, campaignId);
    const found = times.indexOf(at);
    if (found !== -1) times.splice(found, 1);
  }
}

describe('viewer frequency in memory, read then held', () => {
  it('counts a change that came between reading a viewer and holding for it', () => {
    const store = new MemoryViewerFrequency();
    const capsOf = () => TWO_AN_HOUR;
    const answer = [{ id: 1, frequencyCaps: TWO_AN_HOUR }];
    store.reserve('a', 1, TWO_AN_HOUR, T0);
    expect(store.reached('a', capsOf, T0 + 1).size).toBe(0);
    store.reserve('a', 1, TWO_AN_HOUR, T0 + 1); // another page view's impression, in between
    expect(store.hold('a', answer, T0 + 1)).toEqual([1]);
    store.reserve('b', 1, TWO_AN_HOUR, T0 + 2);
    store.reserve('b', 1, TWO_AN_HOUR, T0 + 2);
    expect(store.reached('b', capsOf, T0 + 2)).toEqual(new Set([1]));
    store.release('b', 1, T0 + 2); // not kept after all, while read
    expect(store.hold('b', answer, T0 + 2)).toEqual([]);
    expect(store.hold('b', answer, T0 + 2)).toEqual([1]); // one shown, one held: the cap
  });
});

describe('viewer frequency in memory, entries removed', () => {
  it('leaves the next campaign whole when an impression takes the place of the last held answer', () => {
    const store = new MemoryViewerFrequency();
    const capsOf = () => TWO_AN_HOUR;
    store.hold('a', [{ id: 1, frequencyCaps: TWO_AN_HOUR }], T0);
    store.reserve('a', 2, TWO_AN_HOUR, T0);
    store.reserve('a', 2, TWO_AN_HOUR, T0 + 1);
    expect(store.reached('a', capsOf, T0 + 2)).toEqual(new Set([2]));
    expect(store.reserve('a', 1, TWO_AN_HOUR, T0 + 2)).toBe(true); // in the hold's place
    expect(store.reached('a', capsOf, T0 + 3)).toEqual(new Set([2]));
    store.release('a', 1, T0 + 2);
    expect(store.reached('a', capsOf, T0 + 4)).toEqual(new Set([2]));
    expect(store.hold('a', [{ id: 1, frequencyCaps: TWO_AN_HOUR }], T0 + 4)).toEqual([]);
  });
});

describe('viewer frequency in memory, bounded', () => {
  it('forgets past its bound a viewer not used since, before an older one used again', () => {
    const store = new MemoryViewerFrequency(2);
    const capsOf = () => TWO_AN_HOUR;
    store.reserve('first', 1, TWO_AN_HOUR, T0);
    store.reserve('second', 1, TWO_AN_HOUR, T0 + 1);
    store.reserve('first', 1, TWO_AN_HOUR, T0 + 2); // used again: its cap is reached now
    store.reserve('third', 1, TWO_AN_HOUR, T0 + 3);
    expect(store.size).toBe(2);
    expect(store.reached('first', capsOf, T0 + 4).size).toBe(1); // kept
    expect(store.reserve('second', 1, TWO_AN_HOUR, T0 + 4)).toBe(true);
    expect(store.reserve('second', 1, TWO_AN_HOUR, T0 + 5)).toBe(true); // forgotten: counted afresh
  });
});

describe('viewer frequency in memory, packed', () => {
  // Few campaigns and long gaps: viewers are forgotten and come back. Many campaigns and short gaps:
  // a viewer's entries outgrow its block again and again, beside other viewers' blocks.
  it.each([
    ['six campaigns, long gaps', [3, 1, 12, 7, 5, 9], 4],
    ['thirty campaigns, short gaps', Array.from({ length: 30 }, (_, i) => 30 - i), 40],
  ])(
    'agrees with the plain rules over a long random mix of fetches, impressions and releases: %s',
    (_name, ids, longGapOneIn) => {
      const packed = new MemoryViewerFrequency();
      const plain = new PlainViewerFrequency();
      let seed = 7;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const PERIODS = ['hour', 'day', 'week'] as const;
      const capsById = new Map<number, FrequencyCap[]>(
        ids.map((id, i) => [
          id,
          i % 2 === 0
            ? [{ impressions: 1 + (id % 3), per: PERIODS[id % 3] }]
            : [
                { impressions: 2, per: 'hour' },
                { impressions: 4, per: 'day' },
              ],
        ]),
      );
      const capsOf = (id: number) => capsById.get(id);
      const viewers = ['a', 'b', 'c'];
      let now = T0;
      const reserved: Array<[string, number, number]> = [];
      for (let step = 0; step < 5_000; step++) {
        now += random(longGapOneIn) === 0 ? random(3 * PERIOD_MS.hour) : random(40_000);
        const viewer = viewers[random(viewers.length)];
        const op = random(4);
        if (op === 0) {
          const answered = ids
            .filter(() => random(3) === 0)
            .map((id) => ({ id, frequencyCaps: capsById.get(id) ?? [] }));
          // As fetch does, mostly: read what the viewer reached, then hold at the same moment.
          if (random(3) !== 0) packed.reached(viewer, capsOf, now);
          expect(packed.hold(viewer, answered, now)).toEqual(plain.hold(viewer, answered, now));
        } else if (op === 1 || op === 2) {
          const id = ids[random(ids.length)];
          const caps = capsById.get(id) ?? [];
          // Now and then a backlog: an impression that happened a while ago.
          const at = random(10) === 0 ? now - random(PERIOD_MS.hour) : now;
          const billed = packed.reserve(viewer, id, caps, at);
          expect(billed).toBe(plain.reserve(viewer, id, caps, at));
          if (billed) reserved.push([viewer, id, at]);
        } else if (reserved.length > 0 && random(3) === 0) {
          const [who, id, at] = reserved.splice(random(reserved.length), 1)[0];
          packed.release(who, id, at);
          plain.release(who, id, at);
        }
        const reached = [...packed.reached(viewer, capsOf, now)].sort((x, y) => x - y);
        expect(reached).toEqual(
          plain.reached(
            viewer,
            capsOf,
            [...ids].sort((x, y) => x - y),
            now,
          ),
        );
      }
    },
  );
});
