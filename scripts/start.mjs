// `npm start`: set up if needed, then serve the embedded default with the demo data set.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
ensureInstalled();
ensureBuilt();
const child = spawn(process.execPath, [path.join(root, 'apps/server/dist/cli/main.js'), 'serve', '--demo'], {
  cwd: root,
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
// npm runs this script through `sh -c`; a SIGTERM sent to npm alone (a process manager, `timeout`)
// ends npm and that shell without reaching us, which would leave the server running on its own.
// When our parent is gone, stop the server as if we had been told to.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) child.kill('SIGTERM');
}, 1000).unref();
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
