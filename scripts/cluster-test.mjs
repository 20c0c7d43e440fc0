// `npm run test:cluster`: proves that the reference cluster (scripts/cluster.mjs: HAProxy in front
// of three instances on one PostgreSQL database and Redis) survives losing instances. Partners'
// servers fetch and report events through HAProxy, each event with a unique Idempotency-Key
// retried with the same key until acknowledged, while a supervisor SIGKILLs instances at random
// and restarts them, and restarts every instance in turn with SIGTERM (a rolling restart, each
// back and seen up by HAProxy before the next). Afterwards:
// - every acknowledged event is stored exactly once, and the rollups equal a recount of the raw
//   events (read straight from the store);
// - no answer was a 5xx other than 503 with Retry-After, and every request got an answer;
// - a key suspended through one instance is refused by every instance within 2 s.
//
// `--broken` runs the same test against a copy of the build patched to answer before committing,
// and succeeds only if the test catches it: acknowledged events lost.
//
// Options (environment): CLUSTER_KILLS (default 16), CLUSTER_CLIENTS (default 16),
// CLUSTER_TIME_LIMIT_S (default 600: the whole test, stopped and failed past it), CLUSTER_RETRY_ON
// (HAProxy's retry-on, to see what its default is for: `none`). PLACARD_REFRESH_INTERVAL_MS
// reaches the instances.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropDatabase, ensureDatabase, startCluster } from './cluster.mjs';
import {
  answerBeforeCommitBuild,
  checkStore,
  describeCheck,
  freePort,
  liftKeyLimits,
  placardJson,
  servedPairs,
  sleep,
  trackingLoad,
} from './event-load.mjs';
import { ensureBuilt, ensureHaproxy, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const broken = process.argv.includes('--broken');
const KILLS = Number(process.env.CLUSTER_KILLS ?? 16);
const CLIENTS = Number(process.env.CLUSTER_CLIENTS ?? 16);
/** How soon every instance must refuse a key suspended through one of them. */
const SUSPENSION_BOUND_MS = 2_000;
/** The whole test's bound (it takes 2 to 3 minutes on 2 cores). */
const TIME_LIMIT_MS = Number(process.env.CLUSTER_TIME_LIMIT_S ?? 600) * 1000;

const started = Date.now();
const log = (message) =>
  console.log(`cluster-test: [${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);

ensureInstalled();
ensureBuilt();
ensureHaproxy();

const dist = broken ? answerBeforeCommitBuild('cluster-broken') : path.join(root, 'apps/server/dist');
const databaseName = `placard_cluster_test_${process.pid}`;
const databaseUrl = await ensureDatabase(databaseName, true);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-cluster-'));
const env = {
  PLACARD_HOST: '127.0.0.1',
  PLACARD_DATA_DIR: dataDir,
  PLACARD_DATABASE_URL: databaseUrl,
  PLACARD_REDIS_URL: process.env.PLACARD_REDIS_URL ?? 'redis://127.0.0.1:6379',
  PLACARD_REDIS_KEY_PREFIX: `placard-cluster-test-${process.pid}:`,
};
const haproxyLog = path.join(dataDir, 'haproxy.log');
const failures = [];
/** HAProxy's log, printed when the test fails. */
let haproxyLines = [];
/** Exits of instances this script did not cause. */
const unexpectedExits = [];
let cluster;
let load;

/** Removes what the test made; also when it is stopped short. */
async function cleanUp() {
  await load?.abandon();
  await cluster?.stop();
  await dropDatabase(databaseName).catch((error) => log(`could not drop ${databaseName}: ${error.message}`));
  haproxyLines = fs.existsSync(haproxyLog) ? fs.readFileSync(haproxyLog, 'utf8').trim().split('\n') : [];
  fs.rmSync(dataDir, { recursive: true, force: true });
  if (broken) fs.rmSync(dist, { recursive: true, force: true });
}

// A bound on the whole test, whatever hangs.
setTimeout(async () => {
  log(`FAILED: still running after ${TIME_LIMIT_MS / 1000} s; stopping everything`);
  await cleanUp();
  process.exit(1);
}, TIME_LIMIT_MS).unref();

/** Restarts of killed instances under way, by instance name. */
const restarting = new Map();

/**
 * SIGKILLs a random instance and starts it again in the background, so that the next kill may
 * come before it is back; one instance at least is always left running (a cluster of three
 * survives losing two).
 */
async function killOne(kill, acknowledged) {
  const running = () => cluster.instances.filter((instance) => !restarting.has(instance.name));
  while (running().length < 2) await Promise.race(restarting.values());
  const candidates = running();
  const instance = candidates[Math.floor(Math.random() * candidates.length)];
  await cluster.kill(instance, 'SIGKILL');
  const back = cluster.restart(instance).finally(() => restarting.delete(instance.name));
  restarting.set(instance.name, back);
  log(`kill ${kill}/${KILLS}: SIGKILLed instance ${instance.name}; ${acknowledged.size} acknowledged so far`);
}

/** Waits for every killed instance to be back and seen up by HAProxy. */
async function allBack() {
  await Promise.all(restarting.values());
  await cluster.waitUp();
}

/** SIGTERMs each instance in turn; each drains, exits 0, starts again and is up in HAProxy. */
async function rollingRestart() {
  for (const instance of cluster.instances) {
    const from = Date.now();
    const status = await cluster.kill(instance, 'SIGTERM');
    if (status !== 0) failures.push(`instance ${instance.name} exited ${status} on SIGTERM`);
    const drained = Date.now();
    await cluster.restart(instance);
    const ready = Date.now();
    await cluster.waitUp([instance.name]);
    log(
      `rolling restart: instance ${instance.name} drained in ${drained - from} ms (exit ${status}), ` +
        `ready ${ready - drained} ms later, up in HAProxy ${Date.now() - ready} ms after that`,
    );
  }
}

/**
 * Suspends `keyId` through the management API of the first instance, then asks every instance
 * directly, every 20 ms, until each refuses `apiKey` with 403; resolves with each one's delay.
 */
async function suspensionDelays(keyId, apiKey) {
  const suspend = await fetch(`${cluster.instances[0].url}/admin/v1/keys/${keyId}/suspend`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.summary.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'cluster test' }),
  });
  if (suspend.status !== 200) throw new Error(`suspending the key answered ${suspend.status}`);
  const suspended = Date.now();
  return Promise.all(
    cluster.instances.map(async (instance) => {
      for (;;) {
        const answer = await fetch(`${instance.url}/api/v1/campaigns/fetch?placement=header_banner`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        await answer.arrayBuffer();
        const elapsed = Date.now() - suspended;
        if (answer.status === 403) return { instance, elapsed, refused: true };
        if (elapsed > 2 * SUSPENSION_BOUND_MS) return { instance, elapsed, refused: false };
        await sleep(20);
      }
    }),
  );
}

try {
  cluster = await startCluster({
    dist,
    port: await freePort(),
    ports: [await freePort(), await freePort(), await freePort()],
    runDir: path.join(dataDir, 'haproxy'),
    env,
    retryOn: process.env.CLUSTER_RETRY_ON,
    logFile: haproxyLog,
    onExit: (instance, status) => unexpectedExits.push(`instance ${instance.name} exited ${status}`),
  });
  const apiKey = cluster.summary.demoApiKey;
  const cli = { PLACARD_DATA_DIR: dataDir, PLACARD_DATABASE_URL: databaseUrl };
  await liftKeyLimits(dist, cli);
  const pairs = await servedPairs(cluster.url, apiKey);
  log(`${broken ? 'BROKEN build (answers before commit)' : 'build'}: ${dist}`);
  log(`HAProxy ${cluster.url} in front of ${cluster.instances.map((instance) => instance.url).join(', ')}`);
  log(`${CLIENTS} clients, ${KILLS} SIGKILLs and a rolling restart, store ${databaseUrl}`);

  load = trackingLoad({
    base: cluster.url,
    apiKey,
    pairs,
    clients: CLIENTS,
    prefix: 'cluster',
    fetchEvery: 5,
  });
  const chaosStarted = Date.now();
  for (let kill = 1; kill <= KILLS; kill++) {
    await sleep(300 + Math.random() * 1200);
    await killOne(kill, load.acknowledged);
    if (kill === Math.ceil(KILLS / 2)) {
      await allBack();
      await rollingRestart();
    }
  }
  await allBack();
  await sleep(500);
  await load.stop();
  const chaosSeconds = (Date.now() - chaosStarted) / 1000;
  log(
    `load: ${load.acknowledged.size} events acknowledged, ${load.fetches} fetches, in ${chaosSeconds.toFixed(1)} s`,
  );
  log(
    `answers seen through HAProxy: ${[...load.statuses].map(([status, count]) => `${status}: ${count}`).join(', ')}`,
  );
  if (load.noAnswer.size > 0)
    log(`no answer: ${[...load.noAnswer].map(([code, count]) => `${code}: ${count}`).join(', ')}`);
  for (const [status, count] of load.statuses) {
    if (status === 200 || status === 503) continue;
    failures.push(`${count} answers ${status === 0 ? 'missing (no answer)' : status}`);
  }

  const [demoKey] = await placardJson(dist, ['keys', 'list'], cli);
  const delays = await suspensionDelays(demoKey.id, apiKey);
  const delay = ({ instance, elapsed, refused }) =>
    refused ? `${instance.name} in ${elapsed} ms` : `${instance.name} not within ${elapsed} ms`;
  log(`key suspended through instance a, refused by ${delays.map(delay).join(', ')}`);
  for (const { instance, elapsed, refused } of delays)
    if (!refused || elapsed > SUSPENSION_BOUND_MS)
      failures.push(
        `instance ${instance.name} did not refuse the suspended key within ${SUSPENSION_BOUND_MS} ms (${delay({ instance, elapsed, refused })})`,
      );
  const through = await fetch(`${cluster.url}/api/v1/campaigns/fetch?placement=header_banner`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  const refusal = await through.json();
  if (through.status !== 403 || refusal.message !== 'api key suspended')
    failures.push(`through HAProxy the suspended key got ${through.status} ${JSON.stringify(refusal)}`);

  await cluster.stop();
  failures.push(...unexpectedExits);
  const check = await checkStore(databaseUrl, 'cluster', load.acknowledged);
  for (const line of describeCheck(load, check)) log(line);
  failures.push(...check.failures);
} catch (error) {
  failures.push(`the test could not run: ${error.stack ?? error}`);
} finally {
  await cleanUp();
}
log(`took ${((Date.now() - started) / 1000).toFixed(1)} s`);

// With --broken, only lost events prove the catch; anything else wrong is the test's own failure.
const lost = failures.find((failure) => failure.includes('acknowledged events lost'));
if (broken ? !lost : failures.length > 0) {
  log(`HAProxy's log, last 40 of ${haproxyLines.length} lines:\n${haproxyLines.slice(-40).join('\n')}`);
  log(`FAILED: ${broken ? 'the broken build was not caught: ' : ''}${failures.join('; ') || 'nothing lost'}`);
  process.exit(1);
}
log(
  broken
    ? `the broken build was caught: ${lost}`
    : 'passed: 0 lost, 0 counted twice, rollups exact, no 5xx but 503 with Retry-After, suspension everywhere within 2 s',
);
