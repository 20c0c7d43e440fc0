// `npm test`: the whole suite, in the order that fails fastest: set-up, type-check (which also
// builds the server the end-to-end tests start), lint, format check, then every test.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const steps = [
  ['type-check (tests included)', 'npx', ['tsc', '-p', 'apps/server/tsconfig.test.json']],
  ['lint', 'npx', ['eslint', '--max-warnings=0', '.']],
  ['format', 'npx', ['prettier', '--check', '.']],
  ['tests', 'npx', ['vitest', 'run', ...process.argv.slice(2)]],
];

ensureInstalled();
ensureBuilt();
for (const [name, command, args] of steps) {
  console.log(`\n== ${name}: ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`\nnpm test: ${name} failed.`);
    process.exit(result.status ?? 1);
  }
}
