import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * A full garbage collection, for right after the serving index is rebuilt. A rebuild leaves about
 * 1.5 KB of short-lived garbage per campaign (rows, intermediate objects), and V8 keeps the heap it
 * grew into long after: measured at 100,000 campaigns, RSS was about 300 MB before and 220 MB
 * after two collections (docs/benchmarks.md). Exposing `gc` at run time uses V8's own flag; if a
 * runtime refuses it, this quietly does nothing.
 */
function loadCollector(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    const collector = vm.runInNewContext('gc') as unknown;
    return typeof collector === 'function' ? (collector as () => void) : undefined;
  } catch {
    return undefined;
  }
}

let collector: (() => void) | undefined | null = null;

/**
 * Collects now and once more a second later: the first pass frees the objects, but their pages are
 * swept concurrently afterwards, and only the second pass returns them to the operating system.
 */
export function collectGarbage(): void {
  if (collector === null) collector = loadCollector();
  if (!collector) return;
  collector();
  setTimeout(() => collector?.(), 1000).unref();
}
