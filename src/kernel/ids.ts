import { randomBytes } from "node:crypto";

let lastTime = 0;
let sequence = 0;

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
  return `${lastTime.toString(36).padStart(9, "0")}${sequence.toString(36).padStart(4, "0")}${randomBytes(6).toString("hex")}`;
}
