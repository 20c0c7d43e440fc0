import { describe, expect, it } from 'vitest';
import { chooseBaseline, type BaselineTraffic } from './key-flags.js';
import { sharedAddressFindings, type AddressKeyTraffic } from './shared-addresses.js';

const T0 = Date.parse('2026-06-01T12:00:00Z');
const WINDOW = { start: T0 - 5 * 60_000, end: T0 };

/** The day's billable traffic of three partners on `header_banner`, each at 1%: a median baseline of 1%. */
const NORMAL: BaselineTraffic = new Map(
  [101, 102, 103].map((key) => [
    key,
    { partnerId: key, placements: new Map([['header_banner', { impressions: 10_000, clicks: 100 }]]) },
  ]),
);
const baseline = () =>
  chooseBaseline(new Map([['header_banner', { impressions: 0, clicks: 0 }]]), NORMAL, {
    apiKeyId: 0,
    partnerId: 0,
  })!;

/** One key's events from one address. */
const from = (
  address: string,
  apiKeyId: number,
  partnerId: number,
  impressions: number,
  clicks: number,
): AddressKeyTraffic => ({
  address,
  apiKeyId,
  partnerId,
  placements: new Map([['header_banner', { impressions, clicks }]]),
});

/**
 * A click farm at two addresses browsing partners 1, 2 (two keys) and 3: from each address, each key
 * 60 displays, about 15 clicked (25×); 60 clicks per address.
 */
const FARM = ['203.0.113.0', '198.51.100.0'].flatMap((address) => [
  from(address, 11, 1, 60, 15),
  from(address, 21, 2, 60, 14),
  from(address, 22, 2, 60, 16),
  from(address, 31, 3, 60, 15),
]);

/**
 * A carrier's NAT address: `partners` partners' users behind it, `displays` each, clicked like
 * people do at `ctr` (1% is the baseline's).
 */
const nat = (address: string, partners: number, displays: number, ctr: number) =>
  Array.from({ length: partners }, (_, i) =>
    from(address, 500 + i, 50 + i, displays, Math.round(displays * ctr)),
  );

const found = (traffic: AddressKeyTraffic[]) =>
  sharedAddressFindings(traffic, baseline(), WINDOW).map((f) => [f.partnerId, f.apiKeyId]);

describe('shared addresses (D15, key flags)', () => {
  it('flags each partner whose clicks came, with other partners’, from addresses clicked far above the baseline', () => {
    const findings = sharedAddressFindings(FARM, baseline(), WINDOW);
    expect(findings.map((f) => [f.partnerId, f.apiKeyId])).toEqual([
      [1, 11],
      [2, 22],
      [3, 31],
    ]);
    const two = findings[1].finding;
    expect(two).toMatchObject({ signal: 'shared addresses', threshold: 3, suspendable: false });
    expect(two.evidence).toMatchObject({
      addressCount: 2,
      partners: 3,
      allKeys: 4,
      impressions: 480,
      clicks: 120,
      ctr: 0.25,
      baselineCtr: 0.01,
      ratio: 25,
      partner: { impressions: 240, clicks: 60, ratio: 25 },
      keys: [
        { apiKeyId: 22, impressions: 120, clicks: 32, ratio: 32 / 1.2 },
        { apiKeyId: 21, impressions: 120, clicks: 28, ratio: 28 / 1.2 },
      ].map((key) => ({ ...key, ratio: Number(key.ratio.toFixed(3)) })),
      baselineRate: 'median of partners',
      windowEnd: new Date(T0).toISOString(),
    });
    expect((two.evidence['addresses'] as Array<{ address: string }>).map((a) => a.address)).toEqual([
      '198.51.100.0', // as many clicks as the other: by address
      '203.0.113.0',
    ]);
    expect(two.evidence['addresses']).toContainEqual(
      expect.objectContaining({
        address: '203.0.113.0',
        partners: 3,
        keys: 4,
        clicks: 60,
        partnerClicks: 30,
      }),
    );
    expect(two.evidence.summary).toBe(
      "60 clicks on 240 impressions (25× its placements' baseline) came from 2 end-user addresses (198.51.100.0, 203.0.113.0) clicked through 3 partners and 4 keys: click-through rate 25% there is 25× the baseline of 1% (120 clicks on 480 impressions)",
    );
  });

  it('never flags a big carrier NAT address, or an office, whose people click as people do, however many partners they visit', () => {
    // 40 partners, 1,000 displays each from one address in 5 minutes, clicked 1%, 1.5% and 2.5%:
    // 400 to 1,000 clicks, all under 3× the baseline.
    for (const ctr of [0.01, 0.015, 0.025]) expect(found(nat('100.64.0.0', 40, 1_000, ctr))).toEqual([]);
    // One partner's users there click 4% (8 clicks on 200 displays): the address as a whole clicks
    // as people do (1%), so it is flagged for nothing.
    expect(found([...nat('100.64.0.0', 40, 1_000, 0.01), from('100.64.0.0', 900, 90, 200, 8)])).toEqual([]);
    // Beside the farm, the farm alone is flagged.
    expect(found([...FARM, ...nat('100.64.0.0', 40, 1_000, 0.02)]).map(([partner]) => partner)).toEqual([
      1, 2, 3,
    ]);
  });

  it('does not name an honest partner whose users share a flagged address and click as people do', () => {
    // Partner 4's users behind the farm's first address: 400 displays, 5 clicked (1.25%); the
    // address is still 65 clicks on 640 displays (10×).
    const findings = found([...FARM, from('203.0.113.0', 41, 4, 400, 5)]);
    expect(findings.map(([partner]) => partner)).toEqual([1, 2, 3]);
  });

  it('holds an address to its thresholds: 50 clicks, 3× the baseline, 2 keys clicked; a partner to 5 clicks at 3×', () => {
    // 49 clicks on 400 displays (12×) through two keys: too few.
    const address = (clicks: [number, number], impressions = 200) => [
      from('203.0.113.0', 11, 1, impressions, clicks[0]),
      from('203.0.113.0', 21, 2, impressions, clicks[1]),
    ];
    expect(found(address([25, 24]))).toEqual([]);
    expect(found(address([25, 25]))).toEqual([
      [1, 11],
      [2, 21],
    ]);
    // 50 clicks where 2,000 displays predict 20 (2.5×); 60 (3×) is flagged.
    expect(found(address([25, 25], 1_000))).toEqual([]);
    expect(found(address([30, 30], 1_000)).length).toBe(2);
    // One key clicked from the address: that key's own traffic, judged by the key signals.
    expect(found([from('203.0.113.0', 11, 1, 400, 60), from('203.0.113.0', 21, 2, 400, 0)])).toEqual([]);
    // A partner with 4 clicks from it is not named, with 5 it is.
    expect(found([...address([30, 30]), from('203.0.113.0', 31, 3, 10, 4)]).map(([p]) => p)).toEqual([1, 2]);
    expect(found([...address([30, 30]), from('203.0.113.0', 31, 3, 10, 5)]).map(([p]) => p)).toEqual([
      1, 2, 3,
    ]);
  });

  it('counts clicks from an address with no impressions of its own as clicks from nowhere: at least 1 predicted', () => {
    const findings = sharedAddressFindings(
      [from('203.0.113.0', 11, 1, 0, 30), from('203.0.113.0', 21, 2, 0, 30)],
      baseline(),
      WINDOW,
    );
    expect(findings.map((f) => f.finding.evidence['ratio'])).toEqual([60, 60]);
  });

  it('has no signal without a baseline', () => {
    expect(sharedAddressFindings(FARM, undefined, WINDOW)).toEqual([]);
  });
});
