import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { tempDir } from './helpers/engines.js';
import { ROOT } from './helpers/process.js';

/**
 * The folder READMEs' `Imports:` lines are the server's import rules (`.dependency-cruiser.cjs`),
 * run by `npm test`. Here they run on a copy of the source, unchanged and then broken on purpose:
 * a rule taken out of a README, an upward import, a type-only cycle, a folder without a README.
 */

const DEPCRUISE = path.join(ROOT, 'node_modules/.bin/depcruise');
let copy: string;

beforeEach(() => {
  copy = tempDir('placard-import-rules-');
  fs.cpSync(path.join(ROOT, 'apps/server/src'), path.join(copy, 'src'), { recursive: true });
});
afterEach(() => fs.rmSync(copy, { recursive: true, force: true }));

function cruise(): { code: number | null; output: string } {
  const result = spawnSync(
    DEPCRUISE,
    ['src', '--config', path.join(ROOT, '.dependency-cruiser.cjs'), '--output-type', 'err'],
    { cwd: copy, encoding: 'utf8', env: { ...process.env, PLACARD_IMPORT_RULES_ROOT: 'src' } },
  );
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

const write = (file: string, text: string) => fs.writeFileSync(path.join(copy, 'src', file), text);
const edit = (file: string, change: (text: string) => string) =>
  write(file, change(fs.readFileSync(path.join(copy, 'src', file), 'utf8')));

it('passes on the source as it is', () => {
  expect(cruise()).toMatchObject({ code: 0 });
});

it('fails when a README no longer allows an import the code makes', () => {
  edit('ingest/README.md', (text) => text.replace('Imports: `domain/`, `store/`.', 'Imports: `domain/`.'));
  const { code, output } = cruise();
  expect(code).not.toBe(0);
  expect(output).toMatch(/ingest-imports: src\/ingest\/group-commit\.ts → \s*src\/store\//);
});

it('fails when a source folder has no README', () => {
  fs.rmSync(path.join(copy, 'src/store/migrations/README.md'));
  const { code, output } = cruise();
  expect(code).not.toBe(0);
  expect(output).toContain('source folders without a README.md: src/store/migrations');
});

/** Sources written into the copy that break a rule, and what the rules must then say (and must not). */
interface Breach {
  title: string;
  files: Record<string, string>;
  said: (RegExp | string)[];
  unsaid?: string[];
}

const BREACHES: Breach[] = [
  {
    title: 'fails on an upward import, a type-only one too',
    files: {
      'domain/upward.ts': "import type { Store } from '../store/store.js';\nexport type Upward = Store;\n",
    },
    said: [/domain-imports: src\/domain\/upward\.ts → \s*src\/store\/store\.ts/],
  },
  {
    title: 'fails on a cycle made only of type imports',
    files: {
      'domain/cycle-a.ts': "import type { B } from './cycle-b.js';\nexport interface A { b: B }\n",
      'domain/cycle-b.ts': "import type { A } from './cycle-a.js';\nexport interface B { a: A }\n",
    },
    said: ['no-circular'],
  },
  {
    title: 'keeps jobs above services and services above the serving engine',
    files: {
      'serving/upward.ts':
        "import { requireChange } from '../services/scope.js';\nexport const upward = requireChange;\n",
      'services/upward.ts':
        "import type { Periodic } from '../jobs/periodic.js';\nexport type Upward = Periodic;\n",
    },
    said: [
      /serving-imports: src\/serving\/upward\.ts → \s*src\/services\/scope\.ts/,
      /services-imports: src\/services\/upward\.ts → \s*src\/jobs\/periodic\.ts/,
    ],
  },
  {
    title: 'keeps http/ off the store at run time: its types, and store/errors.ts, only',
    files: {
      'http/dashboard/reads-store.ts':
        "import { CAMPAIGN_SORTS } from '../../store/store.js';\nexport const sorts = CAMPAIGN_SORTS;\n",
      'http/dashboard/store-types.ts':
        "import type { Store } from '../../store/store.js';\nexport type Given = Store;\n",
    },
    said: [/http-imports-types-of-store: src\/http\/dashboard\/reads-store\.ts → \s*src\/store\/store\.ts/],
    unsaid: ['store-types.ts', 'src/http/errors.ts'],
  },
];

for (const { title, files, said, unsaid = [] } of BREACHES) {
  it(title, () => {
    for (const [file, text] of Object.entries(files)) write(file, text);
    const { code, output } = cruise();
    expect(code).not.toBe(0);
    for (const expected of said) expect(output).toMatch(expected);
    for (const text of unsaid) expect(output).not.toContain(text);
  });
}
