import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../../apps/server/test/helpers/process.js';

const PACKAGE = path.join(ROOT, 'packages/client');

/** Runs a snippet in a fresh Node process (from the repository root), as a consumer of the package would. */
function node(args: string[], cwd = ROOT): string {
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
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
      const entry = manifest.exports['.'][edition];
      expect(fs.existsSync(path.join(PACKAGE, entry.types)), entry.types).toBe(true);
      expect(fs.existsSync(path.join(PACKAGE, entry.default)), entry.default).toBe(true);
    }
  });

  it('installs from the tarball `npm pack` makes into an empty project, as its README says', () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'placard-sdk-install-'));
    try {
      const npm = (args: string[], cwd: string) => {
        const result = spawnSync('npm', args, { cwd, encoding: 'utf8' });
        if (result.status !== 0) throw new Error(`npm ${args.join(' ')} failed:\n${result.stderr}`);
        return result.stdout;
      };
      const packed = JSON.parse(
        npm(['pack', '-w', 'packages/client', '--pack-destination', work, '--json'], ROOT),
      ) as Array<{
        filename: string;
        files: Array<{ path: string }>;
      }>;
      const tarball = path.join(work, packed[0].filename);
      expect(packed[0].filename).toBe('placard-client-0.1.0.tgz');
      // Only the built editions and the README travel; no sources, tests or generator.
      const files = packed[0].files.map((file) => file.path);
      expect(files.filter((file) => !/^(dist\/(esm|cjs)\/|README\.md$|package\.json$)/.test(file))).toEqual(
        [],
      );
      const app = path.join(work, 'partner-app');
      fs.mkdirSync(app);
      fs.writeFileSync(
        path.join(app, 'package.json'),
        JSON.stringify({ name: 'partner-app', private: true }),
      );
      npm(['install', '--offline', '--no-audit', '--no-fund', tarball], app);
      const esm = `import { PlacardClient } from '@placard/client'; console.log(${USE});`;
      expect(node(['--input-type=module', '-e', esm], app)).toBe('true');
      expect(
        node(['-e', `const { PlacardClient } = require('@placard/client'); console.log(${USE});`], app),
      ).toBe('true');
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
