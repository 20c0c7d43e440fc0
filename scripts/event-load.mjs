// What the crash test and the cluster test share: starting the built server as a process, the
// partners' load (tracking with Idempotency-Keys retried with the same key until acknowledged, and
// fetches), the build that answers before committing, and the reading of the store afterwards
// (every acknowledged event stored exactly once, rollups equal to a recount of the raw events).
// The management API's client here serves the traffic simulation and the tests too.
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { patchedBuild } from './patched-build.mjs';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const PLACEMENTS = [
  'header_banner',
  'sidebar_top',
  'article_inline',
  'feed_sponsored',
  'footer_banner',
];

/**
 * The management API of a server at `url`, with `adminToken`: each call resolves with the
 * answer's `data` and throws, naming the call, on an error status.
 */
export function managementClient(url, adminToken) {
  return async (method, route, body) => {
    const answer = await fetch(`${url}/admin/v1${route}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const json = await answer.json();
    if (answer.status >= 400) throw new Error(`${method} ${route}: ${answer.status} ${json.message}`);
    return json.data;
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A copy of dist whose batcher answers every event as soon as it is queued and commits it on a
 * timer, after those answers have been written: exactly the bug the crash and cluster tests exist
 * to catch. The timer matters: the partner API writes a round's answers together at the end of the
 * round (`http/response-batch.ts`), and a SQLite commit run in that same round would block the
 * thread until it is done, so the answers would still go out after it.
 */
function answerBeforeCommitBuild(name) {
  return patchedBuild(name, [
    {
      file: 'ingest/group-commit.js',
      from: 'this.queue.push({ event, resolve, reject });',
      to: 'this.queue.push({ event, resolve: () => undefined, reject: () => undefined }); resolve();',
    },
    { file: 'ingest/group-commit.js', from: 'if (this.options.lingerMs === 0) {', to: 'if (false) {' },
  ]);
}

/**
 * The dist a test runs, once set-up has installed and built: the build itself, or when `broken`
 * (the tests' `--broken`) the copy `name` that answers events before committing them.
 */
export function buildUnderTest(name, broken) {
  ensureInstalled();
  ensureBuilt();
  return broken ? answerBeforeCommitBuild(name) : path.join(root, 'apps/server/dist');
}

/** The ports `freePort` has handed out in this process: never handed out twice. */
const handedOut = new Set();

/**
 * A port nobody listens on now, below the kernel's range for outgoing connections' own ports
 * (32768 and up on Linux). A port the kernel hands out for `listen(0)` comes from that range, so
 * between our check and a later listen an outgoing connection (to PostgreSQL, Redis, an instance)
 * could take it: HAProxy once failed to start on such a port with "Address already in use".
 */
export async function freePort() {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // Free now, but perhaps already handed out by an earlier call and not listened on yet: the
    // cluster test takes four ports before it starts anything, and HAProxy once found its port
    // taken ("Address already in use"), most likely by an instance given the same one.
    if (handedOut.has(port)) continue;
    const server = net.createServer();
    const free = await new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port found between 20000 and 32000');
}

/**
 * Starts `placard serve --json` (plus `args`, say `--demo`) from the build in `dist` with `env`
 * added to ours, and resolves with the child, a promise of its exit and its summary once it
 * listens. `onSpawn(child)` gets the child at once, for a caller that may have to stop it sooner.
 */
export async function startPlacard(dist, env, args = [], onSpawn = () => {}) {
  const child = spawn(process.execPath, [path.join(dist, 'cli/main.js'), 'serve', ...args, '--json'], {
    cwd: root,
    env: { ...process.env, PLACARD_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  onSpawn(child);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  /** Its last lines on standard output, to say why it stopped if it stops before listening. */
  const printed = [];
  const summary = await new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      printed.push(line);
      if (printed.length > PRINTED_LINES_KEPT) printed.shift();
      try {
        const parsed = JSON.parse(line);
        if (parsed.url) resolve(parsed);
      } catch {
        // not the summary
      }
    });
    // Once it has exited and its output is read to the end, so that the reason is among the lines.
    const outputRead = new Promise((resolve) => lines.once('close', resolve));
    Promise.all([exited, outputRead]).then(([code]) =>
      reject(new Error(`server exited (${code}) before listening: ${failureReason(printed)}`)),
    );
  });
  return { child, exited, summary };
}

/** How many of a starting server's last output lines are kept for its failure's message. */
const PRINTED_LINES_KEPT = 40;

/**
 * Why a server that exited before listening did, from its last output lines: `serve --json`
 * reports a failed start as one JSON document (`{"status":"error","message":…}`, over several
 * lines), its message then; otherwise the last lines as printed (a crash's stack, say).
 */
export function failureReason(lines) {
  for (let start = lines.length - 1; start >= 0; start -= 1) {
    if (!lines[start].startsWith('{')) continue;
    try {
      const parsed = JSON.parse(lines.slice(start).join('\n'));
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      // not a whole document from here
    }
  }
  const last = lines.slice(-10).join('\n').trim();
  return last === '' ? 'it printed nothing' : `its last lines:\n${last}`;
}

/** Runs `placard <args> --json` from the build in `dist` and resolves with its parsed output. */
export function placardJson(dist, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(dist, 'cli/main.js'), ...args, '--json'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output))
        : reject(new Error(`placard ${args.join(' ')} failed: ${output.trim()}`)),
    );
  });
}

/**
 * These tests are about durability, not rate limits: lift every key's limits (the defaults would
 * refuse part of the load with 429) through the command line, as an operator would, then give
 * the servers two refresh intervals to pick the change up from the store.
 */
export async function liftKeyLimits(dist, env) {
  const high = '1000000';
  for (const key of await placardJson(dist, ['keys', 'list'], env)) {
    const limits = ['--events-rate', '--events-burst', '--fetch-rate', '--fetch-burst'].flatMap((option) => [
      option,
      high,
    ]);
    await placardJson(dist, ['keys', 'limits', String(key.id), ...limits], env);
  }
  await sleep(1500);
}

/** Every (campaign, placement) the demo data serves to `apiKey`, to report events for. */
export async function servedPairs(base, apiKey) {
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

/**
 * `clients` partners' servers at once against `base`, until `stop()`: each reports impressions
 * and clicks (20:1) with a unique Idempotency-Key (`<prefix>-<client>-<n>`), retrying a failure
 * with the same key until it is acknowledged, as the contract asks of partners; with
 * `fetchEvery`, every that many operations a fetch, retried until answered 200 too. Every
 * answer's status is counted (`0` for no answer; `503 without Retry-After` apart), so that the
 * caller judges which were acceptable. A 4xx other than 429 is not retried; a client pauses
 * `refusalPauseMs` after one (a campaign past its cap answers 404 at once, and a client spinning
 * on those would only take the instances' core from the others). `stop()` waits for every event
 * sent to be acknowledged; `abandon()` does not.
 */
export function trackingLoad({ base, apiKey, pairs, clients, prefix, fetchEvery = 0, refusalPauseMs = 0 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const acknowledged = new Set();
  const sent = new Set();
  const statuses = new Map();
  /** Why requests got no answer (error codes), for the `0`s in `statuses`. */
  const noAnswer = new Map();
  /** When requests got no answer (ISO times, the first 20), to find them in HAProxy's log. */
  const unansweredAt = [];
  const load = { acknowledged, sent, statuses, noAnswer, unansweredAt, retries: 0, fetches: 0 };
  const unanswered = (error, outgoing) => {
    // A kept-alive connection the other end closed just as a request went out is reset: every
    // HTTP client retries that (the SDK does, with the same Idempotency-Key). Told apart here.
    const code = `${error.code ?? error.message} on a ${outgoing.reusedSocket ? 'kept-alive' : 'new'} connection`;
    if (unansweredAt.length < 20) unansweredAt.push(new Date().toISOString());
    noAnswer.set(code, (noAnswer.get(code) ?? 0) + 1);
    return { status: 0, label: 0 };
  };
  let stopping = false;
  let abandoned = false;

  const request = (method, pathName, body, idempotencyKey) =>
    new Promise((resolve) => {
      const headers = { authorization: `Bearer ${apiKey}` };
      if (body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['idempotency-key'] = idempotencyKey;
      }
      const outgoing = http.request(
        `${base}${pathName}`,
        { method, agent, headers, timeout: 10_000 },
        (response) => {
          response.resume();
          const status = response.statusCode;
          const label =
            status === 503 && !response.headers['retry-after'] ? '503 without Retry-After' : status;
          response.on('end', () => resolve({ status, label }));
          response.on('error', (error) => resolve(unanswered(error, outgoing)));
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
      outgoing.on('error', (error) => resolve(unanswered(error, outgoing)));
      outgoing.end(body);
    });

  /** Sends until a 200 (or a 4xx other than 429); counts every answer. */
  async function untilAnswered(send) {
    for (;;) {
      const { status, label } = await send();
      statuses.set(label, (statuses.get(label) ?? 0) + 1);
      if (status === 200) return true;
      if (abandoned) return false;
      if (status >= 400 && status < 500 && status !== 429) return false;
      load.retries++;
      await sleep(20 + Math.random() * 80);
    }
  }

  async function client(id) {
    for (let n = 0; !stopping; n++) {
      const pair = pairs[(id * 31 + n) % pairs.length];
      if (fetchEvery > 0 && n % fetchEvery === fetchEvery - 1) {
        const query = `placement=${pair.placement}&limit=10`;
        await untilAnswered(() => request('GET', `/api/v1/campaigns/fetch?${query}`));
        load.fetches++;
        continue;
      }
      const key = `${prefix}-${id}-${n}`;
      const kind = n % 21 === 20 ? 'click' : 'impression';
      sent.add(key);
      const body = JSON.stringify(pair);
      if (await untilAnswered(() => request('POST', `/api/v1/campaigns/${kind}`, body, key)))
        acknowledged.add(key);
      else await sleep(refusalPauseMs);
    }
  }

  const running = Array.from({ length: clients }, (_, id) => client(id));
  /** Stops sending new events and resolves once every one sent is acknowledged. */
  load.stop = async () => {
    stopping = true;
    await Promise.all(running);
    agent.destroy();
  };
  /** The same without waiting for acknowledgements, when the test has failed already. */
  load.abandon = () => {
    abandoned = true;
    return load.stop();
  };
  return load;
}

/** The store at `databaseUrl`, opened with the product's own connection code (from the build). */
async function openStore(databaseUrl) {
  const { connect } = await import(path.join(root, 'apps/server/dist/store/connect.js'));
  const { Store } = await import(path.join(root, 'apps/server/dist/store/store.js'));
  return new Store(connect(databaseUrl));
}

/**
 * Prices a campaign per thousand impressions (`cpm` micros) with a total spend budget (`budget`
 * micros), through the store's own update, as a price change and a budget change write them.
 */
export async function priceWithBudget(databaseUrl, campaignId, cpm, budget) {
  const store = await openStore(databaseUrl);
  try {
    const patch = {
      price: { model: 'cpm', amountMicros: cpm },
      budget: { totalMicros: budget, dailyMicros: null },
    };
    await store.updateCampaign(campaignId, patch, Date.now(), 'cluster test');
  } finally {
    await store.close();
  }
}

/**
 * A campaign's money as the store keeps it in each place: its events' costs and billable
 * impressions, its price's own count, its spend counter, and its per-minute rollups.
 */
export async function storedSpend(databaseUrl, campaignId) {
  const store = await openStore(databaseUrl);
  /** The sum of `column` over the campaign's rows of `table` (and `where`). */
  const sum = async (table, column, where = (query) => query) => {
    const row = await where(store.db.selectFrom(table).select((eb) => eb.fn.sum(column).as('n')))
      .where('campaign_id', '=', campaignId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  };
  try {
    const billable = await store.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('campaign_id', '=', campaignId)
      .where('kind', '=', 'impression')
      .where('verdict', '=', 'counted')
      .executeTakeFirst();
    return {
      events: await sum('events', 'cost_micros'),
      billable: Number(billable?.n ?? 0),
      // Through the views readers use: after a kill, what the last batches appended is not folded yet.
      prices: await sum('campaign_prices_live', 'spend_micros'),
      billed: await sum('campaign_prices_live', 'billed'),
      counter: await sum('campaign_counters', 'spend_micros', (query) => query.where('day', '=', 'total')),
      rollups: await sum('event_rollups_live', 'spend_micros'),
    };
  } finally {
    await store.close();
  }
}

/** A campaign's stored impressions by verdict and reason, as `{ 'counted:': n, 'invalid:past cap': m }`. */
export async function storedImpressions(databaseUrl, campaignId) {
  const store = await openStore(databaseUrl);
  try {
    const rows = await store.db
      .selectFrom('events')
      .select(['verdict', 'reason', (eb) => eb.fn.countAll().as('n')])
      .where('campaign_id', '=', campaignId)
      .where('kind', '=', 'impression')
      .groupBy(['verdict', 'reason'])
      .execute();
    return Object.fromEntries(rows.map((row) => [`${row.verdict}:${row.reason ?? ''}`, Number(row.n)]));
  } finally {
    await store.close();
  }
}

/**
 * Reads the store at `databaseUrl` directly, with the product's own connection code: which
 * events with keys starting `<prefix>-` are stored once (billable or invalid; a replay is stored
 * as `duplicate`), which acknowledged ones are missing or counted twice, and whether the
 * per-minute rollups equal a recount of the raw events. `failures` lists what is wrong.
 */
export async function checkStore(databaseUrl, prefix, acknowledged) {
  const store = await openStore(databaseUrl);
  const events = await store.db
    .selectFrom('events')
    .select(['idempotency_key', 'verdict'])
    .where('idempotency_key', 'like', `${prefix}-%`)
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
  const columns = [...dimensions, 'minute', 'country', 'device', 'reason'];
  // As reports read them: a killed instance leaves rows appended and not folded (SQLite).
  const rollups = await store.db
    .selectFrom('event_rollups_live')
    .select([...columns, (eb) => eb.fn.sum('count').as('n')])
    .groupBy(columns)
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
    .groupBy(columns)
    .execute();
  await store.close();
  const canonical = (rows) =>
    rows.map((row) => [...columns, 'n'].map((column) => String(row[column])).join('|')).sort();
  const rollupsMatch = JSON.stringify(canonical(rollups)) === JSON.stringify(canonical(recount));

  const unacknowledgedCounted = [...counted.keys()].filter((key) => !acknowledged.has(key)).length;
  const failures = [];
  if (lost.length > 0)
    failures.push(`${lost.length} acknowledged events lost (e.g. ${lost.slice(0, 3).join(', ')})`);
  if (doubled.length > 0) failures.push(`${doubled.length} events counted twice`);
  if (!rollupsMatch) failures.push('rollups differ from the raw events');
  if (acknowledged.size === 0) failures.push('no event was acknowledged: the test exercised nothing');
  return {
    stored: counted.size,
    duplicatesStored,
    unacknowledgedCounted,
    lost,
    doubled,
    rollupsMatch,
    rollupRows: rollups.length,
    failures,
  };
}

/** The store check's lines for the log, shared by the crash and cluster tests. */
export function describeCheck(load, check) {
  return [
    `sent ${load.sent.size} distinct events (${load.retries} retried requests); ${load.acknowledged.size} acknowledged; ` +
      `${check.stored} stored once (counted or invalid), ${check.duplicatesStored} stored as duplicates (retries of ` +
      `committed events), ${check.unacknowledgedCounted} committed but never acknowledged`,
    `lost (acknowledged, not in the store): ${check.lost.length}; counted twice: ${check.doubled.length}`,
    `rollups equal a recount of the raw events: ${check.rollupsMatch ? 'yes' : 'NO'} (${check.rollupRows} rollup rows)`,
  ];
}
