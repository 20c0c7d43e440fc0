import type { Logger } from 'pino';
import {
  chooseBaseline,
  dayStart,
  DISMISSAL_QUIET_MS,
  evaluateKey,
  FLAG_INTERVAL_MS,
  FLAG_WINDOW_MS,
  policySuspends,
  type Counts,
  type KeyTraffic,
} from '../domain/key-flags.js';
import { DomainError } from '../domain/errors.js';
import type { KeyFlagRecord, Store } from '../store/store.js';
import type { RecentTraffic } from './recent-traffic.js';
import { audit, SYSTEM_ACTOR } from './audit.js';
import { flagView, readFlagPolicy } from './key-flags.js';
import { keyStatus, PartnerService } from './partners.js';
import { Periodic } from './periodic.js';

/** What one pass did. */
export interface FlagPass {
  /** Flags raised by this pass (an open flag updated is not raised again). */
  raised: KeyFlagRecord[];
  /** Open flags whose evidence this pass updated. */
  updated: number;
  /** Keys the policy suspended. */
  suspended: number[];
}

function addTo(map: Map<string, Counts>, placement: string, kind: string, count: number): void {
  const counts = map.get(placement) ?? { impressions: 0, clicks: 0 };
  if (kind === 'impression') counts.impressions += count;
  else counts.clicks += count;
  map.set(placement, counts);
}

/**
 * Flags keys whose traffic looks fraudulent or broken (D15). Every 30 seconds (unless
 * `PLACARD_FLAG_INTERVAL_MS` says otherwise) it judges each key that sent events in the last 5
 * minutes (`FLAG_WINDOW_MS`), from what this instance stored in that
 * window and, for the click-through baseline, in the last 24 hours, counted in memory as the events
 * were stored (`RecentTraffic`): a pass reads nothing from the store but flags and the policy, whatever
 * the traffic (reading the window's raw events back held a SQLite server for seconds under load).
 * The signals and thresholds are `domain/key-flags.ts`; a key whose window shows no click-through
 * signal is judged on its click-through rate over the day too (`KeyDay`). A finding raises a flag,
 * or updates the evidence of the key's open flag of that signal; a signal dismissed in the last
 * day is not raised again. Where the operator turned the policy on, a finding past its threshold
 * times the policy's multiplier suspends the key at once, as `system`, audited.
 *
 * Runs on every instance: the flags table keeps one open flag per key and signal whoever writes it,
 * and a key already suspended is not suspended again.
 */
export class KeyFlagJob {
  private readonly periodic: Periodic;

  constructor(
    private readonly store: Store,
    /** The traffic of the window and the baseline, counted in memory as events are stored. */
    private readonly traffic: RecentTraffic,
    private readonly log: Pick<Logger, 'error' | 'info' | 'warn'>,
    private readonly clock: () => number = Date.now,
    /** Called after the policy suspended a key, so this instance refuses it at once. */
    private readonly afterChange: () => void = () => undefined,
    intervalMs = FLAG_INTERVAL_MS,
  ) {
    this.periodic = new Periodic(
      () => this.runOnce(),
      intervalMs,
      (error) => this.log.error({ err: error }, 'judging keys for flags failed'),
    );
  }

  /** One pass over the keys that sent events in the window. */
  async runOnce(): Promise<FlagPass> {
    const now = this.clock();
    const start = now - FLAG_WINDOW_MS;
    const pass: FlagPass = { raised: [], updated: 0, suspended: [] };
    const traffic = await this.trafficOf(start, now + 1);
    if (traffic.size === 0) return pass;

    // The day, by the hour, the current one included: the baseline (billable events by placement,
    // in all and by partner) and the own day of each key judged.
    const baselineStart = dayStart(now);
    const all = new Map<string, Counts>();
    const byPartner = new Map<number, Map<string, Counts>>();
    const days = new Map<number, { placements: Map<string, Counts>; billable: Map<string, Counts> }>();
    for (const row of this.traffic.dayCounts(now)) {
      const billable = row.reason === '';
      if (billable) {
        addTo(all, row.placementId, row.kind, row.count);
        const partner = byPartner.get(row.partnerId) ?? new Map<string, Counts>();
        addTo(partner, row.placementId, row.kind, row.count);
        byPartner.set(row.partnerId, partner);
      }
      if (!traffic.has(row.apiKeyId)) continue;
      let day = days.get(row.apiKeyId);
      if (!day) days.set(row.apiKeyId, (day = { placements: new Map(), billable: new Map() }));
      addTo(day.placements, row.placementId, row.kind, row.count);
      if (billable) addTo(day.billable, row.placementId, row.kind, row.count);
    }

    const policy = await readFlagPolicy(this.store);
    for (const key of traffic.values()) {
      const partner = byPartner.get(key.partnerId) ?? new Map<string, Counts>();
      const baseline = chooseBaseline(key.placements, all, partner, key.billable);
      const own = days.get(key.apiKeyId);
      const day = own && {
        placements: own.placements,
        baseline: chooseBaseline(own.placements, all, partner, own.billable),
      };
      for (const finding of evaluateKey(key, baseline, { start, end: now, baselineStart }, day)) {
        const dismissed = await this.store.lastDismissal(key.apiKeyId, finding.signal);
        if (dismissed !== undefined && now - dismissed < DISMISSAL_QUIET_MS) continue;
        const { flag, raised } = await this.store.saveKeyFlag(
          {
            apiKeyId: key.apiKeyId,
            partnerId: key.partnerId,
            signal: finding.signal,
            evidence: finding.evidence,
          },
          now,
        );
        if (raised) {
          pass.raised.push(flag);
          this.log.warn(
            { flag: flag.id, apiKeyId: key.apiKeyId, partnerId: key.partnerId, signal: finding.signal },
            `key flagged: ${finding.evidence.summary}`,
          );
        } else {
          pass.updated++;
        }
        if (policySuspends(policy, finding) && (await this.suspendByPolicy(flag, now))) {
          pass.suspended.push(key.apiKeyId);
        }
      }
    }
    if (pass.suspended.length > 0) this.afterChange();
    return pass;
  }

  /** Each key's traffic in [from, to), from the raw events. */
  private async trafficOf(from: number, to: number): Promise<Map<number, KeyTraffic>> {
    const keys = new Map<number, KeyTraffic>();
    for (const row of this.traffic.keyEventCounts(from, to)) {
      let key = keys.get(row.apiKeyId);
      if (!key) {
        key = {
          apiKeyId: row.apiKeyId,
          partnerId: row.partnerId,
          placements: new Map(),
          billable: new Map(),
          clickReasons: new Map(),
          slices: { impression: new Map(), click: new Map() },
        };
        keys.set(row.apiKeyId, key);
      }
      addTo(key.placements, row.placementId, row.kind, row.count);
      if (row.reason === '') addTo(key.billable, row.placementId, row.kind, row.count);
      if (row.kind === 'click')
        key.clickReasons.set(row.reason, (key.clickReasons.get(row.reason) ?? 0) + row.count);
    }
    for (const row of this.traffic.keySliceCounts(from, to)) {
      keys.get(row.apiKeyId)?.slices[row.kind].set(row.slice, row.count);
    }
    return keys;
  }

  /**
   * Suspends the flag's key as `system` with a reason naming the flag, and closes the flag, in one
   * transaction, both audited. False when the key is not active (already suspended, revoked).
   */
  private async suspendByPolicy(flag: KeyFlagRecord, now: number): Promise<boolean> {
    try {
      return await this.store.transaction(async (tx) => {
        const current = await tx.getKeyFlag(flag.id);
        const key = await tx.getApiKey(flag.apiKeyId);
        if (current?.status !== 'open' || !key || keyStatus(key, now) !== 'active') return false;
        const view = flagView(current);
        const reason = `automatic (flag policy): flag ${flag.id}, ${view.summary}`;
        await new PartnerService(tx, SYSTEM_ACTOR, this.clock).suspendKey(flag.apiKeyId, reason);
        await tx.reviewKeyFlag(flag.id, { status: 'suspended', at: now, by: SYSTEM_ACTOR.id, note: reason });
        const after = (await tx.getKeyFlag(flag.id))!;
        await audit(
          tx,
          SYSTEM_ACTOR,
          {
            objectType: 'key_flag',
            objectId: flag.id,
            action: 'suspend',
            reason,
            before: view,
            after: flagView(after),
          },
          now,
        );
        this.log.warn(
          { flag: flag.id, apiKeyId: flag.apiKeyId },
          `key suspended by the flag policy: ${reason}`,
        );
        return true;
      });
    } catch (error) {
      // Another instance suspended it first.
      if (error instanceof DomainError && error.kind === 'conflict') return false;
      throw error;
    }
  }

  /** First a few seconds after start, once the instance serves. */
  start(): void {
    this.periodic.start(5_000);
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
