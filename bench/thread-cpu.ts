// The CPU time of a process from /proc (Linux), and of its main thread apart from its other threads, which
// process.cpuUsage() sums. On the kit's side the others are SQLite's checkpointer and V8's helpers (the garbage
// collector's), which share the second core with the receivers: where a delivery's CPU goes, not only how much.
import { readFileSync } from "node:fs";

/** Microseconds a clock tick of /proc's utime and stime (USER_HZ, 100 on Linux). */
const MICROS_PER_TICK = 10_000;

export interface ThreadsCpu {
  mainThread: number;
  otherThreads: number;
}

/** utime + stime of a /proc stat file, in microseconds; counted after the command's closing parenthesis (it may hold spaces). */
function statCpuMicros(statFile: string): number {
  const stat = readFileSync(statFile, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK;
}

/** The CPU microseconds process `pid` has used so far, its ended threads' included; throws without /proc. */
export const processCpuMicros = (pid: number): number => statCpuMicros(`/proc/${pid}/stat`);

/** This process's CPU microseconds so far, its main thread apart from the others; undefined without /proc. */
export function threadsCpu(): ThreadsCpu | undefined {
  try {
    const all = processCpuMicros(process.pid);
    const mainThread = statCpuMicros(`/proc/${process.pid}/task/${process.pid}/stat`);
    return { mainThread, otherThreads: all - mainThread };
  } catch {
    return undefined;
  }
}

/**
 * This process's main thread's CPU microseconds so far, to the nanosecond (its run time in /proc's schedstat, where
 * stat counts ticks of 10 ms): for spans as short as one turn of the event loop. Undefined without /proc.
 */
export function mainThreadCpuMicros(): number | undefined {
  try {
    return Number(readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1000;
  } catch {
    return undefined;
  }
}
