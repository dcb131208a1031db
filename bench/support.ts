import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";

/** A bench server running in its own process. */
export interface ServerProcess {
  port: number;
  child: ChildProcess;
  /** The server's CPU time so far in microseconds (bench servers import servers/cpu-probe.ts). */
  cpuMicros(): Promise<number>;
}

/**
 * Starts a bench server script in its own process (so the load generator does not share its core) and reads its port.
 * `nodeFlags` are node's command-line flags for it (see selfHostedNodeFlags); BENCH_NODE_ARGS adds more,
 * e.g. `BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=bench/tmp"` to profile a server.
 * `onLine` sees every line the server prints (from the first, before PORT).
 */
export async function startServerProcess(script: string, env: Record<string, string>, onLine?: (line: string) => void, nodeFlags: readonly string[] = []): Promise<ServerProcess> {
  const flags = [...nodeFlags, ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean)];
  const child = spawn(process.execPath, [...flags, "--import", "tsx", script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
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

/**
 * The node flags `npm start` gives the self-hosted server (package.json's start script: `tsx <flags> <script>`),
 * so that a benchmark of the self-hosted server runs it as a self-hoster does.
 */
export function selfHostedNodeFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")) as { scripts: { start: string } };
  return scripts.start.split(" ").filter((word) => word.startsWith("--"));
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
  return loadResultOf(await autocannon({ url: options.url, headers: options.headers, duration: options.seconds, connections: options.connections }));
}

/** autocannon's figures; with the server's CPU time over the run, its CPU per request too. */
export function loadResultOf(result: autocannon.Result, serverCpuMicros?: number): LoadResult {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    ...(serverCpuMicros !== undefined ? { cpuMicrosPerRequest: Math.round((serverCpuMicros / result.requests.total) * 10) / 10 } : {}),
    requests: result.requests.total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

const loadAverage = () => loadavg().map((load) => Math.round(load * 10) / 10);
/** The machine's load average (1, 5 and 15 minutes) when the benchmark loads, before it measures anything. */
const loadAverageAtStart = loadAverage();

/**
 * Prints the figures, with the machine's cores and its load average at the start and the end (other work
 * on a shared machine slows every figure), and writes them as JSON to bench/results/<name>.json.
 */
export function report(name: string, figures: Record<string, unknown>): void {
  const directory = join(import.meta.dirname, "results");
  mkdirSync(directory, { recursive: true });
  const machine = { cpus: cpus().length, loadAverageAtStart, loadAverageAtEnd: loadAverage() };
  const document = { benchmark: name, measuredAt: new Date().toISOString(), node: process.version, machine, ...figures };
  writeFileSync(join(directory, `${name}.json`), `${JSON.stringify(document, null, 2)}\n`);
  console.log(JSON.stringify(document, null, 2));
}

/** Load before each measured window unless told otherwise: a fresh process runs unoptimised code at first. */
const WARM_UP_SECONDS = 5;

/**
 * One measured load on a bench server, with its CPU cost per request, after a
 * warm-up (`warmUpSeconds`, default 5; 0 for a server already warm): the more
 * code a server has, the longer its JIT takes to settle, and the measure is of
 * the steady state both servers reach.
 */
export async function measureServer(
  server: ServerProcess,
  options: { path: string; headers?: Record<string, string>; seconds: number; connections: number; warmUpSeconds?: number },
): Promise<LoadResult> {
  const url = `http://127.0.0.1:${server.port}${options.path}`;
  const warmUpSeconds = options.warmUpSeconds ?? WARM_UP_SECONDS;
  if (warmUpSeconds > 0) await load({ url, headers: options.headers, seconds: warmUpSeconds, connections: options.connections });
  const before = await server.cpuMicros();
  const result = await load({ url, headers: options.headers, seconds: options.seconds, connections: options.connections });
  const after = await server.cpuMicros();
  return { ...result, cpuMicrosPerRequest: Math.round(((after - before) / result.requests) * 10) / 10 };
}

type Sides<T> = Record<"bare" | "reachkit", T>;

/** Each side's median round, their ratio and the rounds, as every comparative benchmark reports them. */
export interface Comparison {
  reachkit: LoadResult;
  bare: LoadResult;
  ratio: number;
  cpuRatio?: number;
  rounds: Sides<number[]>;
}

/**
 * Measures a baseline and reachkit in alternation over several rounds (a fresh
 * server process per measure) and keeps each one's median round, so a burst of
 * noise on a shared machine hits both.
 */
export async function alternate<T extends string>(scripts: Sides<T>, measure: (script: T) => Promise<LoadResult>, rounds = 3): Promise<Comparison> {
  const runs: Sides<LoadResult[]> = { reachkit: [], bare: [] };
  for (let round = 0; round < rounds; round++) {
    runs.bare.push(await measure(scripts.bare));
    runs.reachkit.push(await measure(scripts.reachkit));
  }
  return compare(runs);
}

/**
 * Measures two running servers (warmed up by the caller) in short alternated
 * windows, the side that goes first changing every round. On a machine whose speed
 * drifts by a third from one minute to the next (a shared 2-core VM), windows
 * seconds apart meet the same conditions, where whole server runs one after the
 * other do not; and both servers are measured warm.
 */
export async function interleave(servers: Sides<ServerProcess>, measure: (server: ServerProcess) => Promise<LoadResult>, rounds: number): Promise<Comparison> {
  const runs: Sides<LoadResult[]> = { reachkit: [], bare: [] };
  for (let round = 0; round < rounds; round++) {
    for (const side of round % 2 === 0 ? (["bare", "reachkit"] as const) : (["reachkit", "bare"] as const)) runs[side].push(await measure(servers[side]));
  }
  return compare(runs);
}

function compare(runs: Sides<LoadResult[]>): Comparison {
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
