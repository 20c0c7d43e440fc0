// `npm run cluster`: the reference cluster on one machine. HAProxy on 127.0.0.1:8080 (CLUSTER_PORT)
// in front of three instances of the built server (ports 8081 to 8083) sharing one PostgreSQL
// database (placard_cluster, created when missing; a database PLACARD_DATABASE_URL names must
// exist) and Redis, with the demo data. It prints the address, the admin token (first start) and
// the demo key; an instance that exits is started again; Ctrl-C stops HAProxy and the instances,
// each by its process id. `--fresh` starts over on an empty placard_cluster. An instance that
// fails to start is reported with its own reason (a missing database, say), and nothing stays up.
//
// `startCluster` is what `npm run test:cluster` starts too (scripts/cluster-test.mjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep, startPlacard } from './event-load.mjs';
import { startHaproxy } from './haproxy.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const POSTGRES_ADMIN_URL =
  process.env.PLACARD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the PostgreSQL server's maintenance database (create, drop a database). */
async function postgresAdmin(sql) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates the database `name` when it does not exist (with `fresh`, drops it first); its URL. */
export async function ensureDatabase(name, fresh = false) {
  if (fresh) await postgresAdmin(`drop database if exists ${name} with (force)`);
  const { rowCount } = await postgresAdmin(`select 1 from pg_database where datname = '${name}'`);
  if (rowCount === 0) await postgresAdmin(`create database ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export const dropDatabase = (name) => postgresAdmin(`drop database if exists ${name} with (force)`);

/**
 * What the cluster adds to an instance's failed start: a missing database's reason already says to
 * create it (`placard` adds that to every command's message); the cluster creates only its own.
 */
function startHint(reason) {
  if (!/database "([^"]+)" does not exist/.test(reason)) return '';
  return '\n  Without PLACARD_DATABASE_URL the cluster creates placard_cluster itself.';
}

/** Resolves once `check()` is true, polling every 50 ms; throws `message` after `timeoutMs`. */
async function until(check, timeoutMs, message) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(message);
    await sleep(50);
  }
}

/**
 * Starts `ports.length` instances of the build in `dist` on one store and HAProxy in front of
 * them. The first instance starts alone with `--demo`: it migrates the store and seeds the demo
 * data once per store (a later start finds it seeded); the others start after it, without.
 * Options: `dist`, `port` (HAProxy's), `ports` (the instances'), `runDir` (HAProxy's files),
 * `env` (PLACARD_* settings every instance gets), `retryOn` and `logFile` (see haproxy.mjs), `onExit(instance,
 * status)` (an instance exited on its own, not through kill/stop).
 * Resolves with the cluster: `url`, `summary` (the first instance's: admin token, demo key),
 * `instances` ({ name, port, url, process }), `haproxy`, and the operations below.
 */
export async function startCluster({ dist, port, ports, runDir, env, retryOn, logFile, onExit = () => {} }) {
  const instances = ports.map((instancePort, i) => ({
    name: String.fromCharCode(97 + i),
    port: instancePort,
    url: `http://127.0.0.1:${instancePort}`,
    process: undefined,
    /** Set while this script stops or kills it, so that its exit is expected. */
    stopping: false,
  }));
  let haproxy;
  let stopped = false;
  /** Every instance process started and not yet gone, starting ones included. */
  const children = new Set();

  async function launch(instance, args = []) {
    if (stopped) throw new Error('the cluster is stopped');
    instance.stopping = false;
    instance.process = await startPlacard(
      dist,
      // HAProxy runs on this machine and adds X-Forwarded-For (see haproxy.mjs): trust it.
      { PLACARD_TRUSTED_PROXIES: '127.0.0.1', ...env, PLACARD_PORT: String(instance.port) },
      args,
      (child) => {
        children.add(child);
        child.once('exit', () => children.delete(child));
      },
    ).catch((error) => {
      throw new Error(`instance ${instance.name}: ${error.message}${startHint(error.message)}`);
    });
    const started = instance.process;
    started.exited.then((status) => {
      if (!stopped && !instance.stopping && instance.process === started) onExit(instance, status);
    });
    return started.summary;
  }

  const cluster = {
    url: `http://127.0.0.1:${port}`,
    instances,
    summary: undefined,
    get haproxy() {
      return haproxy;
    },
    /** Sends `signal` to an instance and resolves with its exit status once it is gone. */
    async kill(instance, signal) {
      instance.stopping = true;
      instance.process.child.kill(signal);
      return instance.process.exited;
    },
    /** Starts an instance again and resolves once it answers /readyz 200 itself. */
    async restart(instance) {
      await launch(instance);
      await until(
        async () => (await fetch(`${instance.url}/readyz`)).status === 200,
        30_000,
        `instance ${instance.name} never became ready`,
      );
    },
    /** Resolves once HAProxy's health checks see every instance in `names` up. */
    async waitUp(names = instances.map((instance) => instance.name), timeoutMs = 15_000) {
      await until(
        async () => {
          const states = await haproxy.states();
          return names.every((name) => states[name] === 'UP');
        },
        timeoutMs,
        `HAProxy does not see ${names.join(', ')} up`,
      );
    },
    /**
     * Stops HAProxy and every instance, starting ones included (SIGTERM by process id, SIGKILL
     * after 15 s); no instance starts after.
     */
    async stop() {
      stopped = true;
      const running = [...children, haproxy?.child].filter(
        (child) => child && child.exitCode === null && child.signalCode === null,
      );
      const gone = running.map(
        (child) =>
          new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve))),
      );
      for (const child of running) child.kill('SIGTERM');
      const force = setTimeout(() => {
        for (const child of running) child.kill('SIGKILL');
      }, 15_000);
      await Promise.all(gone);
      clearTimeout(force);
    },
  };

  try {
    cluster.summary = await launch(instances[0], ['--demo']);
    await Promise.all(instances.slice(1).map((instance) => launch(instance)));
    haproxy = await startHaproxy({ port, servers: instances, dir: runDir, retryOn, logFile });
    await cluster.waitUp();
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** The banner `npm run cluster` prints once everything is up. */
function banner(cluster, databaseUrl, redisUrl) {
  const { adminToken, demoApiKey } = cluster.summary;
  // The server shows a demo key only when this database accepts it (the data directory's key file
  // may hold another database's): without one, the curl line keeps a place for the key to create.
  const auth = `-H "Authorization: Bearer ${demoApiKey ?? 'plc_…'}"`;
  return [
    '',
    `Placard cluster: HAProxy at ${cluster.url} in front of ${cluster.instances.length} instances`,
    ...cluster.instances.map(
      (instance) => `  instance ${instance.name}  ${instance.url}  (pid ${instance.process.child.pid})`,
    ),
    `  HAProxy     ${cluster.url}  (pid ${cluster.haproxy.child.pid})`,
    `Store: ${databaseUrl}; rate limits in Redis at ${redisUrl}`,
    '',
    ...(adminToken
      ? [`Admin token for ${cluster.url}/admin/v1 (shown once; store it now):`, `  ${adminToken}`, '']
      : []),
    demoApiKey
      ? `Demo API key (partner "Demo Publisher"): ${demoApiKey}`
      : 'No demo key to show: the key file is gone, or holds a key this database refuses (another database ' +
        "was seeded with this data directory since). Create one with 'npm run -s placard -- keys create " +
        '--partner "Demo Publisher"\' (PLACARD_DATABASE_URL as above), or start over: npm run cluster -- --fresh',
    '',
    'Try it:',
    `  curl -s ${auth} "${cluster.url}/api/v1/campaigns/fetch?placement=header_banner&location=US&device=mobile&limit=3"`,
    '',
    'An instance that exits is started again. Ctrl-C stops HAProxy and the instances.',
    '',
  ].join('\n');
}

async function main() {
  const { ensureBuilt, ensureHaproxy, ensureInstalled } = await import('./setup.mjs');
  ensureInstalled();
  ensureBuilt();
  ensureHaproxy();
  const fresh = process.argv.includes('--fresh');
  // A database the operator names is theirs: used as it is, never created or dropped here.
  if (fresh && process.env.PLACARD_DATABASE_URL) {
    console.error(
      'cluster: --fresh starts over on placard_cluster only; to start over on the database ' +
        'PLACARD_DATABASE_URL names, drop and create it yourself, then start without --fresh.',
    );
    process.exit(1);
  }
  const port = Number(process.env.CLUSTER_PORT ?? 8080);
  const dataDir = process.env.CLUSTER_DATA_DIR ?? path.join(root, 'data', 'cluster');
  if (fresh) fs.rmSync(dataDir, { recursive: true, force: true });
  const databaseUrl = process.env.PLACARD_DATABASE_URL ?? (await ensureDatabase('placard_cluster', fresh));
  const redisUrl = process.env.PLACARD_REDIS_URL ?? 'redis://127.0.0.1:6379';
  let cluster;
  let starting;
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    console.log('cluster: stopping HAProxy and the instances…');
    // Stopped while starting: once started (or failed, having stopped what it started), stop.
    await (cluster ?? (await starting?.catch(() => undefined)))?.stop();
    process.exit(code);
  };
  // Ctrl-C reaches every process of the terminal's group; each instance drains on its own. What
  // matters is that this script then stops everything it started, whatever signal it got, and
  // also when its parent (npm) goes away without passing a signal on (see run-cli.mjs).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop(0));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop(0);
  }, 1000).unref();

  starting = startCluster({
    dist: path.join(root, 'apps/server/dist'),
    port,
    ports: [port + 1, port + 2, port + 3],
    runDir: path.join(dataDir, 'haproxy'),
    env: {
      PLACARD_HOST: '127.0.0.1',
      PLACARD_DATA_DIR: dataDir,
      PLACARD_DATABASE_URL: databaseUrl,
      PLACARD_REDIS_URL: redisUrl,
      PLACARD_REDIS_KEY_PREFIX: process.env.PLACARD_REDIS_KEY_PREFIX ?? 'placard-cluster:',
      PLACARD_PUBLIC_URL: process.env.PLACARD_PUBLIC_URL ?? `http://127.0.0.1:${port}`,
    },
    onExit: (instance, status) => {
      if (!cluster) return; // startCluster fails and stops the rest
      console.log(`cluster: instance ${instance.name} exited (${status}); starting it again`);
      cluster.restart(instance).then(
        () => console.log(`cluster: instance ${instance.name} is back (pid ${instance.process.child.pid})`),
        (error) => console.error(`cluster: instance ${instance.name} did not come back: ${error.message}`),
      );
    },
  });
  cluster = await starting.catch((error) => {
    console.error(`cluster: ${error.message}`);
    process.exit(1);
  });
  if (stopping) return;
  // Whatever HAProxy ends of, the cluster has no address any more: stop the rest.
  cluster.haproxy.exited.then((status) => {
    if (!stopping) {
      console.error(`cluster: HAProxy exited (${status})`);
      stop(1);
    }
  });
  console.log(banner(cluster, databaseUrl, redisUrl));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
