// Debian's Chromium, headless, as the browser tests and `npm run screenshots` launch it.
import { chromium } from 'playwright-core';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches /usr/bin/chromium (installed by `ensureChromium` in setup.mjs) with `CHROMIUM_FLAGS`. */
export function launchChromium() {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
}
