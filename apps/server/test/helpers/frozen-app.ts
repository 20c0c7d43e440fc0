import { afterEach, beforeEach } from 'vitest';
import { createTestApp, type TestApp } from './app.js';

/** The app of the running test, and the time its clock shows: `now` moves only when the test sets it. */
export type FrozenApp = TestApp & { now: number };

/**
 * Registers hooks that give each test of the enclosing block a fresh app on `engine` whose clock
 * stands still at `start` until the test moves `now`, and close it afterwards. The object returned
 * stands for the running test's app (a proxy, since each test gets a new one), so the block reads
 * `t.fetch(…)` and `t.now += 1000` as it would with a variable it assigned itself.
 */
export function eachTestFrozenApp(
  engine: 'sqlite' | 'postgres',
  start: string,
  options: Omit<Parameters<typeof createTestApp>[0], 'engine' | 'clock'> = {},
): FrozenApp {
  const current: { app?: TestApp; now: number } = { now: Date.parse(start) };
  beforeEach(async () => {
    current.now = Date.parse(start);
    current.app = await createTestApp({ ...options, engine, clock: () => current.now });
  });
  afterEach(async () => {
    await current.app?.close();
    current.app = undefined;
  });
  const app = (): TestApp => {
    if (current.app === undefined) throw new Error('the app exists only while a test runs');
    return current.app;
  };
  return new Proxy({} as FrozenApp, {
    get: (_target, property) => (property === 'now' ? current.now : Reflect.get(app(), property)),
    set: (_target, property, value: number) => {
      if (property !== 'now')
        throw new Error(`only the clock of the test app can be set, not ${String(property)}`);
      current.now = value;
      return true;
    },
  });
}
