// `npm run dev`: the server with the demo data, restarted whenever its sources change. TypeScript
// rebuilds `apps/server/dist` in watch mode and Node restarts the server when the build changes;
// each writes to this terminal. Ctrl-C stops both. The dashboard's browser script
// (apps/server/browser) is built once here: after changing it, run `npm run build`.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
ensureInstalled();
ensureBuilt();

const children = [
  // `tsc -b` would end in error on a type error; in watch mode it reports it and keeps watching.
  spawn(
    process.execPath,
    [
      path.join(root, 'node_modules/typescript/bin/tsc'),
      '-b',
      'apps/server',
      '--watch',
      '--preserveWatchOutput',
    ],
    { cwd: root, stdio: 'inherit' },
  ),
  spawn(
    process.execPath,
    [
      '--watch-path=apps/server/dist',
      '--watch-preserve-output',
      'apps/server/dist/cli/main.js',
      'serve',
      '--demo',
      ...process.argv.slice(2),
    ],
    { cwd: root, stdio: 'inherit' },
  ),
];
const stop = (signal) => {
  for (const child of children) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => stop(signal));
for (const child of children)
  child.on('exit', (code) => {
    stop('SIGTERM');
    process.exitCode = code ?? 0;
  });
