import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/process.js';

/**
 * What differs between SQLite and PostgreSQL is one set of engine traits and one event ledger,
 * chosen when the store is opened (`store/engine-traits.ts`, `store/context.ts`). No other module
 * asks which engine it runs on: a branch on the engine's name elsewhere is a difference the traits
 * do not name, which the next reader of the traits will not know of. The source is read for such
 * a question, outside the few places where the engine's name is the point.
 */

const SOURCE = path.join(ROOT, 'apps/server/src');

/** Where the engine's name may be asked, and why. */
const MAY_ASK = new Map<string, string>([
  ['store/connect.ts', 'tells the engine from the URL and opens its driver'],
  [
    'store/migrations/',
    'each migration writes each engine its own schema, and is never changed once released',
  ],
  ['config.ts', 'checks the spelling of PLACARD_DATABASE_URL'],
]);

/** The ways a module could ask which engine it runs on. */
const ASKING: ReadonlyArray<[string, RegExp]> = [
  ['compares an engine', /\bengine\s*[!=]==?|[!=]==?\s*\w*\.?engine\b/],
  [
    'compares with an engine name',
    /[!=]==?\s*['"`](sqlite|postgres)['"`]|['"`](sqlite|postgres)['"`]\s*[!=]==?/,
  ],
  ['switches on an engine name', /\bcase\s+['"`](sqlite|postgres)['"`]/],
  ['names a question about the engine', /\b(is|on|if|when)(Postgres|PostgreSQL|Sqlite|SQLite|Pg)\b/],
  ['reads the URL for the engine', /startsWith\(\s*['"`](sqlite|postgres)/],
  ['asks Kysely for its dialect', /\b(Postgres|Sqlite)(Dialect|Adapter)\b|\.getExecutor\(\)\.adapter\b/],
];

/** Each line of `text` that asks which engine it runs on, as `file:line: what`. */
export function engineQuestions(file: string, text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, index) =>
      ASKING.filter(([, pattern]) => pattern.test(line)).map(
        ([what]) => `${file}:${index + 1}: ${what}: ${line.trim()}`,
      ),
    );
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

const mayAsk = (file: string) => [...MAY_ASK.keys()].some((allowed) => file.startsWith(allowed));

describe('engine branches', () => {
  it('are asked nowhere in the server outside the store’s engine modules', () => {
    const found = sourceFiles(SOURCE)
      .map((full) => path.relative(SOURCE, full).split(path.sep).join('/'))
      .filter((file) => !mayAsk(file))
      .flatMap((file) => engineQuestions(file, fs.readFileSync(path.join(SOURCE, file), 'utf8')));
    expect(found).toEqual([]);
  });

  it('are found in each of the ways a module could ask', () => {
    const asked = [
      "concurrency: store.engine === 'postgres' ? 4 : 1,",
      "if (options.lock && ctx.engine !== 'sqlite') query = query.forUpdate();",
      "if ('postgres' === kind) await lock();",
      "case 'sqlite':",
      'if (isPostgres(ctx)) return;',
      "if (!config.databaseUrl.startsWith('sqlite:')) return;",
      'if (adapter instanceof PostgresAdapter) return;',
      'const kind = db.getExecutor().adapter;',
    ];
    for (const line of asked) expect(engineQuestions('x.ts', line), line).not.toEqual([]);
    // Every way of asking is one of these lines' (none of the patterns is dead).
    const ways = new Set(
      asked.flatMap((line) => engineQuestions('x.ts', line)).map((found) => found.split(': ')[1]),
    );
    expect([...ways].sort()).toEqual(ASKING.map(([what]) => what).sort());
  });

  it('leave alone what only mentions an engine', () => {
    const mentions = [
      '// PostgreSQL commits wait on the network and the server’s fsync.',
      'logger.info({ store: store.engine }, "placard listening");',
      'concurrency: store.traits.commitConcurrency,',
      'if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return true;',
    ];
    for (const line of mentions) expect(engineQuestions('x.ts', line), line).toEqual([]);
  });

  it('are allowed only where the name is the point, each still there', () => {
    for (const allowed of MAY_ASK.keys())
      expect(fs.existsSync(path.join(SOURCE, allowed)), allowed).toBe(true);
  });
});
