import { setFlagsFromString } from "node:v8";

/**
 * How far past what a full collection left live V8 lets the server's old generation grow before the next one,
 * in percent. V8's own factor goes up to four times the live heap on a process that collects quickly: a
 * campaign's pages outlive the young generation (their transactions wait while messages go out), so the heap
 * grew by 75 to 90 MB of garbage before its first full collection. At 50 a 200,000-profile campaign peaked
 * 39 to 42 MB above the idle server instead of 97 to 109, its CPU a message within the runs' spread; a
 * 1,000,000-profile one 42 MB (docs/campaigns.md).
 */
export const SERVER_HEAP_GROWING_PERCENT = 50;

const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets the server's heap growth, unless node was started with its own `--heap-growing-percent` (a V8 flag node
 * refuses in NODE_OPTIONS: `node --heap-growing-percent=N dist/server/cli.js serve` sets another). V8 reads it
 * at each full collection, so setting it once the process runs takes effect from the next. Answers the percent
 * set, or undefined when node's command line gave one.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): number | undefined {
  if (execArgv.some((arg) => FLAG.test(arg))) return undefined;
  setFlagsFromString(`--heap-growing-percent=${SERVER_HEAP_GROWING_PERCENT}`);
  return SERVER_HEAP_GROWING_PERCENT;
}
