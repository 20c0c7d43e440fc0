// `npm start`: set up if needed, then serve the embedded default with the demo data set.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from './run-cli.mjs';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

ensureInstalled();
ensureBuilt();
// From the repository's root, wherever it is started from: the demo's data lives in ./data there.
runCli(['serve', '--demo'], path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'));
