// `npm run test:cluster`: proves that the reference cluster (scripts/cluster.mjs: HAProxy in front
// of three instances on one PostgreSQL database and Redis) survives losing instances. Partners'
// servers fetch and report events through HAProxy, each event with a unique Idempotency-Key
// retried with the same key until acknowledged, while a supervisor SIGKILLs instances at random
// and restarts them, and restarts every instance in turn with SIGTERM (a rolling restart, each
// back and seen up by HAProxy before the next). Afterwards:
// - every acknowledged event is stored exactly once, and the rollups equal a recount of the raw
//   events (read straight from the store);
// - no answer was a 5xx other than 503 with Retry-After, and every request got an answer but for
//   a few resets of kept-alive connections (see KEPT_ALIVE_RESET);
// - a key suspended through one instance is refused by every instance within 2 s;
// - a campaign with a total cap, raced for by partners through HAProxy while instances die, ends
//   with exactly its cap billable: the events in flight when it was reached are stored `past cap`,
//   and once every instance knows, its events are answered 404 (D16);
// - a campaign priced per thousand impressions with a total spend budget, raced for the same way,
//   ends with its spend within one impression's price of the budget and never past it, every
//   billable impression charged exactly its share of the CPM (the spend of n impressions is
//   floor(n × CPM / 1000)), and the events, the rollups, the price's count and the campaign's spend
//   counter agreeing to the micro (D18).
//
// `--broken` runs the same test against a copy of the build patched to answer before committing,
// and succeeds only if the test catches it: acknowledged events lost.
//
// Options (environment): CLUSTER_KILLS (default 16), CLUSTER_CLIENTS (default 16),
// CLUSTER_TIME_LIMIT_S (default 600: the whole test, stopped and failed past it), CLUSTER_RETRY_ON
// (HAProxy's retry-on, to see what its default is for: `none`), CLUSTER_CAP (default 1000: the
// capped campaign's total impressions), CLUSTER_BUDGET_MICROS (default 2000500: the budgeted campaign's total budget).
// PLACARD_REFRESH_INTERVAL_MS reaches the instances.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dropDatabase, ensureDatabase, startCluster } from './cluster.mjs';
import {
  buildUnderTest,
  checkStore,
  describeCheck,
  freePort,
  liftKeyLimits,
  placardJson,
  priceWithBudget,
  servedPairs,
  sleep,
  storedImpressions,
  storedSpend,
  trackingLoad,
} from './event-load.mjs';
import { ensureHaproxy } from './setup.mjs';

const broken = process.argv.includes('--broken');
const KILLS = Number(process.env.CLUSTER_KILLS ?? 16);
const CLIENTS = Number(process.env.CLUSTER_CLIENTS ?? 16);
/** How soon every instance must refuse a key suspended through one of them. */
const SUSPENSION_BOUND_MS = 2_000;
/** The capped campaign's total impressions, and the partners' servers racing for them. */
const CAP = Number(process.env.CLUSTER_CAP ?? 1000);
const CAPPED_CLIENTS = 4;
/** How long after the kills the capped campaign may take to reach its cap, if it has not yet. */
const CAP_WAIT_MS = 60_000;
/**
 * The budgeted campaign's CPM (its impressions cost 2,500 or 2,501 micros) and total budget in micros
 * (800 impressions cost 2,000,000; the 801st would pass it).
 */
const BUDGET_CPM = 2_500_001;
const BUDGET = Number(process.env.CLUSTER_BUDGET_MICROS ?? 2_000_500);
/** The whole test's bound (it takes 2 to 3 minutes on 2 cores). */
const TIME_LIMIT_MS = Number(process.env.CLUSTER_TIME_LIMIT_S ?? 600) * 1000;
/**
 * Requests with no answer: only resets of kept-alive connections are borne, and at most this share
 * of all requests. When every instance is down at once, HAProxy 2.6 answers 503 itself and closes
 * the partner's connection, and now and then resets one that a request was just sent on; a
 * partner's HTTP client retries that with the same Idempotency-Key (the SDK does), so nothing is
 * lost, as the store check shows. Any other missing answer (a timeout, a reset of a new
 * connection) fails the test.
 */
const KEPT_ALIVE_RESET = 'ECONNRESET on a kept-alive connection';
const RESETS_BORNE = 0.005;

const started = Date.now();
const log = (message) =>
  console.log(`cluster-test: [${((Date.now() - started) / 1000).toFixed(1)} s] ${message}`);

ensureHaproxy();

const dist = buildUnderTest('cluster-broken', broken);
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
let cappedLoad;
let budgetLoad;

/** Removes what the test made; also when it is stopped short. */
async function cleanUp() {
  await load?.abandon();
  await cappedLoad?.abandon();
  await budgetLoad?.abandon();
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

/** Calls instance a's management API as the operator; resolves with the answer's `data`. */
async function admin(method, pathName, body) {
  const answer = await fetch(`${cluster.instances[0].url}/admin/v1${pathName}`, {
    method,
    headers: { authorization: `Bearer ${cluster.summary.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  const json = await answer.json();
  if (answer.status >= 400)
    throw new Error(`${method} ${pathName} answered ${answer.status} ${json.message}`);
  return json.data;
}

/**
 * Suspends `keyId` through the management API of the first instance, then asks every instance
 * directly, every 20 ms, until each refuses `apiKey` with 403; resolves with each one's delay.
 */
async function suspensionDelays(keyId, apiKey) {
  await admin('POST', `/keys/${keyId}/suspend`, { reason: 'cluster test' });
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

/**
 * Creates a campaign on header_banner through `admin` with `fields` (a cap) and `prepare(id)` done
 * to it (a price and a budget), submits and approves it, and resolves with its id once every
 * instance serves it.
 */
async function racedCampaign(apiKey, name, fields, prepare = async () => undefined) {
  const advertiser = await admin('POST', '/advertisers', { name: `${name} Cluster Advertiser` });
  const { id } = await admin('POST', '/campaigns', {
    advertiserId: advertiser.id,
    title: `${name} in the cluster`,
    destinationUrl: `https://${name.toLowerCase()}.example/`,
    placements: ['header_banner'],
    ...fields,
  });
  await prepare(id);
  await admin('POST', `/campaigns/${id}/submit`);
  await admin('POST', `/campaigns/${id}/approve`);
  for (const instance of cluster.instances) {
    const since = Date.now();
    for (;;) {
      const answer = await fetch(`${instance.url}/api/v1/campaigns/fetch?placement=header_banner&limit=100`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      const body = await answer.json();
      if (body.data?.some((campaign) => campaign.id === id)) break;
      if (Date.now() - since > 10_000)
        throw new Error(`instance ${instance.name} never served campaign ${id}`);
      await sleep(50);
    }
  }
  return id;
}

/** Resolves true once `raced`'s events are refused (its campaign reached its cap or budget), false after `ms`. */
async function refusedWithin(raced, ms) {
  const since = Date.now();
  while (!raced.statuses.has(404)) {
    if (Date.now() - since > ms) return false;
    await sleep(100);
  }
  return true;
}

/** What is wrong with the requests that got no answer, in `loads` (see KEPT_ALIVE_RESET). */
function unansweredFailures(loads) {
  const count = (map) => [...map.values()].reduce((sum, n) => sum + n, 0);
  const requests = loads.reduce((sum, load) => sum + count(load.statuses), 0);
  const unanswered = new Map();
  for (const load of loads)
    for (const [why, n] of load.noAnswer) unanswered.set(why, (unanswered.get(why) ?? 0) + n);
  if (unanswered.size === 0) return [];
  const times = loads.flatMap((load) => load.unansweredAt).sort();
  log(
    `no answer: ${[...unanswered].map(([why, n]) => `${why}: ${n}`).join(', ')} (of ${requests} requests; ` +
      `at ${times.join(', ')}); each retried with its Idempotency-Key`,
  );
  const found = [...unanswered]
    .filter(([why]) => why !== KEPT_ALIVE_RESET)
    .map(([why, n]) => `${n} requests got no answer: ${why}`);
  const resets = unanswered.get(KEPT_ALIVE_RESET) ?? 0;
  if (resets > requests * RESETS_BORNE)
    found.push(
      `${resets} of ${requests} requests were reset on a kept-alive connection (over ${RESETS_BORNE * 100}%)`,
    );
  return found;
}

/** What is wrong with the capped campaign's race, once its load has stopped. */
async function cappedFailures(campaignId, reached) {
  const found = [];
  for (const [status, count] of cappedLoad.statuses)
    if (![200, 404, 503, 0].includes(status)) found.push(`capped campaign: ${count} answers ${status}`);
  if (!reached)
    found.push(`the capped campaign had not reached its cap ${CAP_WAIT_MS / 1000} s after the kills`);
  const stored = await storedImpressions(databaseUrl, campaignId);
  log(
    `capped campaign ${campaignId} (total cap ${CAP}): answers ${[...cappedLoad.statuses].map(([status, count]) => `${status}: ${count}`).join(', ')}; ` +
      `stored impressions ${JSON.stringify(stored)}`,
  );
  if (stored['counted:'] !== CAP)
    found.push(`the capped campaign has ${stored['counted:'] ?? 0} billable impressions, its cap ${CAP}`);
  return found;
}

/** What is wrong with the budgeted campaign's race, once its load has stopped. */
async function budgetFailures(campaignId, reached) {
  const found = [];
  for (const [status, count] of budgetLoad.statuses)
    if (![200, 404, 503, 0].includes(status)) found.push(`budgeted campaign: ${count} answers ${status}`);
  if (!reached)
    found.push(`the budgeted campaign had not spent its budget ${CAP_WAIT_MS / 1000} s after the kills`);
  const spend = await storedSpend(databaseUrl, campaignId);
  log(
    `budgeted campaign ${campaignId} (CPM ${BUDGET_CPM} micros, budget ${BUDGET} micros): answers ` +
      `${[...budgetLoad.statuses].map(([status, count]) => `${status}: ${count}`).join(', ')}; ` +
      `stored impressions ${JSON.stringify(await storedImpressions(databaseUrl, campaignId))}; spend ${JSON.stringify(spend)}`,
  );
  // floor(n × CPM / 1000) in integers: n × CPM stays far below 2^53 here.
  const exact = Math.floor((spend.billable * BUDGET_CPM) / 1000);
  const price = Math.ceil(BUDGET_CPM / 1000);
  if (spend.events > BUDGET)
    found.push(`the budgeted campaign spent ${spend.events} micros, past its budget ${BUDGET}`);
  if (spend.events <= BUDGET - price)
    found.push(
      `the budgeted campaign stopped at ${spend.events} micros, more than one price (${price}) short of ${BUDGET}`,
    );
  if (spend.events !== exact)
    found.push(
      `the budgeted campaign's ${spend.billable} billable impressions cost ${spend.events} micros, not ${exact}`,
    );
  for (const place of ['prices', 'counter', 'rollups'])
    if (spend[place] !== spend.events)
      found.push(
        `the budgeted campaign's spend in its ${place} is ${spend[place]} micros, its events' ${spend.events}`,
      );
  if (spend.billed !== spend.billable)
    found.push(
      `the budgeted campaign's price counted ${spend.billed} impressions, its events ${spend.billable}`,
    );
  return found;
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
  const cappedId = await racedCampaign(apiKey, 'Capped', { caps: { impressionsTotal: CAP } });
  cappedLoad = trackingLoad({
    base: cluster.url,
    apiKey,
    pairs: [{ campaignId: cappedId, placement: 'header_banner' }],
    clients: CAPPED_CLIENTS,
    prefix: 'cluster-capped',
    refusalPauseMs: 100,
  });
  const budgetedId = await racedCampaign(apiKey, 'Budgeted', {}, (id) =>
    priceWithBudget(databaseUrl, id, BUDGET_CPM, BUDGET),
  );
  budgetLoad = trackingLoad({
    base: cluster.url,
    apiKey,
    pairs: [{ campaignId: budgetedId, placement: 'header_banner' }],
    clients: CAPPED_CLIENTS,
    prefix: 'cluster-budgeted',
    refusalPauseMs: 100,
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
  const reached = await refusedWithin(cappedLoad, CAP_WAIT_MS);
  await cappedLoad.stop();
  failures.push(...(await cappedFailures(cappedId, reached)));
  const spent = await refusedWithin(budgetLoad, CAP_WAIT_MS);
  await budgetLoad.stop();
  failures.push(...(await budgetFailures(budgetedId, spent)));
  const chaosSeconds = (Date.now() - chaosStarted) / 1000;
  log(
    `load: ${load.acknowledged.size} events acknowledged, ${load.fetches} fetches, in ${chaosSeconds.toFixed(1)} s`,
  );
  log(
    `answers seen through HAProxy: ${[...load.statuses].map(([status, count]) => `${status}: ${count}`).join(', ')}`,
  );
  failures.push(...unansweredFailures([load, cappedLoad, budgetLoad]));
  for (const [status, count] of load.statuses) {
    if (status === 200 || status === 503 || status === 0) continue;
    failures.push(`${count} answers ${status}`);
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
  // Every load's events: the raced campaigns' keys start `cluster-capped-` and `cluster-budgeted-`.
  const loads = [load, cappedLoad, budgetLoad];
  const both = {
    sent: new Set(loads.flatMap((one) => [...one.sent])),
    acknowledged: new Set(loads.flatMap((one) => [...one.acknowledged])),
    retries: loads.reduce((sum, one) => sum + one.retries, 0),
  };
  const check = await checkStore(databaseUrl, 'cluster', both.acknowledged);
  for (const line of describeCheck(both, check)) log(line);
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
  // A request HAProxy ended abnormally has a termination state other than `----` (see HAProxy's
  // "Session state at disconnection"): the first letter says who ended it, the second at what stage.
  const abnormal = haproxyLines.filter((line) => / -?\d+ \d+ \S+ \S+ (?!----)[A-Za-z-]{4} /.test(line));
  log(`HAProxy's log, last 40 of ${haproxyLines.length} lines:\n${haproxyLines.slice(-40).join('\n')}`);
  log(
    `HAProxy's requests ended abnormally, ${abnormal.length} (first 60):\n${abnormal.slice(0, 60).join('\n')}`,
  );
  log(`FAILED: ${broken ? 'the broken build was not caught: ' : ''}${failures.join('; ') || 'nothing lost'}`);
  process.exit(1);
}
log(
  broken
    ? `the broken build was caught: ${lost}`
    : 'passed: 0 lost, 0 counted twice, rollups exact, no 5xx but 503 with Retry-After, suspension everywhere ' +
        `within 2 s, the capped campaign exactly at its cap of ${CAP}, the budgeted one within one price of its budget`,
);
