import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../apps/server/test/helpers/process.js';

const PACKAGE = path.join(ROOT, 'packages/client');

/** Runs a snippet in a fresh Node process from the repository root, as a consumer of the package would. */
function node(args: string[]): string {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout.trim();
}

const USE = `new PlacardClient({ apiKey: 'k', baseUrl: 'http://placard.test' }) instanceof PlacardClient`;

describe('the published shape of @placard/client', () => {
  it('loads as ESM and as CommonJS through its exports map, each with type declarations', () => {
    expect(
      node([
        '--input-type=module',
        '-e',
        `import { PlacardClient } from '@placard/client'; console.log(${USE});`,
      ]),
    ).toBe('true');
    expect(node(['-e', `const { PlacardClient } = require('@placard/client'); console.log(${USE});`])).toBe(
      'true',
    );
    const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')) as {
      dependencies?: object;
      exports: Record<string, Record<string, { types: string; default: string }>>;
    };
    expect(manifest.dependencies).toBeUndefined();
    for (const edition of ['import', 'require']) {
      const entry = manifest.exports['.']![edition]!;
      expect(fs.existsSync(path.join(PACKAGE, entry.types)), entry.types).toBe(true);
      expect(fs.existsSync(path.join(PACKAGE, entry.default)), entry.default).toBe(true);
    }
  });
});
