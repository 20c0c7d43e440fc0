// Bundles the dashboard's browser scripts (htmx, uPlot and our own code) with esbuild into
// apps/server/dist/public, where the server serves them from, and prints what each page that
// loads scripts sends, gzipped. A page's JavaScript must stay within 60 KB gzipped (D14): past
// that the build fails, so a heavier chart library or a forgotten import cannot land unnoticed.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
const server = path.resolve(here, '..');
const out = path.join(server, 'dist', 'public');
const BUDGET = 60 * 1024;

await esbuild.build({
  entryPoints: [path.join(here, 'live-figures.ts'), path.join(here, 'live-figures.css')],
  outdir: out,
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome110', 'firefox115', 'safari16'],
  legalComments: 'none',
  logLevel: 'warning',
});

/** The scripts each page sends: the reports pages their live figures, a new key its copy button. */
const PAGES = {
  'reports (/reports)': [path.join(out, 'live-figures.js')],
  'a new key or link (/keys, /users)': [path.join(server, 'public', 'copy.js')],
};
const gzipped = (file) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length;
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
let over = false;
console.log('browser scripts: JavaScript per page, gzipped (budget 60 KB)');
for (const [page, files] of Object.entries(PAGES)) {
  const size = files.reduce((total, file) => total + gzipped(file), 0);
  const raw = files.reduce((total, file) => total + fs.statSync(file).size, 0);
  over ||= size > BUDGET;
  console.log(`  ${page.padEnd(36)} ${kb(size).padStart(9)} gzipped (${kb(raw)} as sent uncompressed)`);
}
if (over) {
  console.error('browser scripts: a page is over its 60 KB budget');
  process.exit(1);
}
