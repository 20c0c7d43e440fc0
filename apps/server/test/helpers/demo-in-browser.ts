import fs from 'node:fs';
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from '../../../../scripts/chromium.mjs';
import { tempDir } from './engines.js';
import { ensureBuilt, managementClient, startServerProcess, type ServerProcess } from './process.js';

/** The built server with the demo data, and Chromium, shared by the tests of one file. */
export interface DemoInBrowser {
  /** The server's process: its URL, its output and the summary it printed. */
  readonly server: ServerProcess;
  /** Calls to the management API with the server's admin token. */
  readonly admin: ReturnType<typeof managementClient>;
  /** The server's data directory: its SQLite store, which a test may write past events to. */
  readonly dataDir: string;
  /** Where screenshots go: `PLACARD_SHOTS_DIR` when set (to look at them afterwards), else a temporary folder. */
  readonly shots: string;
  /** A browser of its own (cookies, viewport, scripts on or off), closed after the file's tests. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  /** The e-mail address and password of the demo's user of `kind` (each an admin of their account). */
  demoUser(kind: 'operator' | 'advertiser' | 'partner'): { email: string; password: string };
}

/**
 * Registers the hooks that start the built server with the demo data, and Chromium, before the
 * enclosing block's tests, and close every context, the browser and the server after them. `name`
 * names the temporary folders (data and screenshots).
 */
export function demoInBrowser(name: string): DemoInBrowser {
  const state: { server?: ServerProcess; browser?: Browser } = {};
  const contexts: BrowserContext[] = [];
  const shots = process.env['PLACARD_SHOTS_DIR'] ?? tempDir(`placard-${name}-shots-`);
  const dataDir = tempDir(`placard-${name}-data-`);
  const server = (): ServerProcess => {
    if (!state.server) throw new Error('the demo server runs only from the block’s beforeAll on');
    return state.server;
  };

  // Building is a set-up of its own, under a hook's timeout of its own: on a loaded machine the build
  // and the start with the browser's launch each take minutes.
  beforeAll(() => ensureBuilt());
  beforeAll(async () => {
    state.server = await startServerProcess({ PLACARD_DATA_DIR: dataDir }, ['--demo']);
    state.browser = await launchChromium();
    fs.mkdirSync(shots, { recursive: true });
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await state.browser?.close();
    await state.server?.stop();
  });

  return {
    get server() {
      return server();
    },
    get admin() {
      return managementClient(server().url, server().summary.adminToken!);
    },
    dataDir,
    shots,
    async newContext(options) {
      if (!state.browser) throw new Error('the browser runs only from the block’s beforeAll on');
      const context = await state.browser.newContext(options);
      contexts.push(context);
      return context;
    },
    demoUser: (kind) => server().summary.demoSignIns!.find((user) => user.kind === kind)!,
  };
}
