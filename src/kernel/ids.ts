import { randomFillSync } from "node:crypto";

let lastTime = 0;
let sequence = 0;
/** Random bytes drawn a page at a time: one call per id cost a tenth of an event's ingestion (perf). */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += bytes;
  return pool.toString("hex", poolOffset - bytes, poolOffset);
}

/**
 * An opaque id that sorts in creation order (time, then a per-process counter,
 * then randomness), so "newest last" listings need no extra sort key even for
 * records made in the same millisecond.
 */
export function sortableId(now: number = Date.now()): string {
  if (now <= lastTime) {
    sequence++;
  } else {
    lastTime = now;
    sequence = 0;
  }
  return `${lastTime.toString(36).padStart(9, "0")}${sequence.toString(36).padStart(4, "0")}${randomHex(6)}`;
}

/** Whether `text` has the form of a {@link sortableId} (any case). */
export function isSortableId(text: string): boolean {
  return /^[0-9a-z]{13}[0-9a-f]{12}$/i.test(text);
}
