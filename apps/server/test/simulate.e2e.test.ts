import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/process.js';

/**
 * Seconds of traffic: long enough for every flag D15 requires within 2 minutes of a pattern's start,
 * and for the click farm's addresses to pass their 50 clicks (about 105 s after its start at this
 * pattern's pace: a 100 s run caught it only some of the time).
 */
const SECONDS = 150;

interface Counts {
  impressions: number;
  clicks: number;
}
interface Flag {
  signal: string;
  summary: string;
  evidence: Record<string, unknown>;
  secondsAfterStart: number;
  worstCaseSecondsAfterStart: number;
}
interface Pattern {
  name: string;
  apiKeyId: number;
  sent: Counts;
  unbillable: Counts;
  /** Events held by an outage of the partner's forwarder and sent late, with their `occurredAt`. */
  late: number;
  failed: Record<string, number>;
  /** Requests answered 403 because the pattern's key was suspended (flag policy autoSuspend). */
  refusedSuspended: { fetches: number; events: number };
  billable: Counts;
  notBilled: Counts;
  byReason: Record<string, Counts>;
  billableShare: number;
  unbillableNotBilled: { impressions: number | null; clicks: number | null; all: number | null };
  flags: Flag[];
  /** How many of its partner's keys were suspended at the end. */
  suspendedKeys: number;
  /** Each of its targets and whether it held. */
  checks: Array<{ what: string; holds: boolean }>;
}
interface Report {
  seconds: number;
  flagIntervalMs: number;
  productionFlagIntervalMs: number;
  patterns: Pattern[];
  otherFlags: unknown[];
}

/**
 * Measurement integrity (D15) end to end: `npm run simulate`'s short version. bench/simulate/run.mjs
 * starts the built server (SQLite in a temporary directory, loopback only), drives the patterns' partners'
 * traffic patterns through the partner API at once for SECONDS, and reads back what was billed and
 * flagged through the management API; this holds its figures to D15's thresholds. It stops
 * the server it started by its pid whatever happens; spawnSync's timeout stops it (SIGTERM, which
 * it passes on) if it hangs.
 */
describe('npm run simulate (short)', () => {
  let report: Report;
  let status: number | null;
  const pattern = (name: string): Pattern => {
    const found = report.patterns.find((p) => p.name === name);
    if (!found) throw new Error(`no pattern "${name}"`);
    return found;
  };

  beforeAll(() => {
    ensureBuilt();
    const run = spawnSync(
      process.execPath,
      ['bench/simulate/run.mjs', '--json', '--seconds', String(SECONDS)],
      { cwd: ROOT, encoding: 'utf8', timeout: 260_000, killSignal: 'SIGTERM' },
    );
    // 1: a target was missed (the tests below say which); anything else: the run itself failed.
    if (run.status !== 0 && run.status !== 1)
      throw new Error(`simulate exited ${run.status ?? run.signal}:\n${run.stderr}`);
    status = run.status;
    // A crash also exits 1: then there is no report line, and what it printed says why.
    const last = run.stdout.trim().split('\n').pop() ?? '';
    if (!last.startsWith('{'))
      throw new Error(`simulate exited ${run.status} without its report:\n${run.stderr.slice(-4000)}`);
    report = JSON.parse(last) as Report;
  }, 270_000);

  it('exits non-zero exactly when a pattern misses one of its targets', () => {
    const missed = report.patterns.some((p) => p.checks.some((c) => !c.holds));
    expect(status).toBe(missed ? 1 : 0);
  });

  it('sent every pattern’s traffic, each answered 200, and stored every event but those refused 403', () => {
    expect(report.seconds).toBe(SECONDS);
    const events = (counts: Counts) => counts.impressions + counts.clicks;
    for (const p of report.patterns) {
      expect(p.failed, p.name).toEqual({});
      expect(events(p.sent), p.name).toBeGreaterThan(0);
      // Billed or not, an event answered 200 is stored once; one refused because its key was
      // suspended is not (its fetches refused then sent no event, so they do not count here).
      expect(events(p.billable) + events(p.notBilled), p.name).toBe(
        events(p.sent) - p.refusedSuspended.events,
      );
    }
  });

  it('bills at least 99.5% of honest traffic, with and without tokens, and flags no honest key', () => {
    for (const name of ['honest', 'honest with tokens (SDK)']) {
      const p = pattern(name);
      expect(p.billableShare, name).toBeGreaterThanOrEqual(0.995);
      expect(p.sent.clicks, `${name}: clicks to judge`).toBeGreaterThan(10);
      expect(p.flags, name).toEqual([]);
    }
    // The server's own keys and any other key: none flagged.
    expect(report.otherFlags).toEqual([]);
  });

  it('keeps honest keys beside a polling key serving, unflagged, while the loop is flagged; flags a partner spreading fraud over 5 keys', () => {
    for (const name of [
      'poisoned baseline: honest background 1',
      'poisoned baseline: honest background 2',
      'poisoned baseline: honest at 3%',
    ]) {
      const p = pattern(name);
      expect(p.billableShare, name).toBeGreaterThanOrEqual(0.995);
      expect(p.flags, name).toEqual([]);
      expect(p.suspendedKeys, name).toBe(0);
    }
    expect(pattern('poisoned baseline: polling key').flags[0]).toMatchObject({ signal: 'ctr' });
    const spread = pattern('distributed keys');
    expect(spread.flags.map((flag) => flag.signal)).toContain('partner ctr');
  });

  it('bills a partner that catches up after an outage of its forwarder as it would have live, and flags it not', () => {
    const p = pattern('catch-up after an outage');
    // Held back for the outage, then sent within seconds, in order, each with the time it happened.
    expect(p.late).toBeGreaterThan(100);
    expect(p.billableShare).toBeGreaterThanOrEqual(0.995);
    expect(p.flags).toEqual([]);
    expect(p.suspendedKeys).toBe(0);
  });

  it('flags the partners a click farm spread over by the addresses they share, never the partners behind a carrier NAT', () => {
    const farm = pattern('shared addresses: click farm');
    const flag = farm.flags.find((f) => f.signal === 'shared addresses');
    expect(flag, JSON.stringify(farm.flags.map((f) => f.signal))).toBeDefined();
    expect(flag!.worstCaseSecondsAfterStart).toBeLessThanOrEqual(300);
    const addresses = (flag!.evidence['addresses'] as Array<{ address: string }>).map((a) => a.address);
    expect(addresses).toContain('203.0.113.0');
    expect(addresses).not.toContain('100.64.1.0');
    expect(flag!.summary).toMatch(
      /came from an end-user address \(203\.0\.113\.0\) clicked through 3 partners/,
    );
    const nat = pattern('shared addresses: carrier NAT');
    expect(nat.billableShare).toBeGreaterThanOrEqual(0.995);
    expect(nat.flags).toEqual([]);
    expect(nat.suspendedKeys).toBe(0);
  });

  it('with tokens, bills none of the replayed impressions, clicks without their token’s impression and second clicks', () => {
    const p = pattern('token replays');
    expect(p.unbillable.impressions).toBeGreaterThan(20);
    expect(p.unbillable.clicks).toBeGreaterThan(40);
    expect(p.unbillableNotBilled.impressions).toBe(1);
    expect(p.unbillableNotBilled.clicks).toBe(1);
    // Exactly: what the rules bill was billed, and the rest refused with the token's reasons.
    expect(p.billable).toEqual({
      impressions: p.sent.impressions - p.unbillable.impressions,
      clicks: p.sent.clicks - p.unbillable.clicks,
    });
    expect(p.notBilled).toEqual(p.unbillable);
    // Its second clicks come 0.1-0.3 s after the first: double clicks.
    expect(Object.keys(p.byReason).sort()).toEqual([
      'click without impression',
      'double click',
      'token replay',
    ]);
  });

  it('without tokens, bills at most 1% of clicks with no unclicked impression before them, second clicks included', () => {
    const p = pattern('clicks without impressions');
    expect(p.unbillable.clicks).toBeGreaterThan(100);
    expect(p.unbillableNotBilled.clicks).toBeGreaterThanOrEqual(0.99);
    // The first click of each double click had its impression, and was billed.
    expect(p.billable.clicks).toBeGreaterThanOrEqual(0.99 * (p.sent.clicks - p.unbillable.clicks));
    // Second clicks 0.1-0.25 s after the first, from the same end user, are double clicks.
    const refused =
      (p.byReason['click without impression']?.clicks ?? 0) + (p.byReason['double click']?.clicks ?? 0);
    expect(refused).toBeGreaterThanOrEqual(0.99 * p.unbillable.clicks);
  });

  it('bills no second click of a double click, with or without tokens, and every other event', () => {
    for (const name of ['double clicks with tokens', 'double clicks without tokens']) {
      const p = pattern(name);
      expect(p.unbillable.clicks, name).toBeGreaterThan(10);
      expect(p.unbillableNotBilled.clicks, name).toBeGreaterThanOrEqual(0.99);
      expect(p.byReason['double click']?.clicks ?? 0, name).toBeGreaterThanOrEqual(
        0.99 * p.unbillable.clicks,
      );
      const billableByRules =
        p.sent.impressions + p.sent.clicks - p.unbillable.impressions - p.unbillable.clicks;
      expect(p.billable.impressions + p.billable.clicks, name).toBeGreaterThanOrEqual(
        0.995 * billableByRules,
      );
      expect(p.flags, name).toEqual([]);
    }
  });

  it('bills at most 1% of what bots’ user agents, forwarded by the partner, saw and clicked', () => {
    const p = pattern('bot user agents');
    expect(p.unbillable).toEqual(p.sent);
    expect(p.unbillableNotBilled.all).toBeGreaterThanOrEqual(0.99);
    // Its clicks give its key a click-through rate several times the baseline, so the flag policy
    // (autoSuspend on ctr) may suspend it before the end on a slow machine: what was refused 403
    // then was never stored (its fetches refused then are counted apart: they sent no event).
    // Everything else was, and nearly all of it as a known bot.
    const stored = (counts: Counts) => counts.impressions + counts.clicks;
    const seen = JSON.stringify({ sent: p.sent, refused: p.refusedSuspended, byReason: p.byReason });
    expect(stored(p.billable) + stored(p.notBilled), seen).toBe(stored(p.sent) - p.refusedSuspended.events);
    const storedImpressions = p.billable.impressions + p.notBilled.impressions;
    expect(storedImpressions, seen).toBeGreaterThan(0.9 * p.sent.impressions);
    expect(p.byReason['known bot']?.impressions, seen).toBeGreaterThanOrEqual(0.99 * storedImpressions);
  });

  it('flags the click flood, the impression polling loop and the 20× key within 2 minutes of their start, with the evidence', () => {
    expect(report.flagIntervalMs).toBeLessThanOrEqual(5_000);
    const expected: Array<[string, string, RegExp]> = [
      [
        'click flood',
        'clicks without impressions',
        /^\d+ of its \d+ clicks \(\d+(\.\d+)?%\) had no impression/,
      ],
      ['impression polling loop', 'ctr', /^click-through rate 0% is [\d.]+× below its placements' baseline/],
      ['20x click-through', 'ctr', /^click-through rate [\d.]+% is [\d.]+× its placements' baseline/],
    ];
    for (const [name, signal, summary] of expected) {
      const p = pattern(name);
      const flag = p.flags.find((f) => f.signal === signal);
      expect(flag, `${name}: flags ${JSON.stringify(p.flags.map((f) => f.signal))}`).toBeDefined();
      // The flag came this long after the pattern started, with the job every 5 s; at the production
      // interval (30 s) the same evidence is judged at most 30 s later: that is held to 2 minutes.
      expect(flag!.worstCaseSecondsAfterStart, name).toBeLessThanOrEqual(120);
      expect(flag!.worstCaseSecondsAfterStart).toBeCloseTo(
        flag!.secondsAfterStart + report.productionFlagIntervalMs / 1000,
        0,
      );
      expect(flag!.summary, name).toMatch(summary);
      expect(flag!.evidence, name).toMatchObject({
        windowStart: expect.any(String),
        measure: expect.any(Number),
      });
      expect(flag!.evidence['measure'] as number).toBeGreaterThanOrEqual(
        flag!.evidence['threshold'] as number,
      );
    }
    // The 20× key against a baseline of the honest traffic (about 1%): at least 5×, its threshold.
    const ctr = pattern('20x click-through').flags.find((f) => f.signal === 'ctr')!;
    expect(ctr.evidence).toMatchObject({ direction: 'above', baselineSource: 'other partners' });
    expect(ctr.evidence['baselineCtr'] as number).toBeGreaterThan(0.003);
    expect(ctr.evidence['baselineCtr'] as number).toBeLessThan(0.03);
  });
});
