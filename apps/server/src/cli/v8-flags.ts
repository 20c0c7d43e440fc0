import v8 from 'node:v8';

/**
 * V8 settings for the `placard` process, applied before any other module loads (main.ts imports
 * this first).
 *
 * Allocation-site pretenuring is off. V8 watches where objects are allocated and, when objects
 * from one site keep surviving young-generation collections, allocates that site's objects
 * straight into the old generation from then on. Start-up (migrations, loading the serving index)
 * makes it take that decision for sites that later only make short-lived per-request objects,
 * among them Node's own `process.nextTick` queue entries, which every HTTP request creates
 * several of. Each store into an old-generation object that points at a young one then takes the
 * write barrier's slow path. CPU profiles of the server under the fetch benchmark put
 * `process.nextTick` at about 5.5 µs of self time per request with pretenuring and 0.3 µs
 * without (docs/benchmarks.md). The decision is never revisited once taken, so it is switched off
 * for the whole process; the flag is read whenever V8 processes its allocation feedback, so setting
 * it here, before start-up allocates anything of note, is enough.
 */
v8.setFlagsFromString('--no-allocation-site-pretenuring');
