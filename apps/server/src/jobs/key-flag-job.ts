import type { Logger } from 'pino';
import {
  chooseBaseline,
  dayStart,
  DISMISSAL_QUIET_MS,
  evaluateKey,
  FLAG_INTERVAL_MS,
  FLAG_THRESHOLDS,
  FLAG_WINDOW_MS,
  partnerCtrFinding,
  policySuspends,
  type BaselineKey,
  type BaselineTraffic,
  type Counts,
  type Finding,
  type KeyTraffic,
} from '../domain/key-flags.js';
import { sharedAddressFindings, type AddressKeyTraffic } from '../domain/shared-addresses.js';
import { DomainError } from '../domain/errors.js';
import type { KeyFlagRecord, Store } from '../store/store.js';
import type { RecentTraffic } from '../serving/recent-traffic.js';
import { audit, SYSTEM_ACTOR } from '../services/audit.js';
import { flagView, readFlagPolicy } from '../services/key-flags.js';
import { keyStatus, PartnerService } from '../services/partners.js';
import { PeriodicJob } from './periodic.js';
import { UNSERVED, type ServingChanges } from '../serving/serving-changes.js';

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
 * signal is judged on its click-through rate over the day too (`KeyDay`); each partner's keys
 * together (`partner ctr`), and the end-user addresses that several keys' clicks came from
 * (`shared addresses`, `domain/shared-addresses.ts`), are judged after the keys. The baseline leaves out
 * the keys flagged or suspended (their traffic is what a flag is about), and a suspended key is not
 * judged (it sends nothing since; what it sent is what it was suspended for). A finding raises a flag,
 * or updates the evidence of the key's open flag of that signal; a signal dismissed, or suspended
 * for, in the last day is not raised again. Where the operator turned the policy on, a finding past its threshold
 * times the policy's multiplier suspends the key at once, as `system`, audited.
 *
 * Runs on every instance: the flags table keeps one open flag per key and signal whoever writes it,
 * and a key already suspended is not suspended again.
 */
export class KeyFlagJob extends PeriodicJob {
  constructor(
    private readonly store: Store,
    /** The traffic of the window and the baseline, counted in memory as events are stored. */
    private readonly traffic: RecentTraffic,
    private readonly log: Pick<Logger, 'error' | 'info' | 'warn'>,
    private readonly clock: () => number = Date.now,
    /** Told after the policy suspended keys, so this instance refuses them at once. */
    private readonly serving: ServingChanges = UNSERVED,
    intervalMs = FLAG_INTERVAL_MS,
  ) {
    super(intervalMs, log, 'judging keys for flags failed', 5_000);
  }

  /** One pass over the keys that sent events in the window. */
  async runOnce(): Promise<FlagPass> {
    const now = this.clock();
    const start = now - FLAG_WINDOW_MS;
    const pass: FlagPass = { raised: [], updated: 0, suspended: [] };
    const traffic = await this.trafficOf(start, now + 1);
    if (traffic.size === 0) return pass;

    // The day, by the hour, the current one included: the baseline (billable events by key, of
    // the keys neither flagged nor suspended) and the own day of each key judged.
    const baselineStart = dayStart(now);
    const { flagged, suspended } = await this.store.flaggedKeys(baselineStart);
    const normal = new Map<number, BaselineKey>();
    const days = new Map<number, { placements: Map<string, Counts>; billable: Map<string, Counts> }>();
    for (const row of this.traffic.dayCounts(now)) {
      const billable = row.reason === '';
      if (billable && !flagged.has(row.apiKeyId)) {
        let key = normal.get(row.apiKeyId);
        if (!key) normal.set(row.apiKeyId, (key = { partnerId: row.partnerId, placements: new Map() }));
        addTo(key.placements, row.placementId, row.kind, row.count);
      }
      if (!traffic.has(row.apiKeyId)) continue;
      let day = days.get(row.apiKeyId);
      if (!day) days.set(row.apiKeyId, (day = { placements: new Map(), billable: new Map() }));
      addTo(day.placements, row.placementId, row.kind, row.count);
      if (billable) addTo(day.billable, row.placementId, row.kind, row.count);
    }

    const policy = await readFlagPolicy(this.store);
    // A suspended key is not flagged again for what it was suspended for (it sends nothing since).
    const judged = [...traffic.values()].filter((key) => !suspended.has(key.apiKeyId));
    const window = { start, end: now, baselineStart };
    const findingsOf = (key: (typeof judged)[number]) => {
      const baseline = chooseBaseline(key.placements, normal, key, key.billable);
      const own = days.get(key.apiKeyId);
      const day = own && {
        placements: own.placements,
        baseline: chooseBaseline(own.placements, normal, key, own.billable),
      };
      return evaluateKey(key, baseline, window, day);
    };
    // A key found out in this pass leaves the baseline before anyone is flagged against it, as it
    // would by the next pass: a polling key's thousands of unclicked impressions, flagged now, must
    // not make an honest key beside it look clicked far above a rate the loop itself pulled down.
    const found = judged.filter((key) => findingsOf(key).length > 0);
    for (const key of found) normal.delete(key.apiKeyId);
    for (const key of found.length === 0 ? [] : judged) {
      for (const finding of findingsOf(key)) {
        const reviewed = await this.store.lastReview(key.apiKeyId, finding.signal);
        if (reviewed !== undefined && now - reviewed < DISMISSAL_QUIET_MS) continue;
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
    await this.judgePartners([...traffic.values()], suspended, normal, { start, end: now }, pass);
    await this.judgeAddresses(suspended, normal, { start, end: now }, pass);
    if (pass.suspended.length > 0) this.serving.changed();
    return pass;
  }

  /**
   * `partner ctr`: each partner's keys together (those not suspended), against the other partners'
   * baseline. The flag is stored on the key with the most clicks, or on the key of the partner's
   * open flag of this signal, whose evidence it updates; a partner whose flag of this signal was
   * reviewed in the last day is not flagged again for it. Never suspended by the policy: it names
   * several keys, and only an operator decides about a partner.
   */
  private async judgePartners(
    keys: KeyTraffic[],
    suspended: ReadonlySet<number>,
    normal: BaselineTraffic,
    window: { start: number; end: number },
    pass: FlagPass,
  ): Promise<void> {
    const byPartner = new Map<number, KeyTraffic[]>();
    for (const key of keys) {
      if (suspended.has(key.apiKeyId)) continue;
      byPartner.set(key.partnerId, [...(byPartner.get(key.partnerId) ?? []), key]);
    }
    for (const [partnerId, partnerKeys] of byPartner) {
      if (partnerKeys.length < FLAG_THRESHOLDS.partnerCtr.minKeys) continue;
      const together = new Map<string, Counts>();
      for (const key of partnerKeys) {
        for (const [placement, counts] of key.placements) {
          addTo(together, placement, 'impression', counts.impressions);
          addTo(together, placement, 'click', counts.clicks);
        }
      }
      const baseline = chooseBaseline(together, normal, { apiKeyId: 0, partnerId }, new Map());
      const finding = partnerCtrFinding(partnerKeys, baseline, window);
      if (!finding) continue;
      const named = (finding.evidence['keys'] as Array<{ apiKeyId: number }>)[0]!.apiKeyId;
      await this.savePartnerFlag(partnerId, named, finding, window.end, pass);
    }
  }

  /**
   * `shared addresses`: end-user addresses (as stored) clicked far above their placements' baseline
   * through several keys and partners, from the events whose partners forwarded them; each partner
   * whose own clicks from them are far above it too gets a flag naming the addresses and its keys
   * there (`domain/shared-addresses.ts`). The baseline is every partner's billable traffic. Keys
   * suspended are left out (they send nothing since). Never suspended by the policy.
   */
  private async judgeAddresses(
    suspended: ReadonlySet<number>,
    normal: BaselineTraffic,
    window: { start: number; end: number },
    pass: FlagPass,
  ): Promise<void> {
    const rows = new Map<string, AddressKeyTraffic>();
    const placements = new Map<string, Counts>();
    for (const row of this.traffic.addressEventCounts(window.start, window.end + 1)) {
      if (suspended.has(row.apiKeyId)) continue;
      const id = `${row.address}|${row.apiKeyId}`;
      let traffic = rows.get(id);
      if (!traffic) {
        const { address, apiKeyId, partnerId } = row;
        rows.set(id, (traffic = { address, apiKeyId, partnerId, placements: new Map() }));
      }
      addTo(traffic.placements, row.placementId, row.kind, row.count);
      addTo(placements, row.placementId, row.kind, row.count);
    }
    if (rows.size === 0) return;
    const baseline = chooseBaseline(placements, normal, { apiKeyId: 0, partnerId: 0 }, new Map());
    for (const { partnerId, apiKeyId, finding } of sharedAddressFindings(
      [...rows.values()],
      baseline,
      window,
    ))
      await this.savePartnerFlag(partnerId, apiKeyId, finding, window.end, pass);
  }

  /**
   * Raises a partner's flag of the finding's signal on `named` (its most clicked key), or updates
   * its open one, wherever that is stored; not when the partner's flag of this signal was reviewed
   * in the last day.
   */
  private async savePartnerFlag(
    partnerId: number,
    named: number,
    finding: Finding,
    now: number,
    pass: FlagPass,
  ): Promise<void> {
    const flags = (await this.store.listKeyFlags({ partnerId }, { limit: 200, newestFirst: true })).filter(
      (flag) => flag.signal === finding.signal,
    );
    const quiet = flags.some(
      (flag) =>
        flag.status !== 'open' && flag.reviewedAt !== null && now - flag.reviewedAt < DISMISSAL_QUIET_MS,
    );
    if (quiet) return;
    const open = flags.find((flag) => flag.status === 'open');
    const { flag, raised } = await this.store.saveKeyFlag(
      { apiKeyId: open?.apiKeyId ?? named, partnerId, signal: finding.signal, evidence: finding.evidence },
      now,
    );
    if (!raised) {
      pass.updated++;
      return;
    }
    pass.raised.push(flag);
    this.log.warn(
      { flag: flag.id, partnerId, signal: finding.signal },
      `partner flagged: ${finding.evidence.summary}`,
    );
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
}
