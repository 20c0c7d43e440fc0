import { describe, expect, it } from 'vitest';
import { LARGEST_BLOCK, NumberSlab, SMALLEST_BLOCK } from './number-slab.js';

describe('the number slab', () => {
  it('hands out blocks that never overlap, and each keeps what was written to it', () => {
    const slab = new NumberSlab();
    const sizes = [16, 32, 16, 1024, 64, 16, 4096, 128];
    const blocks = Array.from({ length: 400 }, (_, i) => {
      const size = sizes[i % sizes.length] ?? 16;
      const address = slab.allocate(size);
      slab.chunk(address).fill(i, slab.offset(address), slab.offset(address) + size);
      return { address, size, i };
    });
    for (const { address, size, i } of blocks) {
      const numbers = slab.chunk(address).subarray(slab.offset(address), slab.offset(address) + size);
      expect(numbers.every((n) => n === i)).toBe(true);
      // An address is a small integer: a map of them holds nothing the collector traces.
      expect(Number.isInteger(address) && address >= 0 && address < 2 ** 30).toBe(true);
    }
    expect(slab.numbersInUse).toBe(blocks.reduce((sum, { size }) => sum + size, 0));
  });

  it('gives a freed block to the next block of its size, and keeps what a chunk had left', () => {
    const slab = new NumberSlab();
    const a = slab.allocate(64);
    slab.free(a, 64);
    expect(slab.numbersInUse).toBe(0);
    expect(slab.allocate(64)).toBe(a);
    // A block larger than what the chunk has left starts a chunk; the rest of the first becomes
    // blocks for smaller ones, so a block of the smallest size comes from the first chunk again.
    const whole = slab.allocate(LARGEST_BLOCK);
    expect(slab.chunk(whole) === slab.chunk(a)).toBe(false);
    expect(slab.chunk(slab.allocate(SMALLEST_BLOCK)) === slab.chunk(a)).toBe(true);
    // A freed block larger than asked for is split: its first part is handed out, the rest kept.
    const fresh = new NumberSlab();
    const large = fresh.allocate(1024);
    fresh.allocate(16);
    fresh.free(large, 1024);
    const parts = [fresh.allocate(256), fresh.allocate(512), fresh.allocate(256)];
    expect(parts.sort((x, y) => x - y)).toEqual([large, large + 256, large + 512]);
  });

  it('takes memory for as many chunks again as it has, so a growing slab takes it a handful of times', () => {
    // V8 answers each few tens of megabytes taken outside its heap with a full collection, so a
    // chunk taken at a time would bring one every few chunks for as long as the slab grows.
    const slab = new NumberSlab();
    const buffers = new Set<ArrayBufferLike>();
    for (let i = 0; i < 24; i++) buffers.add(slab.chunk(slab.allocate(LARGEST_BLOCK)).buffer);
    // 1 + 1 + 2 + 4 + 8 + 16 chunks: six takes cover the 24 chunks.
    expect(buffers.size).toBe(6);
    // Each chunk is its own run of numbers: writing a whole one leaves the next untouched.
    const [first, second] = [slab.allocate(LARGEST_BLOCK), slab.allocate(LARGEST_BLOCK)];
    slab.chunk(second).fill(2);
    slab.chunk(first).fill(1);
    expect(slab.chunk(second).every((n) => n === 2)).toBe(true);
  });

  it('refuses a size that is not a power of two within its bounds', () => {
    const slab = new NumberSlab();
    for (const size of [0, 8, 24, LARGEST_BLOCK * 2]) expect(() => slab.allocate(size)).toThrow(RangeError);
  });
});
