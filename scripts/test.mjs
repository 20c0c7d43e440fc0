// `npm test`: the whole suite, in the order that fails fastest: set-up (which also builds the
// server the end-to-end tests start), type-check, lint, the import rules of the folder READMEs,
// format check, the OpenAPI document's lint (its freshness is a test), every test (with V8's
// coverage, summed per package at the end: scripts/coverage-summary.mjs), the server's
// end-to-end tests again under Node 24 (`npm run test:node24`), then the crash
// test (`npm run test:crash`) and the cluster test (`npm run test:cluster`), each with its proof
// that it catches a build that answers before committing.
//
// `npm test -- <vitest filters and options>` is the inner loop: set-up, then only the matching
// tests, no other step. A filter that names a file or folder from where npm was run (npm's
// INIT_CWD, say apps/server) is taken from there.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { coverageLines } from './coverage-summary.mjs';
import { ensureBuilt, ensureChromium, ensureHaproxy, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const from = process.env.INIT_CWD ?? process.cwd();
/** The arguments for vitest, a path that exists from where npm was run made absolute. */
const vitestArgs = process.argv
  .slice(2)
  .map((arg) =>
    !arg.startsWith('-') && fs.existsSync(path.resolve(from, arg)) ? path.resolve(from, arg) : arg,
  );
const tests = ['tests', 'npx', ['vitest', 'run', ...vitestArgs]];
/** The whole run measures coverage too (V8's counters: a few per cent of the tests' time). */
const testsWithCoverage = ['tests (with coverage)', 'npx', ['vitest', 'run', '--coverage']];
const steps = [
  ['type-check (tests included)', 'npx', ['tsc', '-p', 'apps/server/tsconfig.test.json']],
  ["type-check the dashboard's browser scripts", 'npx', ['tsc', '-p', 'apps/server/browser/tsconfig.json']],
  ['type-check the partner SDK', 'npx', ['tsc', '-p', 'packages/client/tsconfig.test.json']],
  ['type-check the example site', 'npx', ['tsc', '-p', 'examples/partner-site/tsconfig.test.json']],
  ['lint', 'npx', ['eslint', '--max-warnings=0', '.']],
  [
    'import rules (folder READMEs)',
    'npx',
    ['depcruise', 'apps/server/src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'],
  ],
  ['format', 'npx', ['prettier', '--check', '.']],
  ['API document lint', 'npx', ['redocly', 'lint', '--format=stylish', 'docs/openapi.json']],
  testsWithCoverage,
  ["the server's end-to-end tests under Node 24", process.execPath, ['scripts/node24.mjs']],
  ['crash test', process.execPath, ['scripts/crash-test.mjs']],
  [
    'crash test against a build that answers before committing',
    process.execPath,
    ['scripts/crash-test.mjs', '--broken'],
  ],
  [
    'cluster test (HAProxy, three instances killed and restarted)',
    process.execPath,
    ['scripts/cluster-test.mjs'],
  ],
  [
    'cluster test against a build that answers before committing',
    process.execPath,
    ['scripts/cluster-test.mjs', '--broken'],
  ],
];
// With filters, the matching tests alone: the static steps check the whole tree and take minutes.
if (vitestArgs.length > 0) steps.splice(0, steps.length, tests);

ensureInstalled();
ensureBuilt();
ensureChromium();
ensureHaproxy();
/** Each step's time, printed at the end, so that a slow suite shows where its time goes. */
const took = [];
const seconds = (from) => `${((Date.now() - from) / 1000).toFixed(0)} s`;
const started = Date.now();
for (const [name, command, args] of steps) {
  console.log(`\n== ${name}: ${command} ${args.join(' ')}`);
  const from = Date.now();
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  took.push(`${seconds(from).padStart(6)}  ${name}`);
  if (result.status !== 0) {
    console.error(`\nnpm test: ${name} failed.`);
    process.exit(result.status ?? 1);
  }
}
console.log(
  `\nnpm test: every step passed in ${seconds(started)} (set-up before it not counted):\n${took.join('\n')}`,
);
if (vitestArgs.length === 0)
  console.log(`\nCoverage of the tests' own processes:\n${coverageLines(root).join('\n')}`);
