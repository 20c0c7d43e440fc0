// Builds the ESM and the CommonJS editions with their type declarations, from the same sources.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
fs.rmSync(path.join(here, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.json', 'tsconfig.cjs.json']) {
  const result = spawnSync('npx', ['tsc', '-p', path.join(here, project)], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
// The CommonJS edition sits under a package whose type is "module": mark its folder as CommonJS.
fs.writeFileSync(path.join(here, 'dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
