// `npm run placard -- <command>`: set up if needed, then run the `placard` CLI with the arguments.
import { runCli } from './run-cli.mjs';
import { ensureBuilt, ensureInstalled } from './setup.mjs';

ensureInstalled();
ensureBuilt();
runCli(process.argv.slice(2));
