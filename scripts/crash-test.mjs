// `npm run test:crash`: proves that an acknowledged event is never lost or counted twice when the
// server is killed (D9). 64 clients send impressions and clicks (20:1), each with a unique
// Idempotency-Key and retrying failures with the same key, as a well-behaved partner does, while a
// supervisor SIGKILLs and restarts the server at random moments. Afterwards, read straight from the
// store: every key that got a 200 has exactly one counted event (0 lost), no key has two (0
// duplicated), and the per-minute rollups equal a recount of the raw events.
//
// `--broken` runs the same test against a copy of the build patched to answer before committing,
// and succeeds only if the test catches it (events acknowledged and then lost).
//
// Options (environment): CRASH_KILLS (default 12, at least 10), CRASH_CLIENTS (default 64).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  buildUnderTest,
  checkStore,
  describeCheck,
  freePort,
  liftKeyLimits,
  servedPairs,
  sleep,
  startPlacard,
  trackingLoad,
} from './event-load.mjs';

const broken = process.argv.includes('--broken');
const KILLS = Math.max(10, Number(process.env.CRASH_KILLS ?? 12));
const CLIENTS = Number(process.env.CRASH_CLIENTS ?? 64);

const log = (message) => console.log(`crash-test: ${message}`);

const dist = buildUnderTest('crash-broken', broken);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-crash-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const env = { PLACARD_DATA_DIR: dataDir, PLACARD_PORT: String(port) };
const start = () => startPlacard(dist, env, ['--demo']);

let server;
// Whatever fails, the server this test started does not outlive it.
process.on('exit', () => server?.child.kill('SIGKILL'));
server = await start();
const apiKey = server.summary.demoApiKey;
await liftKeyLimits(dist, { PLACARD_DATA_DIR: dataDir });
const pairs = await servedPairs(base, apiKey);
log(`${broken ? 'BROKEN build (answers before commit)' : 'build'}: ${dist}`);
log(`${CLIENTS} clients, ${KILLS} SIGKILLs, store ${path.join(dataDir, 'placard.db')}`);

const load = trackingLoad({ base, apiKey, pairs, clients: CLIENTS, prefix: 'crash' });
for (let kill = 1; kill <= KILLS; kill++) {
  await sleep(300 + Math.random() * 1200);
  server.child.kill('SIGKILL');
  await server.exited;
  const before = load.acknowledged.size;
  server = await start();
  log(`kill ${kill}/${KILLS}: restarted; ${before} events acknowledged so far`);
}
await sleep(500);
await load.stop();
server.child.kill('SIGTERM');
const finalExit = await server.exited;

const check = await checkStore(`sqlite:${path.join(dataDir, 'placard.db')}`, 'crash', load.acknowledged);
for (const line of describeCheck(load, check)) log(line);
log(`final SIGTERM exit: ${finalExit}`);

const failures = [...check.failures];
// A killed server answers nothing (0); a closing one 503; the limits are lifted, but 429 is an
// answer a partner retries too.
const unexpected = [...load.statuses.keys()].filter((status) => ![200, 0, 503, 429].includes(status));
if (unexpected.length > 0) failures.push(`unexpected answers: ${unexpected.join(', ')}`);
if (finalExit !== 0) failures.push(`graceful shutdown exited ${finalExit}`);
fs.rmSync(dataDir, { recursive: true, force: true });

if (broken) {
  fs.rmSync(dist, { recursive: true, force: true });
  if (failures.length === 0) {
    log('FAILED: the broken build was not caught');
    process.exit(1);
  }
  log(`the broken build was caught: ${failures.join('; ')}`);
  process.exit(0);
}
if (failures.length > 0) {
  log(`FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
log('passed: 0 lost, 0 counted twice, rollups exact');
