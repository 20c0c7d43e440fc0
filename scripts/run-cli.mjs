// Runs the built `placard` CLI as a child process for the npm scripts (`npm start`,
// `npm run placard`), passing signals on and exiting with its status.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `cwd` is where relative paths in the arguments and the configuration are resolved. */
export function runCli(args, cwd = process.cwd()) {
  const child = spawn(process.execPath, [path.join(root, 'apps/server/dist/cli/main.js'), ...args], {
    cwd,
    stdio: 'inherit',
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  // npm runs scripts through `sh -c`; a SIGTERM sent to npm alone (a process manager, `timeout`)
  // ends npm and that shell without reaching us, which would leave a server running on its own.
  // When our parent is gone, stop the child as if we had been told to.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) child.kill('SIGTERM');
  }, 1000).unref();
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
