import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type TestDatabase } from './helpers/engines.js';
import { eventually } from './helpers/eventually.js';
import { cliJson, ensureBuilt, startServerProcess, type ServerProcess } from './helpers/process.js';
import { Teardown } from './helpers/teardown.js';

/**
 * D19's delivery promise while instances die (docs/webhooks.md, "none lost, in order, at least
 * once"): API keys are created through two instances on one PostgreSQL database, a few at a time,
 * while each instance in turn is SIGKILLed (the first while it holds the endpoint's claim with a
 * delivery in flight, when it can) and replaced. Afterwards every key that exists, whether its
 * creation was answered or the answer was lost with the instance, has reached the receiver as a
 * verified `key.created`; no key has two webhook-ids (a repeat is only ever a retry of the same
 * message), and there are as many webhook-ids as keys.
 */

/** Key creations answered 201, and after how many of them each original instance is killed. */
const CHANGES = 120;
const KILL_A_AFTER = 40;
const KILL_B_AFTER = 80;
/** Creations under way at once, spread over the live instances. */
const CONCURRENCY = 4;
/**
 * A change starts at most every PACE_MS while two instances serve, every ALONE_PACE_MS while one
 * does (its partner's replacement starting), and the last LAST_CHANGES_AFTER_KILLS wait for both
 * kills. A kill waits up to PREFER_WITHIN_CHANGES changes for the moment it prefers (below).
 */
const PACE_MS = 125;
const ALONE_PACE_MS = 500;
const LAST_CHANGES_AFTER_KILLS = 8;
const PREFER_WITHIN_CHANGES = 20;
/** How many times one change is tried (on the instances in turn) before the test gives up. */
const ATTEMPTS_PER_CHANGE = 20;
/**
 * How long the deliveries may take once the load is over: a killed instance's claim lapses within
 * 30 s (CLAIM_MS in jobs/webhook-delivery-job.ts), then the outbox drains at a dozen a second.
 */
const DELIVERY_WINDOW_MS = 90_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Delivery {
  webhookId: string;
  type: string;
  keyId: number | undefined;
}

interface Receiver {
  url: string;
  /** Every verified delivery, repeats included, in the order they arrived. */
  deliveries: Delivery[];
  /** Deliveries whose signature did not verify (answered 400): each is a failure of the test. */
  refused: string[];
  /** Requests received and not yet answered (or abandoned by their sender). */
  inFlight(): number;
  /** Verifies from now on with the endpoint's secret. */
  trust(secret: string): void;
  close(): Promise<void>;
}

/**
 * A receiver on loopback: it verifies each delivery with `standardwebhooks`, records it as soon
 * as it is verified (as a receiver acting on it would), and answers 200 after 0–150 ms, so that
 * deliveries are in flight when an instance is killed.
 */
async function startReceiver(): Promise<Receiver> {
  let webhook: Webhook | undefined;
  let inFlight = 0;
  const deliveries: Delivery[] = [];
  const refused: string[] = [];
  const server = http.createServer((request, response) => {
    inFlight++;
    response.once('close', () => inFlight--);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const webhookId = String(request.headers['webhook-id']);
      let event: { type: string; data: { keyId?: number } };
      try {
        if (webhook === undefined) throw new Error('a delivery before the endpoint was registered');
        event = webhook.verify(body, request.headers as Record<string, string>) as typeof event;
      } catch (error) {
        refused.push(`${webhookId}: ${(error as Error).message}: ${body.slice(0, 200)}`);
        response.writeHead(400).end('signature not valid');
        return;
      }
      deliveries.push({ webhookId, type: event.type, keyId: event.data.keyId });
      setTimeout(() => response.writeHead(200).end(), Math.random() * 150);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/placard`,
    deliveries,
    refused,
    inFlight: () => inFlight,
    trust: (secret) => {
      webhook = new Webhook(secret);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Stops a server process gracefully, or kills it if it has not exited within 30 s. */
async function stopProcess(server: ServerProcess): Promise<void> {
  const stopped = server.stop();
  const timer = setTimeout(() => void server.stop('SIGKILL'), 30_000);
  await stopped;
  clearTimeout(timer);
}

/** Why a request got no answer: fetch's message with its cause (ECONNRESET, ECONNREFUSED, …). */
function whyFailed(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return `${(error as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`;
}

describe('webhooks while instances are SIGKILLed', () => {
  const teardown = new Teardown();
  let database: TestDatabase;
  let env: Record<string, string>;
  let receiver: Receiver;
  let endpoint: { id: number; secret: string };
  /** A connection of the test's own, to read the endpoint's claim and the outbox. */
  let db: pg.Client;

  beforeAll(async () => {
    ensureBuilt();
    database = await teardown.track(createDatabase('postgres'), (made) => made.drop());
    env = { PLACARD_DATABASE_URL: database.url, PLACARD_WEBHOOKS_ALLOW_LOOPBACK: 'true' };
    cliJson(['migrate'], env);
    receiver = await teardown.track(startReceiver(), (made) => made.close());
    endpoint = cliJson<{ id: number; secret: string }>(
      ['webhooks', 'create', receiver.url, '--events', 'key.created', '--account', 'operator'],
      env,
    );
    receiver.trust(endpoint.secret);
    const client = new pg.Client({ connectionString: database.url });
    db = await teardown.track(
      client.connect().then(() => client),
      (made) => made.end(),
    );
  });
  afterAll(() => teardown.run());

  /** The live claim on the endpoint: the pid of the instance holding it, or null. */
  async function claimHolder(): Promise<number | null> {
    const { rows } = await db.query<{ claimed_by: string | null; claimed_until: string }>(
      'select claimed_by, claimed_until from webhook_endpoints where id = $1',
      [endpoint.id],
    );
    const row = rows[0];
    if (!row?.claimed_by || Number(row.claimed_until) <= Date.now()) return null;
    // The delivery job names itself `<pid>-<random hex>`.
    return Number(row.claimed_by.split('-')[0]);
  }

  it('delivers every key.created at least once, one webhook-id per key, through two SIGKILLs', async () => {
    const start = () => teardown.track(startServerProcess(env), stopProcess);
    const a = await start();
    // The first start generates the admin token (stored, so every instance takes it).
    const token = a.summary.adminToken;
    expect(token, 'the first instance printed no admin token').toBeTruthy();
    const b = await start();
    const live: ServerProcess[] = [a, b];

    const call = async (server: ServerProcess, method: string, route: string, body?: unknown) => {
      const answer = await fetch(`${server.url}/admin/v1${route}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      return {
        status: answer.status,
        body: (await answer.json()) as { data: unknown; nextCursor?: string | null },
      };
    };

    const partner = await call(a, 'POST', '/partners', { name: 'Kill Test Partner' });
    expect(partner.status, JSON.stringify(partner.body)).toBe(201);
    const partnerId = (partner.body.data as { id: number }).id;

    // The load: CHANGES key creations, CONCURRENCY at a time, each on the live instances in turn and
    // retried on the next one when it gets no answer. It is paced (slower while one instance serves
    // alone) so that both kills fall inside it on a fast machine and a loaded one alike, and the
    // last few changes wait for both kills, so that no kill comes after the load.
    const answered: number[] = [];
    const unanswered: string[] = [];
    const unexpected: string[] = [];
    const requestsTo = new Map<ServerProcess, number>();
    let nextChange = 0;
    let nextStartAt = Date.now();
    let loadFailed = false;
    let killsDone = false;
    const makeChange = async (n: number) => {
      for (let attempt = 0; attempt < ATTEMPTS_PER_CHANGE; attempt++) {
        const server = live[(n + attempt) % live.length];
        requestsTo.set(server, (requestsTo.get(server) ?? 0) + 1);
        try {
          const answer = await call(server, 'POST', `/partners/${partnerId}/keys`, { label: `change-${n}` });
          if (answer.status === 201) {
            answered.push((answer.body.data as { id: number }).id);
            return;
          }
          unexpected.push(`change ${n}: ${answer.status} ${JSON.stringify(answer.body)}`);
        } catch (error) {
          // The instance was killed before it answered: the key may or may not have been created.
          unanswered.push(`change ${n} on pid ${server.child.pid}: ${whyFailed(error)}`);
        } finally {
          requestsTo.set(server, requestsTo.get(server)! - 1);
        }
        await sleep(50);
      }
      throw new Error(
        `change ${n}: no 201 in ${ATTEMPTS_PER_CHANGE} attempts: ${unexpected.slice(-3).join('; ')}`,
      );
    };
    const worker = async () => {
      while (nextChange < CHANGES) {
        const n = nextChange++;
        const at = Math.max(nextStartAt, Date.now());
        nextStartAt = at + (live.length > 1 ? PACE_MS : ALONE_PACE_MS);
        await sleep(at - Date.now());
        if (n >= CHANGES - LAST_CHANGES_AFTER_KILLS)
          await eventually(() => killsDone || loadFailed, 'both kills', 180_000);
        await makeChange(n);
      }
    };

    // The killer: each original instance SIGKILLed once, preferably while it holds the endpoint's
    // claim with a delivery in flight (so that the claim must lapse) and key creations are under way
    // on it, and replaced; one instance always serves.
    const kills: Array<{
      pid: number;
      afterChanges: number;
      creationsInFlight: number;
      whileDelivering: boolean;
      leftClaim: boolean;
    }> = [];
    const kill = async (victim: ServerProcess, latestAfter: number, lookForClaim: boolean) => {
      const pid = victim.child.pid!;
      // Best with key creations in flight on it too (their answers are lost, their keys may exist):
      // looked for over the first half of the window, then the claim alone.
      const creatingUntil = answered.length + (latestAfter - answered.length) / 2;
      let whileDelivering = false;
      while (answered.length < latestAfter && nextChange < CHANGES && !loadFailed) {
        const creating = (requestsTo.get(victim) ?? 0) > 0 || answered.length >= creatingUntil;
        if (creating && !lookForClaim) break;
        whileDelivering = creating && receiver.inFlight() > 0 && (await claimHolder()) === pid;
        if (whileDelivering) break;
        await sleep(5);
      }
      const creationsInFlight = requestsTo.get(victim) ?? 0;
      const exited = victim.stop('SIGKILL');
      live.splice(live.indexOf(victim), 1);
      await exited;
      // A dead instance cannot release its claim: if the endpoint still shows it, it must lapse.
      kills.push({
        pid,
        afterChanges: answered.length,
        creationsInFlight,
        whileDelivering,
        leftClaim: (await claimHolder()) === pid,
      });
    };
    const changesReach = (count: number) =>
      eventually(() => answered.length >= count || loadFailed, `${count} changes answered`, 180_000);
    const starts: number[] = [];
    const replace = async () => {
      const startedAt = Date.now();
      live.push(await start());
      starts.push((Date.now() - startedAt) / 1000);
    };
    const killer = async () => {
      try {
        await changesReach(KILL_A_AFTER);
        if (loadFailed) return;
        await kill(a, KILL_A_AFTER + PREFER_WITHIN_CHANGES, true);
        await replace();
        await changesReach(KILL_B_AFTER);
        if (loadFailed) return;
        // B can hold the claim only once a claim A left behind has lapsed: look for that moment
        // only when A's kill did not leave one, else only for creations in flight on B.
        const claimLeft = kills.some((k) => k.leftClaim);
        await kill(
          b,
          KILL_B_AFTER + (claimLeft ? PREFER_WITHIN_CHANGES / 2 : PREFER_WITHIN_CHANGES),
          !claimLeft,
        );
        killsDone = true;
        await replace();
      } finally {
        killsDone = true;
      }
    };

    const loadBegan = Date.now();
    const load = Promise.all(Array.from({ length: CONCURRENCY }, worker)).catch((error: unknown) => {
      loadFailed = true;
      throw error;
    });
    const outcomes = await Promise.allSettled([load, killer()]);
    for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
    const loadEnded = Date.now();

    // Every key that exists, the answered ones and any whose answer died with its instance.
    const keyIds: number[] = [];
    let cursor: string | null = null;
    do {
      const after = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await call(live[0], 'GET', `/partners/${partnerId}/keys?limit=200${after}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      keyIds.push(...(page.body.data as Array<{ id: number }>).map((key) => key.id));
      cursor = page.body.nextCursor ?? null;
    } while (cursor !== null);
    keyIds.sort((x, y) => x - y);

    const deliveredKeys = () => new Set(receiver.deliveries.map((delivery) => delivery.keyId));
    const missing = () => keyIds.filter((id) => !deliveredKeys().has(id));
    await eventually(() => missing().length === 0, 'a key.created for every key', DELIVERY_WINDOW_MS).catch(
      () => undefined,
    );
    const allReceived = Date.now();
    // Then until the outbox has recorded every delivery and nothing is in flight, so that a repeat
    // still to come cannot slip past the checks below.
    const undelivered = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            'select count(*) as n from webhook_messages where endpoint_id = $1 and delivered_at is null',
            [endpoint.id],
          )
        ).rows[0].n,
      );
    await eventually(
      async () => receiver.inFlight() === 0 && (await undelivered()) === 0,
      'the outbox recorded as delivered',
      30_000,
    ).catch(() => undefined);

    const idsByKey = new Map<number | undefined, Set<string>>();
    for (const delivery of receiver.deliveries)
      idsByKey.set(delivery.keyId, (idsByKey.get(delivery.keyId) ?? new Set()).add(delivery.webhookId));
    const webhookIds = new Set(receiver.deliveries.map((delivery) => delivery.webhookId));
    const outbox = await db.query<{ message_id: string }>(
      'select message_id from webhook_messages where endpoint_id = $1',
      [endpoint.id],
    );
    const repeats = receiver.deliveries.length - webhookIds.size;
    console.log(
      [
        `webhooks-kill: ${keyIds.length} keys, ${answered.length} answered 201`,
        `${keyIds.length - answered.length} created without an answer`,
        `${unanswered.length} requests unanswered`,
        `kills ${JSON.stringify(kills)}`,
        `replacements started in ${starts.join(' and ')} s`,
        `${receiver.deliveries.length} deliveries (${repeats} repeats)`,
        `load ${(loadEnded - loadBegan) / 1000} s`,
        `the last key received ${(allReceived - loadEnded) / 1000} s after it`,
      ].join('; '),
    );

    // Every delivery verified with the endpoint's secret, and only what the endpoint subscribed to.
    expect(receiver.refused).toEqual([]);
    expect(receiver.deliveries.filter((delivery) => delivery.type !== 'key.created')).toEqual([]);
    // The load did what it meant to: no answer but 201 or none, each answered key exists.
    expect(unexpected).toEqual([]);
    expect(answered.length).toBe(CHANGES);
    expect(answered.filter((id) => !keyIds.includes(id))).toEqual([]);
    // Every key that exists was delivered, and nothing was delivered for a key that does not.
    expect(missing(), `keys without a key.created within ${DELIVERY_WINDOW_MS / 1000} s`).toEqual([]);
    expect([...idsByKey.keys()].filter((id) => id === undefined || !keyIds.includes(id))).toEqual([]);
    // A key's deliveries all carry one webhook-id (a repeat is a retry of the same message), and
    // there is one webhook-id per key: one message each in the outbox, the ones delivered.
    expect([...idsByKey].filter(([, ids]) => ids.size !== 1).map(([id, ids]) => [id, [...ids]])).toEqual([]);
    expect(webhookIds.size).toBe(keyIds.length);
    expect(outbox.rows.map((row) => row.message_id).sort()).toEqual([...webhookIds].sort());
    expect(await undelivered()).toBe(0);
    // The test did kill both instances while changes were still being made, and at least one while
    // it held the endpoint's claim, so the deliveries above went through a claim lapsing, not only
    // through a clean hand-over.
    expect(kills.length).toBe(2);
    expect(kills.filter((k) => k.afterChanges >= CHANGES)).toEqual([]);
    expect(
      kills.some((k) => k.leftClaim),
      `no instance was killed while it held the endpoint's claim: ${JSON.stringify(kills)}`,
    ).toBe(true);
  }, 240_000);
});
