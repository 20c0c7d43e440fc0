// `npm run screenshots`: starts a demo server on a fresh data directory and a free port, opens its
// pages in Debian's Chromium (the API reference, and each demo user's dashboard) and saves what a
// new user sees to docs/images/, for the README.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { launchChromium } from './chromium.mjs';
import { freePort } from './event-load.mjs';
import { ensureBuilt, ensureChromium, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHOTS = [{ page: '/docs', file: 'api-docs.png', waitFor: '.opblock' }];

ensureInstalled();
ensureBuilt();
ensureChromium();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-screenshots-'));
const server = spawn(process.execPath, ['apps/server/dist/cli/main.js', 'serve', '--demo', '--json'], {
  cwd: root,
  env: {
    ...process.env,
    PLACARD_DATA_DIR: dataDir,
    PLACARD_PORT: String(await freePort()),
    PLACARD_HOST: '127.0.0.1',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let browser;
try {
  const summary = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not start within 20 s')), 20_000);
    server.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
    readline.createInterface({ input: server.stdout }).on('line', (line) => {
      // The summary `serve --json` prints among the JSON log lines.
      if (!line.startsWith('{')) return;
      const summary = JSON.parse(line);
      if (!('demoApiKey' in summary)) return;
      clearTimeout(timer);
      resolve(summary);
    });
  });
  const url = summary.url;
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  fs.mkdirSync(path.join(root, 'docs/images'), { recursive: true });
  for (const shot of SHOTS) {
    await page.goto(`${url}${shot.page}`);
    await page.waitForSelector(shot.waitFor, { timeout: 15_000 });
    const file = path.join(root, 'docs/images', shot.file);
    await page.screenshot({ path: file });
    console.log(`saved ${path.relative(root, file)} (${url}${shot.page})`);
  }
  // Each kind of demo user's main page, signed in as they would be.
  for (const signIn of summary.demoSignIns) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const own = await context.newPage();
    await own.goto(`${url}/sign-in`);
    await own.getByLabel('E-mail address').fill(signIn.email);
    await own.getByLabel('Password').fill(signIn.password);
    await own.getByRole('button', { name: 'Sign in' }).click();
    await own.waitForURL((address) => address.pathname !== '/sign-in');
    const file = path.join(root, 'docs/images', `dashboard-${signIn.kind}.png`);
    await own.screenshot({ path: file });
    console.log(`saved ${path.relative(root, file)} (${own.url()}, signed in as ${signIn.email})`);
    if (signIn.kind === 'advertiser') {
      // The live report over the demo's week of traffic, chart drawn.
      await own.goto(`${url}/reports?window=week`);
      await own.waitForSelector('[data-chart][data-drawn]', { timeout: 15_000 });
      const report = path.join(root, 'docs/images', 'dashboard-reports.png');
      await own.screenshot({ path: report });
      console.log(`saved ${path.relative(root, report)} (${own.url()}, signed in as ${signIn.email})`);
    }
    await context.close();
  }
} finally {
  await browser?.close();
  server.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
}
