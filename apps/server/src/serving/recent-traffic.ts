import { BURST_SLICE_MS, dayStart, FLAG_WINDOW_MS, NOT_EVIDENCE_REASONS } from '../domain/key-flags.js';
import type { EventKind } from '../store/rows.js';
import type { KeyEventCount, KeySliceCount } from '../store/store.js';

/** One key's events of one kind and reason on one placement from one end-user address. */
export interface AddressEventCount extends KeyEventCount {
  /** As stored: the IPv4 /24 or IPv6 /48 (D15). */
  address: string;
}

const HOUR = 3_600_000;

/** One stored event, as the key flag job counts it (replays are not recorded). */
export interface CountedEvent {
  apiKeyId: number;
  partnerId: number;
  placement: string;
  kind: EventKind;
  /** '' for a billable event, else its reason. */
  reason: string;
}

/**
 * The traffic the key flag job judges (D15), counted in this instance's memory as events are
 * stored, instead of read back from the store: the job's first version grouped the raw events of
 * its 5-minute window and a day of rollups every 30 seconds, and under load (16,000 events a second
 * on SQLite, where statements run on the server's only thread) each pass held the server for
 * seconds (`npm run bench:events`: p99 732 ms, then requests past 2 s). Counts by key, placement,
 * kind and reason are kept in 10-second slices for the window and in hours for the day (the
 * baseline's billable events, and each key's own day), so memory is bounded by the keys and
 * placements seen lately.
 *
 * Each instance judges what it stored itself: behind a load balancer that is a fair share of every
 * key's traffic, so ratios (click-through rates, shares of clicks without impressions, bursts
 * against the key's own median) read the same; volumes are a share of the key's. The baseline is
 * what this instance stored since it started, up to the last 24 hours.
 */
export class RecentTraffic {
  /** Slice start → `apiKeyId|partnerId|placement|kind|reason` → events. */
  private readonly slices = new Map<number, Map<string, number>>();
  /**
   * Hour start → `apiKeyId|partnerId|placement|kind|reason` → events: the baseline (the billable
   * ones, by placement and partner) and each key's day, for the click-through rate of a key too
   * slow to show in the window (`domain/key-flags.ts`).
   */
  private readonly hours = new Map<number, Map<string, number>>();
  /**
   * The same counts summed over the hours kept (the day), kept up as events are recorded and hours
   * are forgotten, so a flag pass reads each key's day once instead of adding up 25 hours of it.
   */
  private readonly day = new Map<string, KeyEventCount>();
  /**
   * Slice start → `address|apiKeyId|partnerId|placement|kind|reason` → events, for the events whose
   * partner forwarded the end user's address (`shared addresses`): the window only, so memory is
   * bounded by the addresses seen in the last 5 minutes.
   */
  private readonly addressSlices = new Map<number, Map<string, number>>();
  private sweptAt = 0;

  /**
   * Counts one stored event at `at`, and by its end user's address (as stored) when the partner
   * forwarded one; an event that is never evidence (`NOT_EVIDENCE_REASONS`) is left out.
   */
  record(event: CountedEvent, at: number, address: string | null = null): void {
    if (NOT_EVIDENCE_REASONS.includes(event.reason)) return;
    const slice = at - (at % BURST_SLICE_MS);
    const key = `${event.apiKeyId}|${event.partnerId}|${event.placement}|${event.kind}|${event.reason}`;
    add(this.slices, slice, key);
    if (address !== null) add(this.addressSlices, slice, `${address}|${key}`);
    add(this.hours, at - (at % HOUR), key);
    const total = this.day.get(key);
    if (total) total.count++;
    else {
      const { apiKeyId, partnerId, placement: placementId, kind, reason } = event;
      this.day.set(key, { apiKeyId, partnerId, placementId, kind, reason, count: 1 });
    }
    if (at - this.sweptAt >= BURST_SLICE_MS) this.sweep(at);
  }

  /** Events in the slices that start in [from, to), by key, placement, kind and reason. */
  keyEventCounts(from: number, to: number): KeyEventCount[] {
    return [...sumSlices(this.slices, from, to)].map(([key, count]) => keyEventCount(key, count));
  }

  /** Events with an end user's address in the slices that start in [from, to), by address, key, placement, kind and reason. */
  addressEventCounts(from: number, to: number): AddressEventCount[] {
    return [...sumSlices(this.addressSlices, from, to)].map(([key, count]) => {
      // `address|` before a key of `slices`: an address (a /24 or /48) holds no `|`.
      const cut = key.indexOf('|');
      return { address: key.slice(0, cut), ...keyEventCount(key.slice(cut + 1), count) };
    });
  }

  /**
   * Events of the day (the hours from `dayStart(now)`), by key, placement, kind and reason. The
   * counts are live: read them before the next event is recorded.
   */
  dayCounts(now: number): readonly Readonly<KeyEventCount>[] {
    this.sweep(now);
    return [...this.day.values()];
  }

  /** Events by key, kind and slice of `BURST_SLICE_MS`, for the slices that start in [from, to). */
  keySliceCounts(from: number, to: number): KeySliceCount[] {
    const found: KeySliceCount[] = [];
    for (const [slice, counts] of this.slices) {
      if (slice < from - (from % BURST_SLICE_MS) || slice >= to) continue;
      const byKey = new Map<string, number>();
      for (const [key, count] of counts) {
        const [apiKeyId, , , kind] = key.split('|');
        const keyKind = `${apiKeyId}|${kind}`;
        byKey.set(keyKind, (byKey.get(keyKind) ?? 0) + count);
      }
      for (const [keyKind, count] of byKey) {
        const [apiKeyId, kind] = keyKind.split('|') as [string, EventKind];
        found.push({ apiKeyId: Number(apiKeyId), kind, slice, count });
      }
    }
    return found;
  }

  /** Forgets slices older than the window (and one slice more) and hours before the day's. */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const slices of [this.slices, this.addressSlices]) {
      for (const start of slices.keys()) {
        if (start < now - FLAG_WINDOW_MS - 2 * BURST_SLICE_MS) slices.delete(start);
      }
    }
    const from = dayStart(now);
    for (const [start, counts] of this.hours) {
      if (start >= from) continue;
      for (const [key, count] of counts) {
        const total = this.day.get(key);
        if (total && (total.count -= count) <= 0) this.day.delete(key);
      }
      this.hours.delete(start);
    }
  }
}

function add(buckets: Map<number, Map<string, number>>, start: number, key: string): void {
  let counts = buckets.get(start);
  if (!counts) buckets.set(start, (counts = new Map<string, number>()));
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** The counts of the slices that start in [from, to) (`from`'s own slice included), summed by key. */
function sumSlices(slices: Map<number, Map<string, number>>, from: number, to: number): Map<string, number> {
  const totals = new Map<string, number>();
  for (const [start, counts] of slices) {
    if (start < from - (from % BURST_SLICE_MS) || start >= to) continue;
    for (const [key, count] of counts) totals.set(key, (totals.get(key) ?? 0) + count);
  }
  return totals;
}

/** The count of an `apiKeyId|partnerId|placement|kind|reason` key. */
function keyEventCount(key: string, count: number): KeyEventCount {
  const [apiKeyId, partnerId, placementId, kind, reason] = key.split('|') as [
    string,
    string,
    string,
    EventKind,
    string,
  ];
  return { apiKeyId: Number(apiKeyId), partnerId: Number(partnerId), placementId, kind, reason, count };
}
