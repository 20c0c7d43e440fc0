// Key flags (D15), `shared addresses`: end-user addresses that click far above their placements'
// baseline through several keys and partners. Fraud spread over partners (a click farm browsing
// their sites, or partners colluding) keeps each key and each partner under its own thresholds; the
// addresses it clicks from do not. docs/product-rules.md (D15, "Key flags") says the same in words.
import { FLAG_THRESHOLDS, type Baseline, type Counts, type Finding } from './key-flags.js';

/** One key's events in the window from one end-user address (as stored: IPv4 /24, IPv6 /48). */
export interface AddressKeyTraffic {
  address: string;
  apiKeyId: number;
  partnerId: number;
  /** Impressions and clicks by placement, every verdict but `duplicate` (as a key's `ctr` counts them). */
  placements: Map<string, Counts>;
}

/** A partner named by the signal, the key its flag is stored on (its most clicked there), and why. */
export interface SharedAddressFinding {
  partnerId: number;
  apiKeyId: number;
  finding: Finding;
}

const iso = (ms: number) => new Date(ms).toISOString();
const round = (value: number, digits = 4) => Number(value.toFixed(digits));
const percent = (value: number) => `${round(value * 100, 2)}%`;

function add(map: Map<string, Counts>, placements: ReadonlyMap<string, Counts>): void {
  for (const [placement, counts] of placements) {
    const total = map.get(placement) ?? { impressions: 0, clicks: 0 };
    total.impressions += counts.impressions;
    total.clicks += counts.clicks;
    map.set(placement, total);
  }
}

/**
 * Impressions and clicks on the placements the baseline knows, the clicks it predicts for those
 * impressions, and the ratio. An address may click without impressions of its own (its displays
 * reported from elsewhere, or none): the prediction counts as at least one click, so the ratio stays
 * finite and 50 clicks from nowhere read as 50×.
 */
function figures(placements: ReadonlyMap<string, Counts>, baseline: Baseline) {
  let impressions = 0;
  let clicks = 0;
  let expected = 0;
  for (const [placement, own] of placements) {
    const rate = baseline.rates.get(placement);
    if (rate === undefined || (baseline.placements.get(placement)?.impressions ?? 0) === 0) continue;
    impressions += own.impressions;
    clicks += own.clicks;
    expected += own.impressions * Math.max(rate, FLAG_THRESHOLDS.ctr.minBaselineCtr);
  }
  const baselineCtr = impressions === 0 ? 0 : expected / impressions;
  return {
    impressions,
    clicks,
    ctr: round(impressions === 0 ? 0 : clicks / impressions, 6),
    baselineCtr: round(baselineCtr, 6),
    expectedClicks: round(expected, 1),
    ratio: round(clicks / Math.max(expected, 1), 3),
  };
}

const clicksOf = (placements: ReadonlyMap<string, Counts>) =>
  [...placements.values()].reduce((total, counts) => total + counts.clicks, 0);

/**
 * The partners whose clicks came, with several keys' and partners', from end-user addresses clicked
 * far above the baseline of their placements. An address is flagged when its clicks through every
 * key, of at least `minKeys` keys clicked, reach `minClicks` and `ratio` times what the baseline
 * predicts for its impressions: a carrier's NAT address or an office shared by many people clicks
 * as its people do, however many they are and whichever partners they visit, so its ratio stays
 * near 1 however big it is. A partner is named when its own traffic from the flagged addresses is
 * `partnerRatio` times the baseline too, with `minPartnerClicks`: one whose users merely share
 * such an address, clicking as people do, is not. `baseline`: the billable traffic of every partner
 * on the addresses' placements (`chooseBaseline` for no key and no partner).
 */
export function sharedAddressFindings(
  traffic: readonly AddressKeyTraffic[],
  baseline: Baseline | undefined,
  window: { start: number; end: number },
): SharedAddressFinding[] {
  if (!baseline) return [];
  const t = FLAG_THRESHOLDS.sharedAddresses;
  const byAddress = new Map<string, AddressKeyTraffic[]>();
  for (const row of traffic) byAddress.set(row.address, [...(byAddress.get(row.address) ?? []), row]);

  const flagged: Array<{ address: string; rows: AddressKeyTraffic[]; figures: ReturnType<typeof figures> }> =
    [];
  for (const [address, rows] of byAddress) {
    if (rows.filter((row) => clicksOf(row.placements) > 0).length < t.minKeys) continue;
    const together = new Map<string, Counts>();
    for (const row of rows) add(together, row.placements);
    const found = figures(together, baseline);
    if (found.clicks >= t.minClicks && found.ratio >= t.ratio)
      flagged.push({ address, rows, figures: found });
  }
  if (flagged.length === 0) return [];
  flagged.sort((a, b) => b.figures.clicks - a.figures.clicks || a.address.localeCompare(b.address));

  const all = new Map<string, Counts>();
  const partners = new Set<number>();
  const keys = new Set<number>();
  for (const { rows } of flagged) {
    for (const row of rows) {
      add(all, row.placements);
      partners.add(row.partnerId);
      keys.add(row.apiKeyId);
    }
  }
  const overall = figures(all, baseline);
  const names = flagged.map((f) => f.address);
  const listed =
    names.length <= 3 ? names.join(', ') : `${names.slice(0, 3).join(', ')} and ${names.length - 3} more`;

  const findings: SharedAddressFinding[] = [];
  for (const partnerId of [...partners].sort((a, b) => a - b)) {
    const byKey = new Map<number, Map<string, Counts>>();
    for (const { rows } of flagged) {
      for (const row of rows) {
        if (row.partnerId !== partnerId) continue;
        const own = byKey.get(row.apiKeyId) ?? new Map<string, Counts>();
        add(own, row.placements);
        byKey.set(row.apiKeyId, own);
      }
    }
    const together = new Map<string, Counts>();
    for (const placements of byKey.values()) add(together, placements);
    const own = figures(together, baseline);
    if (own.clicks < t.minPartnerClicks || own.ratio < t.partnerRatio) continue;
    const ownKeys = [...byKey]
      .map(([apiKeyId, placements]) => {
        const { impressions, clicks, ratio } = figures(placements, baseline);
        return { apiKeyId, impressions, clicks, ratio };
      })
      .sort((a, b) => b.clicks - a.clicks || a.apiKeyId - b.apiKeyId);
    const addresses = flagged.slice(0, t.maxListed).map(({ address, rows, figures: f }) => {
      const mine = new Map<string, Counts>();
      for (const row of rows) if (row.partnerId === partnerId) add(mine, row.placements);
      return {
        address,
        partners: new Set(rows.map((row) => row.partnerId)).size,
        keys: rows.length,
        impressions: f.impressions,
        clicks: f.clicks,
        ctr: f.ctr,
        baselineCtr: f.baselineCtr,
        ratio: f.ratio,
        partnerClicks: clicksOf(mine),
      };
    });
    findings.push({
      partnerId,
      apiKeyId: ownKeys[0]!.apiKeyId,
      finding: {
        signal: 'shared addresses',
        measure: own.ratio,
        threshold: t.partnerRatio,
        suspendable: false,
        evidence: {
          summary:
            `${own.clicks} clicks on ${own.impressions} impressions (${round(own.ratio, 1)}× its placements' baseline) came from ` +
            `${names.length === 1 ? 'an end-user address' : `${names.length} end-user addresses`} (${listed}) ` +
            `clicked through ${partners.size} partners and ${keys.size} keys: click-through rate ${percent(overall.ctr)} there is ` +
            `${round(overall.ratio, 1)}× the baseline of ${percent(overall.baselineCtr)} (${overall.clicks} clicks on ${overall.impressions} impressions)`,
          addressCount: names.length,
          addresses,
          partners: partners.size,
          keys: ownKeys,
          allKeys: keys.size,
          impressions: overall.impressions,
          clicks: overall.clicks,
          ctr: overall.ctr,
          baselineCtr: overall.baselineCtr,
          expectedClicks: overall.expectedClicks,
          ratio: overall.ratio,
          partner: { impressions: own.impressions, clicks: own.clicks, ctr: own.ctr, ratio: own.ratio },
          baselineSource: baseline.source,
          baselineRate: baseline.median ? 'median of partners' : 'pooled',
          baselinePartners: baseline.partners,
          windowStart: iso(window.start),
          windowEnd: iso(window.end),
          measure: own.ratio,
          threshold: t.partnerRatio,
          thresholds: {
            ratio: t.ratio,
            minClicks: t.minClicks,
            minKeys: t.minKeys,
            partnerRatio: t.partnerRatio,
            minPartnerClicks: t.minPartnerClicks,
          },
        },
      },
    });
  }
  return findings;
}
