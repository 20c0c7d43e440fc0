// Preloaded (`--require`) into a Node process started with --expose-gc and --allow-natives-syntax.
// On SIGUSR2 it runs full garbage collections with no `process.nextTick` entry pending, calling
// `process.nextTick` between them, then prints V8's description of `process.nextTick`, with the
// state of each of its property stores, and exits. See apps/server/src/cli/tick-shape.ts.
'use strict';

const noop = () => {};
const tick = () => new Promise((resolve) => process.nextTick(resolve));
const turn = () => new Promise((resolve) => setImmediate(resolve));

process.on('SIGUSR2', async () => {
  for (let round = 0; round < 8; round++) {
    globalThis.gc();
    await tick();
    for (let i = 0; i < 3; i++) process.nextTick(noop);
    await turn();
  }
  // V8 prints through C's stdio, which gives up on a non-blocking pipe once it is full.
  process.stdout._handle?.setBlocking?.(true);
  // eval, so that this file still parses where natives syntax is not allowed.
  eval('%DebugPrint(process.nextTick)');
  process.exit(0);
});
