import fs from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  cpmCumulativeCost,
  cpmImpressionCost,
  micros,
  revenueShareCumulative,
  revenueShareIncrement,
} from '../src/domain/money.js';
import { statementTotals } from '../src/domain/statement-totals.js';
import { freePort } from './helpers/free-port.js';
import { guideRunner, shellBlocks, textBlocks } from './helpers/guide-script.js';
import { ensureBuilt } from './helpers/process.js';

/**
 * The money guide, followed literally (helpers/guide-script.ts): its walkthrough's commands print
 * exactly what its `text` blocks show, in order, so a figure in the guide that the product does not
 * give fails here. `…` in a shown line stands for what changes from run to run (today's date).
 */

const guide = guideRunner('docs/money.md', 'money-data');

afterAll(() => guide.stop());

// Building is a set-up's work, under the hooks' timeout, not a test's.
beforeAll(() => ensureBuilt());

function linePattern(shown: string): RegExp {
  const parts = shown.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.+')}$`);
}

it('prints the spend the guide shows for a campaign at a CPM of 2.50 and a partner on 70%', async () => {
  // The guide's data directory is the reader's own: never overwrite one that is there.
  expect(fs.existsSync(guide.dataDir), `${guide.dataDir} exists; move it away to run this test`).toBe(false);
  expect(shellBlocks(guide.markdown()).length).toBeGreaterThan(5);
  const { code, stdout, stderr } = await guide.run(await freePort());
  expect(code, `the guide's commands failed:\n${stdout}\n${stderr}`).toBe(0);

  // The walkthrough's shown output, line for line; the request lines of the text block that shows
  // the API's form (before the walkthrough) are not output.
  const shown = textBlocks(guide.markdown())
    .filter((block) => !block.startsWith('POST '))
    .flatMap((block) => block.trimEnd().split('\n'));
  // CSV lines end in CRLF (RFC 4180), which a terminal does not show.
  const printed = stdout.trimEnd().split(/\r?\n/);
  expect(printed).toHaveLength(shown.length);
  shown.forEach((line, index) =>
    expect(printed[index], `shown line ${index + 1}`).toMatch(linePattern(line)),
  );
}, 240_000);

it("gives the worked examples' figures", () => {
  const markdown = guide.markdown();
  const cpm = micros(2_500_001);
  expect(cpmImpressionCost(cpm, 999)).toBe(2_500);
  expect(cpmImpressionCost(cpm, 1000)).toBe(2_501);
  expect(cpmCumulativeCost(cpm, 999)).toBe(2_497_500);
  expect(cpmCumulativeCost(cpm, 1000)).toBe(2_500_001);
  expect(cpmCumulativeCost(cpm, 2345)).toBe(5_862_502);
  expect(revenueShareCumulative(7000, micros(5_862_502))).toBe(4_103_751);
  expect(cpmCumulativeCost(micros(2_500_000), 10_000)).toBe(25_000_000);
  expect(revenueShareCumulative(7000, micros(7_500))).toBe(5_250);
  expect(revenueShareIncrement(7000, micros(5_000), micros(2_500))).toBe(1_750);
  // Statements: the walkthrough's bonus on its earnings; the minimum payout's example is
  // domain/statement-totals.test.ts's.
  const zero = micros(0);
  const bonus = { subtotal: micros(5_250), adjustments: micros(500_000), openingBalance: zero };
  expect(statementTotals('partner', bonus, zero).payable).toBe(505_250);
  for (const figure of [
    '2,497,500',
    '2,500,001',
    '5,862,502',
    '4,103,751',
    '25,000,000',
    '5,250',
    '1,750',
    '505,250',
    '30,000,000',
    '70,000,000',
  ]) {
    expect(markdown).toContain(figure);
  }
});
