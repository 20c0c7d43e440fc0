/**
 * A small deterministic generator (mulberry32): numbers in [0, 1), the same for the same seed on
 * every run. For the demo's traffic, the benchmarks' data and statistical tests, never for secrets.
 */
export function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
