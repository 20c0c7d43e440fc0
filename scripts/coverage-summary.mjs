// The test coverage of each package's sources, from the per-file figures vitest writes with
// `--coverage` (`coverage/coverage-summary.json`, the json-summary reporter of vitest.config.ts):
// `npm test` prints these lines at the end of a whole run. V8 counts the test processes only: a
// server or CLI a test starts from the build is another process, so what only end-to-end tests
// reach shows as not covered.
import fs from 'node:fs';
import path from 'node:path';

const MEASURES = ['statements', 'branches', 'functions', 'lines'];
const PACKAGES = ['apps/server/src', 'packages/client/src'];

/** One line per package: its statements, branches, functions and lines covered, in per cent. */
export function coverageLines(root) {
  const file = path.join(root, 'coverage/coverage-summary.json');
  if (!fs.existsSync(file)) return [`no coverage figures (${path.relative(root, file)} is missing)`];
  const perFile = Object.entries(JSON.parse(fs.readFileSync(file, 'utf8'))).filter(
    ([name]) => name !== 'total',
  );
  return PACKAGES.map((folder) => {
    const files = perFile.filter(([name]) => name.startsWith(path.join(root, folder) + path.sep));
    const figures = MEASURES.map((measure) => {
      const covered = files.reduce((sum, [, counts]) => sum + counts[measure].covered, 0);
      const total = files.reduce((sum, [, counts]) => sum + counts[measure].total, 0);
      return `${measure} ${total === 0 ? '-' : ((100 * covered) / total).toFixed(1)}%`;
    });
    return `${folder.padEnd(20)} ${figures.join(', ')}`;
  });
}
