import {
  checkBasisPoints,
  checkBillingDate,
  shareEffectiveFrom,
  sharePercent,
} from '../domain/revenue-shares.js';
import { localDate } from '../domain/time-zones.js';
import type { Partner, RevenueShare, Store } from '../store/store.js';
import { audit, CLI_ACTOR, type Actor } from './audit.js';
import { PartnerService } from './partners.js';
import { requireOperator } from './scope.js';

/** A share as people and scripts read it: basis points, the same as a percentage, and its billing date. */
export function revenueShareView(share: RevenueShare, billingTimeZone: string) {
  return {
    id: share.id,
    basisPoints: share.basisPoints,
    percent: sharePercent(share.basisPoints),
    effectiveFrom: new Date(share.effectiveFrom).toISOString(),
    effectiveDate: localDate(share.effectiveFrom, billingTimeZone),
    setBy: share.actor,
    createdAt: share.createdAt,
  };
}

export type RevenueShareView = ReturnType<typeof revenueShareView>;

/** The share in force at `at` among a partner's shares listed newest first: as the event commit picks it. */
function inForceAt(shares: readonly RevenueShare[], at: number): RevenueShare | undefined {
  return shares.find((share) => share.effectiveFrom <= at);
}

/**
 * Partners' revenue shares (D18): the operator sets them, from today or a later billing date, and
 * each change is audited on the partner; the partner's own people and tokens read theirs.
 */
export class RevenueShareService {
  constructor(
    private readonly store: Store,
    private readonly actor: Actor = CLI_ACTOR,
    private readonly clock: () => number = Date.now,
    /** `PLACARD_BILLING_TIME_ZONE`: the zone billing dates are days of. */
    readonly billingTimeZone = 'UTC',
  ) {}

  /** Today in the billing time zone: the earliest date a share may be set from. */
  today(): string {
    return localDate(this.clock(), this.billingTimeZone);
  }

  private partner(store: Store, ref: string | number): Promise<Partner> {
    return new PartnerService(store, this.actor, this.clock).findPartner(ref);
  }

  /** A partner's shares, the latest to take effect first. */
  async list(partnerRef: string | number): Promise<RevenueShareView[]> {
    const partner = await this.partner(this.store, partnerRef);
    const shares = await this.store.listRevenueShares(partner.id);
    return shares.map((share) => revenueShareView(share, this.billingTimeZone));
  }

  /**
   * Sets a partner's share from `effectiveDate` (`YYYY-MM-DD` in the billing time zone) on: from the
   * start of that day, or from now when it is today. A past day is refused, since events already
   * charged keep what they earned.
   */
  async set(partnerRef: string | number, input: { basisPoints?: unknown; effectiveDate?: unknown }) {
    const now = this.clock();
    return this.store.transaction(async (tx) => {
      const partner = await this.partner(tx, partnerRef);
      requireOperator(this.actor, "set a partner's revenue share");
      const basisPoints = checkBasisPoints(input.basisPoints);
      const effectiveFrom = shareEffectiveFrom(
        checkBillingDate(input.effectiveDate),
        now,
        this.billingTimeZone,
      );
      const before = inForceAt(await tx.listRevenueShares(partner.id), effectiveFrom);
      const share = await tx.addRevenueShare(
        { partnerId: partner.id, effectiveFrom, basisPoints, actor: this.actor.id },
        now,
      );
      const view = (shown: RevenueShare | undefined) =>
        shown === undefined ? null : revenueShareView(shown, this.billingTimeZone);
      await audit(
        tx,
        this.actor,
        {
          objectType: 'partner',
          objectId: partner.id,
          action: 'set_revenue_share',
          before: { revenueShare: view(before) },
          after: { revenueShare: view(share) },
        },
        now,
      );
      return view(share)!;
    });
  }
}
