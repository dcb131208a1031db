// Start-up of the self-hosted server and of a CLI call: the built JavaScript (what `npm start` and the
// `reachkit` bin run) beside the TypeScript sources through tsx (how both started before the build),
// and a baseline that does the least the same job needs (a bare node:http server answering /healthz,
// a bare `node -e ""`). Rounds alternate the three, each a fresh process on a data directory whose
// first start (credentials printed) is already done.
//   npm run bench:start        (runs `npm run build` first)
// Server: milliseconds from spawn to the first 200 of /healthz, the CPU time spent by then, and the
// resident memory after 3 s idle. CLI: wall and CPU milliseconds of `reachkit companies list` (CPU from
// GNU time, /usr/bin/time).
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { report, selfHostedNodeFlags } from "./support.ts";
import { processCpuMicros } from "./thread-cpu.ts";
import { temporaryDirectory } from "../test/support/temp-dir.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const IDLE_MS = 3_000;
const root = join(import.meta.dirname, "..");
const SECRET = "bench-secret-bench-secret-bench-secret-0";
const BARE_SERVER = `require("node:http").createServer((q, s) => { s.writeHead(200, { "content-type": "application/json" }); s.end('{"status":"ok"}'); }).listen(process.env.PORT)`;

type Variant = "bare" | "built" | "tsx";
const serverArgs: Record<Variant, string[]> = {
  bare: ["-e", BARE_SERVER],
  built: [...selfHostedNodeFlags(), join(root, "dist/server/main.js")],
  tsx: [...selfHostedNodeFlags(), "--import", "tsx", join(root, "server/main.ts")],
};
const cliArgs: Record<Variant, string[]> = {
  bare: ["-e", ""],
  built: [join(root, "dist/server/cli.js")],
  tsx: ["--import", "tsx", join(root, "server/cli.ts")],
};

const round1 = (value: number) => Math.round(value * 10) / 10;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const healthy = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = request({ host: "127.0.0.1", port, path: "/healthz" }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    probe.on("error", () => resolve(false));
    probe.end();
  });

/** CPU milliseconds (user + system) a process has used, from /proc (clock ticks of 10 ms). */
const cpuMs = (pid: number) => processCpuMicros(pid) / 1000;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function startOnce(variant: Variant, dataDir: string): Promise<{ toHealthyMs: number; cpuMs: number; idleRssMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, serverArgs[variant], {
    cwd: root,
    env: { ...process.env, PORT: String(port), REACHKIT_DATA_DIR: dataDir, REACHKIT_SECRET: SECRET, LOG_LEVEL: "error" },
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  while (!(await healthy(port))) await sleep(2);
  const toHealthyMs = performance.now() - started;
  const cpu = cpuMs(child.pid!);
  await sleep(IDLE_MS);
  const idleRssMb = rssMb(child.pid!);
  child.kill("SIGTERM");
  await exited;
  return { toHealthyMs: round1(toHealthyMs), cpuMs: cpu, idleRssMb: round1(idleRssMb) };
}

/** A CLI call's wall milliseconds, and its CPU milliseconds as GNU time reports them (steadier on a busy machine). */
function cliOnce(variant: Variant, dataDir: string): { wallMs: number; cpuMs: number } {
  const started = performance.now();
  const command = [process.execPath, ...cliArgs[variant], ...(variant === "bare" ? [] : ["companies", "list", "--data-dir", dataDir])];
  const result = spawnSync("/usr/bin/time", ["-f", "CPU %U %S", ...command], { cwd: root, env: { ...process.env, REACHKIT_SECRET: SECRET }, encoding: "utf8" });
  const wallMs = round1(performance.now() - started);
  if (result.status !== 0) throw new Error(`${variant} CLI call failed: ${result.stderr}`);
  const [user, system] = /CPU ([\d.]+) ([\d.]+)/.exec(result.stderr)!.slice(1).map(Number);
  return { wallMs, cpuMs: Math.round((user! + system!) * 1000) };
}

const loadAtStart = loadavg().map(round1);
execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
const dataDirs = Object.fromEntries((["bare", "built", "tsx"] as const).map((variant) => [variant, temporaryDirectory(`bench-start-${variant}`)])) as Record<Variant, string>;
// The first start of each data directory creates its company; the rounds measure ordinary starts.
for (const variant of ["built", "tsx"] as const) await startOnce(variant, dataDirs[variant]);

const server: Record<Variant, Array<Awaited<ReturnType<typeof startOnce>>>> = { bare: [], built: [], tsx: [] };
const cli: Record<Variant, Array<ReturnType<typeof cliOnce>>> = { bare: [], built: [], tsx: [] };
for (let round = 0; round < ROUNDS; round++) {
  const order: Variant[] = round % 2 === 0 ? ["bare", "built", "tsx"] : ["tsx", "built", "bare"];
  for (const variant of order) server[variant].push(await startOnce(variant, dataDirs[variant]));
  for (const variant of order) cli[variant].push(cliOnce(variant, dataDirs.built));
}

const summary = (variant: Variant) => ({
  toHealthyMs: median(server[variant].map((run) => run.toHealthyMs)),
  cpuMsToHealthy: median(server[variant].map((run) => run.cpuMs)),
  idleRssMb: median(server[variant].map((run) => run.idleRssMb)),
  cliCallMs: median(cli[variant].map((call) => call.wallMs)),
  cliCallCpuMs: median(cli[variant].map((call) => call.cpuMs)),
});
report("start", {
  machine: { cpus: cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map(round1) },
  rounds: ROUNDS,
  medians: { bare: summary("bare"), built: summary("built"), tsx: summary("tsx") },
  runs: { server, cli },
});
