import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startServer, type RunningServer } from '../src/server.js';
import { wireServices, type Job } from '../src/wiring.js';
import { createDatabase, type TestDatabase } from './helpers/engines.js';
import { freePort } from './helpers/free-port.js';

/**
 * An instance's background jobs are one list from the wiring: the server starts them in its order
 * and stops them in reverse, so a job added to the wiring cannot be left running after close.
 */

const JOB_NAMES = [
  'serving-state',
  'lifecycle',
  'retention',
  'rollup-compaction',
  'fold',
  'pacing',
  'key-flags',
  'key-usage',
  'webhooks',
];

let database: TestDatabase | undefined;
let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await database?.drop();
  database = undefined;
});

const scheduledNames = (jobs: readonly Job[]) => jobs.filter((job) => job.scheduled).map((job) => job.name);

it('lists every object of the wiring that runs on a timer of its own', async () => {
  database = await createDatabase('sqlite');
  const store = await database.open();
  try {
    const services = wireServices(store, pino({ level: 'silent' }), {
      refreshIntervalMs: 60_000,
      accessLog: false,
      eventRetentionDays: 90,
    });
    const timed = Object.values(services).filter(
      (value): value is Pick<Job, 'scheduled'> =>
        typeof value === 'object' && value !== null && 'scheduled' in value,
    );
    expect(timed.length).toBeGreaterThan(0);
    for (const job of services.jobs) job.start();
    // Each of them was started through the list, so each is in it.
    expect(timed.filter((value) => !value.scheduled)).toEqual([]);
    for (const job of [...services.jobs].reverse()) await job.stop();
    expect(timed.filter((value) => value.scheduled)).toEqual([]);
  } finally {
    await store.close();
  }
});

it('starts every job in the list, and stops each in reverse order at close', async () => {
  database = await createDatabase('sqlite');
  const config = loadConfig({
    PLACARD_DATABASE_URL: database.url,
    PLACARD_HOST: '127.0.0.1',
    PLACARD_PORT: String(await freePort()),
    PLACARD_DRAIN_DELAY_MS: '0',
  });
  const running = await startServer(config, { logger: pino({ level: 'silent' }) });
  server = running;
  expect(running.jobs.map((job) => job.name)).toEqual(JOB_NAMES);
  expect(scheduledNames(running.jobs)).toEqual(JOB_NAMES);

  const stopped: string[] = [];
  for (const job of running.jobs) {
    const stop = job.stop.bind(job);
    Object.assign(job, {
      stop: async () => {
        await stop();
        stopped.push(job.name);
      },
    });
  }
  await running.close();
  expect(stopped).toEqual([...JOB_NAMES].reverse());
  expect(scheduledNames(running.jobs)).toEqual([]);
});
