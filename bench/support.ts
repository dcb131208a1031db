import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

/**
 * Starts a bench server script in its own process (so the load generator does not share its core) and reads its port.
 * BENCH_NODE_ARGS adds node flags to it, e.g. `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/tmp"` to profile a server.
 */
export interface ServerProcess {
  port: number;
  child: ChildProcess;
  /** The server's CPU time so far in microseconds (bench servers import servers/cpu-probe.ts). */
  cpuMicros(): Promise<number>;
}

/**
 * Starts a bench server script in its own process (so the load generator does not share its core) and reads its port.
 * BENCH_NODE_ARGS adds node flags to it, e.g. `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/tmp"` to profile a server.
 * `onLine` sees every line the server prints (from the first, before PORT).
 */
export async function startServerProcess(script: string, env: Record<string, string>, onLine?: (line: string) => void): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean), "--import", "tsx", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const cpuWaiters: Array<(micros: number) => void> = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      onLine?.(line);
      const portLine = /^PORT (\d+)$/.exec(line);
      if (portLine) resolve(Number(portLine[1]));
      const cpuLine = /^CPU (\d+)$/.exec(line);
      if (cpuLine) cpuWaiters.shift()?.(Number(cpuLine[1]));
    });
  });
  return {
    port,
    child,
    cpuMicros: () =>
      new Promise((resolve) => {
        cpuWaiters.push(resolve);
        child.kill("SIGUSR2");
      }),
  };
}

export async function stopServerProcess(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Server CPU time per request, when measured: steadier than throughput on a shared machine. */
  cpuMicrosPerRequest?: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export async function load(options: { url: string; headers?: Record<string, string>; seconds: number; connections: number }): Promise<LoadResult> {
  const result = await autocannon({ url: options.url, headers: options.headers, duration: options.seconds, connections: options.connections });
  return {
    requestsPerSecond: Math.round(result.requests.average),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** Prints the figures and writes them as JSON to bench/results/<name>.json. */
export function report(name: string, figures: Record<string, unknown>): void {
  const directory = join(import.meta.dirname, "results");
  mkdirSync(directory, { recursive: true });
  const document = { benchmark: name, measuredAt: new Date().toISOString(), node: process.version, ...figures };
  writeFileSync(join(directory, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
  console.log(JSON.stringify(document, null, 2));
}

const WARM_UP_SECONDS = 5;

/** One measured load on a bench server, with its CPU cost per request. */
export async function measureServer(
  server: ServerProcess,
  options: { path: string; headers?: Record<string, string>; seconds: number; connections: number },
): Promise<LoadResult> {
  const url = `http://127.0.0.1:${server.port}${options.path}`;
  // Warm-up: a fresh process runs unoptimised code at first, and the more code a server has, the longer
  // its JIT takes to settle; the measure is of the steady state both servers reach.
  await load({ url, headers: options.headers, seconds: WARM_UP_SECONDS, connections: options.connections });
  const before = await server.cpuMicros();
  const result = await load({ url, headers: options.headers, seconds: options.seconds, connections: options.connections });
  const after = await server.cpuMicros();
  return { ...result, cpuMicrosPerRequest: Math.round(((after - before) / result.requests) * 10) / 10 };
}

/**
 * Measures a baseline and reachkit in alternation over several rounds and keeps
 * each one's median round, so a burst of noise on a shared machine hits both.
 */
export async function alternate<T extends string>(
  scripts: Record<"bare" | "reachkit", T>,
  measure: (script: T) => Promise<LoadResult>,
  rounds = 3,
): Promise<{
  reachkit: LoadResult;
  bare: LoadResult;
  ratio: number;
  cpuRatio?: number;
  rounds: { reachkit: number[]; bare: number[] };
}> {
  const runs: { reachkit: LoadResult[]; bare: LoadResult[] } = { reachkit: [], bare: [] };
  for (let round = 0; round < rounds; round++) {
    runs.bare.push(await measure(scripts.bare));
    runs.reachkit.push(await measure(scripts.reachkit));
  }
  const median = (results: LoadResult[]) => [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(results.length / 2)]!;
  const reachkit = median(runs.reachkit);
  const bare = median(runs.bare);
  return {
    reachkit,
    bare,
    ratio: Math.round((reachkit.requestsPerSecond / bare.requestsPerSecond) * 100) / 100,
    // Bare CPU per request over reachkit's: the throughput ratio a quiet machine would show.
    ...(reachkit.cpuMicrosPerRequest && bare.cpuMicrosPerRequest
      ? { cpuRatio: Math.round((bare.cpuMicrosPerRequest / reachkit.cpuMicrosPerRequest) * 100) / 100 }
      : {}),
    rounds: { reachkit: runs.reachkit.map((r) => r.requestsPerSecond), bare: runs.bare.map((r) => r.requestsPerSecond) },
  };
}
