// The CPU time of a process's main thread apart from its other threads, from /proc (Linux): process.cpuUsage()
// sums them. On the kit's side the others are SQLite's write thread and V8's helpers (the garbage collector's),
// which share the second core with the receivers: where a delivery's CPU goes, not only how much.
import { readFileSync } from "node:fs";

/** Microseconds a clock tick of /proc's utime and stime (USER_HZ, 100 on Linux). */
const MICROS_PER_TICK = 10_000;

export interface ThreadsCpu {
  mainThread: number;
  otherThreads: number;
}

/** utime + stime of a /proc stat file, in microseconds; counted after the command's closing parenthesis (it may hold spaces). */
function cpuMicros(statFile: string): number {
  const stat = readFileSync(statFile, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK;
}

/** The CPU microseconds `pid`'s threads have used so far (its ended threads' included), or undefined without /proc. */
export function threadsCpu(pid: number = process.pid): ThreadsCpu | undefined {
  try {
    const all = cpuMicros(`/proc/${pid}/stat`);
    const mainThread = cpuMicros(`/proc/${pid}/task/${pid}/stat`);
    return { mainThread, otherThreads: all - mainThread };
  } catch {
    return undefined;
  }
}

/** What `pid`'s threads used since `before`, per item; undefined without /proc. */
export function threadsCpuPerItem(before: ThreadsCpu | undefined, pid: number, items: number): ThreadsCpu | undefined {
  const now = threadsCpu(pid);
  if (before === undefined || now === undefined) return undefined;
  const perItem = (micros: number) => Math.round((micros / items) * 10) / 10;
  return { mainThread: perItem(now.mainThread - before.mainThread), otherThreads: perItem(now.otherThreads - before.otherThreads) };
}
