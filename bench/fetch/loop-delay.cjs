// Preloaded into a server by `caps-pauses.mjs` (`node -r`): once a second, one JSON line on
// standard error with the event loop's longest delay in that second and the process's
// `arrayBuffers` (memory outside the heap), so the pauses a request meets can be read beside
// V8's own trace.
const { monitorEventLoopDelay } = require('node:perf_hooks');

const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
setInterval(() => {
  const { arrayBuffers } = process.memoryUsage();
  const line = {
    loopDelayMaxMs: delay.max / 1e6,
    arrayBuffersMb: arrayBuffers / 2 ** 20,
  };
  process.stderr.write(`${JSON.stringify(line)}\n`);
  delay.reset();
}, 1000).unref();
