// Catalog upload throughput and memory: reachkit (self-hosted server process, with npm start's node flags: PUT the file, then
// streaming validation and save) beside a bare readline + JSON.parse + better-sqlite3 insert loop on
// the same file, in the same run. Usage: npm run bench:catalog [-- lines...] (default 100000 1000000);
// BENCH_ROUNDS sets the rounds per size (default 3 up to 200,000 lines, else 1).
import { execFile } from "node:child_process";
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { writeCatalogFile } from "./catalog-file.ts";
import { report, selfHostedNodeFlags, startServerProcess, stopServerProcess } from "./support.ts";

const sizes = process.argv.slice(2).map(Number);
const lineCounts = sizes.length > 0 ? sizes : [100_000, 1_000_000];
const secret = "bench-secret-bench-secret-bench-secret-0";
const MB = 1024 * 1024;

interface Run {
  productsPerSecond: number;
  seconds: number;
  peakRssMB: number;
}

/** The bare loop, in its own process, on a fresh database. */
async function baseline(file: string): Promise<Run> {
  const directory = mkdtempSync(join(tmpdir(), "reachkit-bench-baseline-"));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", join(import.meta.dirname, "servers/catalog-baseline.ts"), file, join(directory, "baseline.db")], {
      maxBuffer: 1024 * 1024,
    });
    const result = JSON.parse(/^RESULT (.*)$/m.exec(stdout)![1]!) as { productsPerSecond: number; seconds: number; maxRssBytes: number };
    return { productsPerSecond: result.productsPerSecond, seconds: round(result.seconds), peakRssMB: Math.round(result.maxRssBytes / MB) };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** The self-hosted server in its own process: create an upload, PUT the file, wait for completed; twice (a first save, then the same file again). */
/** peakRssMB covers both uploads; idleRssMB is the server's peak before the first one (start-up). */
async function reachkit(file: string, lines: number): Promise<Run & { uploadSeconds: number; idleRssMB: number; resave: Run }> {
  const dataDir = mkdtempSync(join(tmpdir(), "reachkit-bench-catalog-"));
  try {
    const setup = createServerKit({ dataDir, publicUrl: "http://127.0.0.1", secret, logger: silentLogger() });
    await setup.start({ runJobs: false });
    const { output } = await setup.provisionCompany({ name: "Bench Co" });
    await setup.stop();
    const headers = { authorization: `Bearer ${output.apiKey as string}` };
    // The public URL must carry the port, so pick one first.
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret, BENCH_PORT: String(port), BENCH_PUBLIC_URL: `http://127.0.0.1:${port}` };
    // The IDLE line comes before PORT, so it is read before startServerProcess returns.
    let idle = { maxRssBytes: 0 };
    const { child } = await startServerProcess(
      join(import.meta.dirname, "servers/reachkit-catalog.ts"),
      env,
      (line) => {
        const match = /^IDLE (.*)$/.exec(line);
        if (match) idle = JSON.parse(match[1]!) as { maxRssBytes: number };
      },
      selfHostedNodeFlags(),
    );
    const stats = new Promise<{ maxRssBytes: number }>((resolve) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const match = /^STATS (.*)$/.exec(line);
        if (match) resolve(JSON.parse(match[1]!) as { maxRssBytes: number });
      });
    });
    const idleRssMB = Math.round(idle.maxRssBytes / MB);
    const base = `http://127.0.0.1:${port}`;
    const first = await uploadOnce(base, headers, file, lines);
    const second = await uploadOnce(base, headers, file, lines);
    const exited = stopServerProcess(child);
    const { maxRssBytes } = await stats;
    await exited;
    const peakRssMB = Math.round(maxRssBytes / MB);
    return { ...first, peakRssMB, idleRssMB, resave: { ...second, peakRssMB } };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function uploadOnce(base: string, headers: Record<string, string>, file: string, lines: number) {
  const created = (await (await fetch(`${base}/v1/product-catalog/uploads`, { method: "POST", headers })).json()) as { uploadId: string; uploadUrl: string };
  const putStarted = Date.now();
  const status = await put(created.uploadUrl, file);
  if (status !== 200) throw new Error(`PUT answered ${status}`);
  const received = Date.now();
  for (;;) {
    const upload = (await (await fetch(`${base}/v1/product-catalog/uploads/${created.uploadId}`, { headers })).json()) as {
      status: string;
      productsProcessed: number;
      lastUpdated: string;
      errors: unknown[];
    };
    if (upload.status === "failed") throw new Error(`the upload failed: ${JSON.stringify(upload.errors)}`);
    if (upload.status === "completed") {
      if (upload.productsProcessed !== lines) throw new Error(`${upload.productsProcessed} of ${lines} products processed`);
      // Server and client share the machine's clock: completion time is the upload's lastUpdated.
      const seconds = (Date.parse(upload.lastUpdated) - received) / 1000;
      return { productsPerSecond: Math.round(lines / seconds), seconds: round(seconds), uploadSeconds: round((received - putStarted) / 1000) };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function put(url: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "content-length": String(statSync(file).size) } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    createReadStream(file).pipe(req);
  });
}

const round = (value: number) => Math.round(value * 100) / 100;
const median = <T>(runs: T[], key: (run: T) => number) => [...runs].sort((a, b) => key(a) - key(b))[Math.floor(runs.length / 2)]!;

const results: Record<string, unknown> = {};
for (const lines of lineCounts) {
  const file = join(tmpdir(), `reachkit-bench-catalog-${lines}-${process.pid}.ndjson`);
  try {
    const bytes = await writeCatalogFile(file, lines);
    // Alternated rounds, medians: a burst of noise on a shared machine hits both.
    const rounds = Number(process.env.BENCH_ROUNDS ?? (lines <= 200_000 ? 3 : 1));
    const baselines: Run[] = [];
    const reachkits: Array<Awaited<ReturnType<typeof reachkit>>> = [];
    for (let round = 0; round < rounds; round++) {
      baselines.push(await baseline(file));
      reachkits.push(await reachkit(file, lines));
    }
    const bare = median(baselines, (run) => run.productsPerSecond);
    const ours = median(reachkits, (run) => run.productsPerSecond);
    results[`${lines}`] = {
      lines,
      fileMB: Math.round(bytes / MB),
      bytesPerLine: Math.round(bytes / lines),
      reachkit: ours,
      baseline: bare,
      ratio: Math.round((ours.productsPerSecond / bare.productsPerSecond) * 100) / 100,
      rounds: { reachkit: reachkits.map((run) => run.productsPerSecond), baseline: baselines.map((run) => run.productsPerSecond) },
    };
  } finally {
    rmSync(file, { force: true });
  }
}
report("catalog", { ...results, target: { ratio: 0.5, peakRssMB: 200 } });
