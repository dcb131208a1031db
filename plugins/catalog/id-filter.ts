/** Bits a filter sets per id. */
const HASHES = 3;

/**
 * A Bloom filter of ids: "certainly not added", or "maybe added". Its size
 * is fixed (2^log2Bits bits: 2 MiB by default), whatever the number of ids:
 * with 2.4 million ids about 4% of other ids answer "maybe", and more ids only
 * raise that share. An upload uses it to skip the storage reads that cannot
 * find anything, so a wrong "maybe" costs a read and never an answer.
 */
export class IdFilter {
  readonly #words: Uint32Array;
  readonly #mask: number;

  constructor(log2Bits = 24) {
    this.#words = new Uint32Array(2 ** (log2Bits - 5));
    this.#mask = 2 ** log2Bits - 1;
  }

  /** Adds `id`; answers whether it might have been added before (mightHave's answer, for one hashing of the id). */
  add(id: string): boolean {
    const [first, step] = hashes(id);
    let maybe = true;
    for (let index = 0; index < HASHES; index++) {
      const bit = (first + index * step) & this.#mask;
      const word = bit >>> 5;
      const mask = 1 << (bit & 31);
      if ((this.#words[word]! & mask) === 0) maybe = false;
      this.#words[word]! |= mask;
    }
    return maybe;
  }

  mightHave(id: string): boolean {
    const [first, step] = hashes(id);
    for (let index = 0; index < HASHES; index++) {
      const bit = (first + index * step) & this.#mask;
      if ((this.#words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of the UTF-16 code units (FNV-1a, and a multiply-xorshift); the second is odd. */
function hashes(id: string): [number, number] {
  let first = 0x811c9dc5;
  let second = 0x9747b28c;
  for (let index = 0; index < id.length; index++) {
    const code = id.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x5bd1e995);
    second ^= second >>> 15;
  }
  return [first >>> 0, (second | 1) >>> 0];
}
