import { createHook } from 'node:async_hooks';

/**
 * Keeps one of Node's `process.nextTick` queue entries alive for the life of the process, so that
 * V8 never forgets their shape. Imported first by `main.ts`, before anything else runs.
 *
 * Why: Node's HTTP stack calls `process.nextTick` several times per request, and each call builds
 * its queue entry as an object literal with two symbol keys. V8 describes that object by a chain of
 * hidden classes that only live objects keep alive. Once no entry is alive, a full garbage
 * collection may drop the chain, and the next call builds a new one. `placard serve` collects
 * several times while it starts (loading modules, the store, the index). When that happens often
 * enough before `nextTick` is optimised, V8 records its property stores as megamorphic. The
 * optimised `nextTick` then calls into V8's runtime three times, about 0.7 µs per `nextTick`, or
 * 5 to 7 µs of CPU per fetch (docs/benchmarks.md, "Where a fetch's CPU time goes"). Whether a
 * process fell into it depended on when its collections ran, so about half the server processes
 * did. With one entry kept, the chain lives for good, and the stores stay monomorphic.
 *
 * The async hook that lends us an entry is enabled for one call only and removed at once.
 */
let kept: object | undefined;
const lend = createHook({
  init(_asyncId, type, _triggerAsyncId, resource) {
    if (type === 'TickObject') kept ??= resource;
  },
});
lend.enable();
process.nextTick(() => undefined);
lend.disable();

/** The entry kept alive; exported so that the reference reads as wanted, not as dead code. */
export const keptTickObject = kept;
