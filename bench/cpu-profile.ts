import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

/** Runs `work` under the CPU profiler when BENCH_CPU_PROFILE names a directory, writing `<name>.cpuprofile` there. */
export async function profiled<R>(name: string, work: () => Promise<R>): Promise<R> {
  const directory = process.env.BENCH_CPU_PROFILE;
  if (!directory) return work();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}
