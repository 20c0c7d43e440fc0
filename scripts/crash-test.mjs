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
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { patchedBuild } from './patched-build.mjs';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const broken = process.argv.includes('--broken');
const KILLS = Math.max(10, Number(process.env.CRASH_KILLS ?? 12));
const CLIENTS = Number(process.env.CRASH_CLIENTS ?? 64);
const PLACEMENTS = ['header_banner', 'sidebar_top', 'article_inline', 'feed_sponsored', 'footer_banner'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (message) => console.log(`crash-test: ${message}`);

ensureInstalled();
ensureBuilt();

/**
 * The build under test. For --broken, a copy of dist whose batcher answers every event as soon as it
 * is queued and commits it on a timer, after those answers have been written: exactly the bug this
 * test exists to catch. The timer matters: the partner API writes a round's answers together at
 * the end of the round (`http/response-batch.ts`), and a SQLite commit run in that same round would
 * block the thread until it is done, so the answers would still go out after it.
 */
function buildUnderTest() {
  if (!broken) return path.join(root, 'apps/server/dist');
  return patchedBuild('crash-broken', [
    {
      file: 'ingest/group-commit.js',
      from: 'this.queue.push({ event, resolve, reject });',
      to: 'this.queue.push({ event, resolve: () => undefined, reject: () => undefined }); resolve();',
    },
    { file: 'ingest/group-commit.js', from: 'if (this.options.lingerMs === 0) {', to: 'if (false) {' },
  ]);
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const dist = buildUnderTest();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-crash-'));
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
let server;

/** Starts `placard serve --demo --json` and resolves with its summary once it listens. */
async function start() {
  const child = spawn(process.execPath, [path.join(dist, 'cli/main.js'), 'serve', '--demo', '--json'], {
    cwd: root,
    env: { ...process.env, PLACARD_DATA_DIR: dataDir, PLACARD_PORT: String(port), PLACARD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const summary = await new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const parsed = JSON.parse(line);
        if (parsed.url) resolve(parsed);
      } catch {
        // not the summary
      }
    });
    exited.then((code) => reject(new Error(`server exited (${code}) before listening`)));
  });
  return { child, exited, summary };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });

function post(pathName, apiKey, body, idempotencyKey) {
  return new Promise((resolve) => {
    const request = http.request(
      `${base}${pathName}`,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        timeout: 10_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
        response.on('error', () => resolve(0));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

async function setDemoKeyLimits() {
  const cli = (args) =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(dist, 'cli/main.js'), ...args, '--json'], {
        cwd: root,
        env: { ...process.env, PLACARD_DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.on('exit', (code) =>
        code === 0 ? resolve(JSON.parse(output)) : reject(new Error(`placard ${args[0]} failed`)),
      );
    });
  const keys = await cli(['keys', 'list']);
  const high = '1000000';
  for (const key of keys) {
    await cli(['keys', 'limits', String(key.id), '--events-rate', high, '--events-burst', high]);
  }
  // The server picks the change up from the store within two refresh intervals.
  await sleep(1500);
}

async function servedPairs(apiKey) {
  const pairs = [];
  for (const placement of PLACEMENTS) {
    const response = await fetch(`${base}/api/v1/campaigns/fetch?placement=${placement}&limit=100`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    const body = await response.json();
    for (const campaign of body.data ?? []) pairs.push({ campaignId: campaign.id, placement });
  }
  if (pairs.length === 0) throw new Error('the demo data serves no campaigns');
  return pairs;
}

server = await start();
const apiKey = server.summary.demoApiKey;
// This test is about durability, not rate limits: lift the demo key's limits (D7 defaults would
// refuse part of this load with 429) through the command line, as an operator would.
await setDemoKeyLimits();
const pairs = await servedPairs(apiKey);
log(`${broken ? 'BROKEN build (answers before commit)' : 'build'}: ${dist}`);
log(`${CLIENTS} clients, ${KILLS} SIGKILLs, store ${path.join(dataDir, 'placard.db')}`);

/** Keys answered 200, and how many requests were retried. */
const acknowledged = new Set();
const sent = new Set();
let retries = 0;
let stopping = false;

async function client(id) {
  for (let n = 0; !stopping; n++) {
    const key = `crash-${id}-${n}`;
    const kind = n % 21 === 20 ? 'click' : 'impression';
    const pair = pairs[(id * 31 + n) % pairs.length];
    const body = JSON.stringify(pair);
    sent.add(key);
    // Retry with the same key until it is acknowledged, as the contract asks of partners.
    for (let attempt = 0; ; attempt++) {
      const status = await post(`/api/v1/campaigns/${kind}`, apiKey, body, key);
      if (status === 200) {
        acknowledged.add(key);
        break;
      }
      if (status !== 0 && status !== 503 && status !== 429)
        throw new Error(`unexpected status ${status} for ${key}`);
      retries++;
      await sleep(20 + Math.random() * 80);
    }
  }
}

const clients = Array.from({ length: CLIENTS }, (_, id) => client(id));

for (let kill = 1; kill <= KILLS; kill++) {
  await sleep(300 + Math.random() * 1200);
  server.child.kill('SIGKILL');
  await server.exited;
  const before = acknowledged.size;
  server = await start();
  log(`kill ${kill}/${KILLS}: restarted; ${before} events acknowledged so far`);
}
await sleep(500);
stopping = true;
await Promise.all(clients);
server.child.kill('SIGTERM');
const finalExit = await server.exited;
agent.destroy();

// Read the store directly, with the product's own connection code.
const { connect } = await import(path.join(root, 'apps/server/dist/store/connect.js'));
const { Store } = await import(path.join(root, 'apps/server/dist/store/store.js'));
const store = new Store(connect(`sqlite:${path.join(dataDir, 'placard.db')}`));
const events = await store.db
  .selectFrom('events')
  .select(['idempotency_key', 'verdict'])
  .where('idempotency_key', 'like', 'crash-%')
  .execute();
const counted = new Map();
let duplicatesStored = 0;
for (const event of events) {
  // The first storing of an event: billable, or invalid (D15: say a click whose impression the
  // killed instance remembered); only a replay is a duplicate.
  if (event.verdict !== 'duplicate')
    counted.set(event.idempotency_key, (counted.get(event.idempotency_key) ?? 0) + 1);
  else duplicatesStored++;
}
const lost = [...acknowledged].filter((key) => !counted.has(key));
const doubled = [...counted].filter(([, count]) => count > 1).map(([key]) => key);

const dimensions = ['campaign_id', 'partner_id', 'placement_id', 'kind', 'verdict'];
const rollups = await store.db
  .selectFrom('event_rollups')
  .select([...dimensions, 'minute', 'country', 'device', 'reason', (eb) => eb.fn.sum('count').as('n')])
  .groupBy([...dimensions, 'minute', 'country', 'device', 'reason'])
  .execute();
const recount = await store.db
  .selectFrom('events')
  .select([
    ...dimensions,
    (eb) => eb(eb.ref('occurred_at'), '-', eb(eb.ref('occurred_at'), '%', 60_000)).as('minute'),
    (eb) => eb.fn.coalesce('country', eb.val('')).as('country'),
    (eb) => eb.fn.coalesce('device', eb.val('')).as('device'),
    (eb) => eb.fn.coalesce('reason', eb.val('')).as('reason'),
    (eb) => eb.fn.countAll().as('n'),
  ])
  .groupBy([...dimensions, 'minute', 'country', 'device', 'reason'])
  .execute();
await store.close();
const canonical = (rows) =>
  rows
    .map((row) =>
      [...dimensions, 'minute', 'country', 'device', 'reason', 'n']
        .map((column) => String(row[column]))
        .join('|'),
    )
    .sort();
const rollupsMatch = JSON.stringify(canonical(rollups)) === JSON.stringify(canonical(recount));

const unacknowledgedCounted = [...counted.keys()].filter((key) => !acknowledged.has(key)).length;
log(
  `sent ${sent.size} distinct events (${retries} retried requests); ${acknowledged.size} acknowledged; ` +
    `${[...counted.keys()].length} stored once (counted or invalid), ${duplicatesStored} stored as duplicates (retries of ` +
    `committed events), ${unacknowledgedCounted} committed but never acknowledged`,
);
log(`lost (acknowledged, not in the store): ${lost.length}; counted twice: ${doubled.length}`);
log(
  `rollups equal a recount of the raw events: ${rollupsMatch ? 'yes' : 'NO'} (${rollups.length} rollup rows)`,
);
log(`final SIGTERM exit: ${finalExit}`);

const failures = [];
if (lost.length > 0)
  failures.push(`${lost.length} acknowledged events lost (e.g. ${lost.slice(0, 3).join(', ')})`);
if (doubled.length > 0) failures.push(`${doubled.length} events counted twice`);
if (!rollupsMatch) failures.push('rollups differ from the raw events');
if (finalExit !== 0) failures.push(`graceful shutdown exited ${finalExit}`);
if (acknowledged.size === 0) failures.push('no event was acknowledged: the test exercised nothing');
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
