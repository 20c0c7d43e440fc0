import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** One rule axe-core finds broken on a page: its id, how much it matters, and its first element. */
export interface AxeFinding {
  id: string;
  impact: string | null;
  target: string;
}

/** Every rule axe-core finds broken on the page, whatever its impact. */
export async function axeFindings(page: Page): Promise<AxeFinding[]> {
  // Injected through the debugging protocol, so the page's strict CSP stays as it is.
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const { violations } = await (
      window as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe.run();
    return violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      target: violation.nodes[0]?.target.join(' ') ?? '',
    }));
  });
}

/** The ids of the serious and critical rules axe-core finds broken on the page. */
export async function seriousAxeFindings(page: Page): Promise<string[]> {
  return (await axeFindings(page))
    .filter((finding) => finding.impact === 'serious' || finding.impact === 'critical')
    .map((finding) => finding.id);
}

/** How many pixels the page itself scrolls sideways (0 when it fits the screen). */
export const sidewaysScroll = (page: Page): Promise<number> =>
  page.evaluate(() => Math.max(0, document.documentElement.scrollWidth - window.innerWidth));

/** The serious and critical axe-core findings on the page, and any sideways scrolling of it. */
export async function pageProblems(page: Page): Promise<string[]> {
  const findings = await seriousAxeFindings(page);
  const overflow = await sidewaysScroll(page);
  return [...findings, ...(overflow > 0 ? [`${overflow}px of sideways scrolling`] : [])];
}

/** Types each value of `fields` into the field labelled with its name, as a person does. */
export async function fillLabelled(page: Page, fields: Record<string, string>): Promise<void> {
  for (const [label, value] of Object.entries(fields)) await page.getByLabel(label).fill(value);
}

/** Fills in the sign-in form the page shows and submits it, as a person does. */
export async function fillSignIn(page: Page, user: { email: string; password: string }): Promise<void> {
  await fillLabelled(page, { 'E-mail address': user.email, Password: user.password });
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The sizes pages are looked at: a desktop's screen and a phone's. */
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * Screenshots of `page` at desktop and phone sizes in `dir` (`<name>-desktop.png`, `<name>-phone.png`),
 * each size checked by `pageProblems`; the page is back at desktop size after.
 */
export async function shootBothSizes(page: Page, dir: string, name: string): Promise<string[]> {
  const problems: string[] = [];
  for (const [size, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await page.screenshot({ path: path.join(dir, `${name}-${size}.png`), fullPage: true });
    for (const problem of await pageProblems(page)) problems.push(`${name} ${size}: ${problem}`);
  }
  await page.setViewportSize(DESKTOP);
  return problems;
}
