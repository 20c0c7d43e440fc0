/** log2 of a chunk's size in numbers: 2^20 numbers, 8 MiB, the largest block there is. */
const CHUNK_BITS = 20;
const CHUNK_SIZE = 2 ** CHUNK_BITS;
const OFFSET_MASK = CHUNK_SIZE - 1;
/** The most chunks a slab may have: addresses stay below 2^30. */
const MAX_CHUNKS = 2 ** (30 - CHUNK_BITS);
/** The most chunks reserved at once: 512 MiB. */
const MOST_RESERVED_AT_ONCE = 64;
/** The smallest block: 16 numbers, 128 bytes. */
export const SMALLEST_BLOCK = 16;
/** The largest block, a whole chunk. */
export const LARGEST_BLOCK = CHUNK_SIZE;

/** log2 of a power of two. */
const log2 = (size: number): number => 31 - Math.clz32(size);

/**
 * Blocks of numbers (doubles) outside the JavaScript heap, each named by an address: a plain
 * integer, so whatever keeps addresses (a map's values) holds no object the collector must trace,
 * and a block growing or going allocates nothing on the heap. Memory keeps its viewers' entries
 * here (`viewer-frequency.ts`): as one array per viewer, every array that grew was copied by the
 * young generation's collector and then promoted, and at 100,000 viewers those copies and the
 * marking they led to were most of what its pauses did (docs/benchmarks.md).
 *
 * Blocks are powers of two from `SMALLEST_BLOCK` to `LARGEST_BLOCK` numbers, cut from chunks of
 * `LARGEST_BLOCK` numbers (a chunk's pages take memory only once written). A freed block is kept
 * for the next block of its size, or split for smaller ones; blocks are never merged, so the slab
 * keeps what it took at its busiest (a written-out allocator rather than a library: none keeps blocks off the heap and
 * addressed by integers).
 */
export class NumberSlab {
  private readonly chunks: Float64Array[] = [];
  /** Chunks reserved and not yet begun (see `reserve`). */
  private readonly spare: Float64Array[] = [];
  /** Where the newest chunk's unused part begins. */
  private top = CHUNK_SIZE;
  /** The freed blocks of each size, by log2 of the size. */
  private readonly freed: number[][] = Array.from({ length: CHUNK_BITS + 1 }, () => []);
  private inBlocks = 0;

  /** The chunk the block at `address` is in; its numbers begin at `offset(address)`. */
  chunk(address: number): Float64Array {
    return this.chunks[address >>> CHUNK_BITS] as Float64Array;
  }

  /** Where the block at `address` begins in its chunk. */
  offset(address: number): number {
    return address & OFFSET_MASK;
  }

  /** Numbers held in blocks handed out and not freed (8 bytes each). */
  get numbersInUse(): number {
    return this.inBlocks;
  }

  /** A block of `size` numbers (a power of two, `SMALLEST_BLOCK` to `LARGEST_BLOCK`), not cleared. */
  allocate(size: number): number {
    if (size < SMALLEST_BLOCK || size > LARGEST_BLOCK || (size & (size - 1)) !== 0)
      throw new RangeError(`a block is a power of two from ${SMALLEST_BLOCK} to ${LARGEST_BLOCK} numbers`);
    let address = this.split(log2(size));
    if (address === undefined) {
      if (this.top + size > CHUNK_SIZE) this.newChunk();
      address = (this.chunks.length - 1) * CHUNK_SIZE + this.top;
      this.top += size;
    }
    this.inBlocks += size;
    return address;
  }

  /** Gives back the block at `address`, of `size` numbers, for a later block of its size. */
  free(address: number, size: number): void {
    this.inBlocks -= size;
    (this.freed[log2(size)] as number[]).push(address);
  }

  /**
   * A freed block of 2^`k` numbers: one of that size, else the first half of the smallest larger
   * one, its other halves freed (blocks are split, never merged). Undefined when none is free.
   */
  private split(k: number): number | undefined {
    const exact = (this.freed[k] as number[]).pop();
    if (exact !== undefined) return exact;
    for (let larger = k + 1; larger <= CHUNK_BITS; larger++) {
      const block = (this.freed[larger] as number[]).pop();
      if (block === undefined) continue;
      for (let half = larger - 1; half >= k; half--) (this.freed[half] as number[]).push(block + 2 ** half);
      return block;
    }
    return undefined;
  }

  /** Starts a chunk, keeping what is left of the last one as freed blocks (every size is a multiple of the smallest). */
  private newChunk(): void {
    const last = (this.chunks.length - 1) * CHUNK_SIZE;
    while (this.chunks.length > 0 && CHUNK_SIZE - this.top >= SMALLEST_BLOCK) {
      const piece = 2 ** log2(CHUNK_SIZE - this.top);
      (this.freed[log2(piece)] as number[]).push(last + this.top);
      this.top += piece;
    }
    if (this.chunks.length >= MAX_CHUNKS) throw new RangeError('the slab holds at most 2^30 numbers (8 GiB)');
    if (this.spare.length === 0) this.reserve();
    this.chunks.push(this.spare.shift() as Float64Array);
    this.top = 0;
  }

  /**
   * Takes memory for as many chunks again as the slab has (at least one, at most
   * `MOST_RESERVED_AT_ONCE`), as one buffer cut into chunks. V8 answers memory taken outside its
   * heap by starting a full collection every few tens of megabytes of it, and at 100,000 viewers a
   * full collection marks for hundreds of milliseconds beside the requests on the same core: taken
   * a chunk at a time, the slab growing from 76 to 118 MB brought one every 1.3 to 4 s; taken so, a
   * handful in all. Untouched pages of a buffer take no resident memory (V8 counts the buffer whole
   * as memory outside its heap, once, which is the point).
   */
  private reserve(): void {
    const count = Math.min(
      Math.max(1, this.chunks.length),
      MOST_RESERVED_AT_ONCE,
      MAX_CHUNKS - this.chunks.length,
    );
    const buffer = new ArrayBuffer(count * CHUNK_SIZE * Float64Array.BYTES_PER_ELEMENT);
    for (let i = 0; i < count; i++)
      this.spare.push(new Float64Array(buffer, i * CHUNK_SIZE * Float64Array.BYTES_PER_ELEMENT, CHUNK_SIZE));
  }
}
