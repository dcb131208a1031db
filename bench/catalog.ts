// Catalog upload throughput and memory: reachkit (self-hosted server process, with npm start's node flags: PUT the file, then
// streaming validation and save) beside a bare loop that writes and indexes the same rows (servers/catalog-baseline.ts)
// on the same file, in the same run, with each side's CPU time per product. Usage: npm run bench:catalog [-- lines...] (default 100000 1000000);
// BENCH_ROUNDS sets the rounds per size (default 3 up to 200,000 lines, else 1). Each side also reports its CPU
// time per product in each window of 100,000 products (cpuMicrosPerProductByWindow): a cost that grew with the size of
// the tables would show as a rising series within one run, where separate runs at different sizes meet different loads.
// `npm run bench:catalog -- degenerate [MB]` measures instead files of blank or invalid lines beside a file of
// products of the same size (default 20 MB): time, and peak memory over the server's idle peak.
// `npm run bench:catalog -- s3 [lines]` measures the server with its files in an S3 bucket (a local S3-compatible server in
// this process) beside the same server with files in its data directory, alternated: peak memory and time (default 100,000 lines).
import { execFile } from "node:child_process";
import { createReadStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { deliveryFromEnv } from "../server/delivery-config.ts";
import { createServerKit } from "../server/server-kit.ts";
import { silentLogger } from "../src/index.ts";
import { startS3Server } from "../test/support/s3-server.ts";
import { DEGENERATE_FILES, writeCatalogFile, writeDegenerateFile } from "./catalog-file.ts";
import { report, selfHostedNodeFlags, startServerProcess, stopServerProcess } from "./support.ts";

const secret = "bench-secret-bench-secret-bench-secret-0";
const MB = 1024 * 1024;
/** The mean length of writeCatalogFile's lines. */
const PRODUCT_LINE_BYTES = 1_326;

/** Products per window of cpuMicrosPerProductByWindow. */
const WINDOW_PRODUCTS = 100_000;

interface Run {
  productsPerSecond: number;
  seconds: number;
  /** CPU time per product, in microseconds (every thread of the process): steadier than throughput on a shared machine. */
  cpuMicrosPerProduct: number;
  /** The same, per window of WINDOW_PRODUCTS products in file order (reachkit's windows end at the first look past each). */
  cpuMicrosPerProductByWindow: number[];
  peakRssMB: number;
}

/** One upload as the server ended it. */
interface UploadOutcome {
  status: string;
  productsProcessed: number;
  errorCounts: Record<string, number>;
  /** From the PUT's answer to the upload's last update (its end). */
  seconds: number;
  /** The server's CPU time from the PUT's answer until the upload was seen ended. */
  cpuSeconds: number;
  cpuMicrosPerProductByWindow: number[];
  uploadSeconds: number;
}

/** The bare loop, in its own process, on a fresh database. */
async function baseline(file: string, lines: number): Promise<Run> {
  const directory = mkdtempSync(join(tmpdir(), "reachkit-bench-baseline-"));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", join(import.meta.dirname, "servers/catalog-baseline.ts"), file, join(directory, "baseline.db")], {
      maxBuffer: 1024 * 1024,
    });
    const result = JSON.parse(/^RESULT (.*)$/m.exec(stdout)![1]!) as {
      productsPerSecond: number;
      seconds: number;
      cpuSeconds: number;
      cpuMicrosPerProductByWindow: number[];
      maxRssBytes: number;
    };
    return {
      productsPerSecond: result.productsPerSecond,
      seconds: round(result.seconds),
      cpuMicrosPerProduct: Math.round((result.cpuSeconds * 1e6) / lines),
      cpuMicrosPerProductByWindow: result.cpuMicrosPerProductByWindow,
      peakRssMB: Math.round(result.maxRssBytes / MB),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * The self-hosted server in its own process, on a fresh data directory with one company: `work` uploads files
 * to it. peakRssMB is the server's peak over the whole run; idleRssMB its peak before the first upload (start-up).
 */
async function withServer<T>(
  work: (upload: (file: string) => Promise<UploadOutcome>) => Promise<T>,
  serverEnv: Record<string, string> = {},
): Promise<{ result: T; peakRssMB: number; idleRssMB: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "reachkit-bench-catalog-"));
  try {
    const setup = createServerKit({ dataDir, publicUrl: "http://127.0.0.1", secret, logger: silentLogger(), delivery: deliveryFromEnv(serverEnv) });
    await setup.start({ runJobs: false });
    const { output } = await setup.provisionCompany({ name: "Bench Co" });
    await setup.stop();
    const headers = { authorization: `Bearer ${output.apiKey as string}` };
    // The public URL must carry the port, so pick one first.
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const env = { ...serverEnv, BENCH_DATA_DIR: dataDir, BENCH_SECRET: secret, BENCH_PORT: String(port), BENCH_PUBLIC_URL: `http://127.0.0.1:${port}` };
    // The IDLE line comes before PORT, so it is read before startServerProcess returns.
    let idle = { maxRssBytes: 0 };
    const server = await startServerProcess(
      join(import.meta.dirname, "servers/reachkit-catalog.ts"),
      env,
      (line) => {
        const match = /^IDLE (.*)$/.exec(line);
        if (match) idle = JSON.parse(match[1]!) as { maxRssBytes: number };
      },
      selfHostedNodeFlags(),
    );
    const { child } = server;
    const stats = new Promise<{ maxRssBytes: number }>((resolve) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const match = /^STATS (.*)$/.exec(line);
        if (match) resolve(JSON.parse(match[1]!) as { maxRssBytes: number });
      });
    });
    const base = `http://127.0.0.1:${port}`;
    const result = await work((file) => uploadOnce(base, headers, file, server.cpuMicros));
    const exited = stopServerProcess(child);
    const { maxRssBytes } = await stats;
    await exited;
    return { result, peakRssMB: Math.round(maxRssBytes / MB), idleRssMB: Math.round(idle.maxRssBytes / MB) };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A first save of the file, then the same file again (a save into a catalog that holds its products). */
async function reachkit(file: string, lines: number): Promise<Run & { uploadSeconds: number; idleRssMB: number; resave: Run }> {
  const { result, peakRssMB, idleRssMB } = await withServer(async (upload) => [await upload(file), await upload(file)]);
  const [first, second] = result.map((outcome) => {
    if (outcome.status !== "completed" || outcome.productsProcessed !== lines) throw new Error(`the upload ended ${outcome.status} with ${outcome.productsProcessed} of ${lines} products`);
    return {
      productsPerSecond: Math.round(lines / outcome.seconds),
      seconds: outcome.seconds,
      cpuMicrosPerProduct: Math.round((outcome.cpuSeconds * 1e6) / lines),
      cpuMicrosPerProductByWindow: outcome.cpuMicrosPerProductByWindow,
      uploadSeconds: outcome.uploadSeconds,
    };
  });
  return { ...first!, peakRssMB, idleRssMB, resave: { ...second!, peakRssMB } };
}

async function uploadOnce(base: string, headers: Record<string, string>, file: string, cpuMicros: () => Promise<number>): Promise<UploadOutcome> {
  const created = (await (await fetch(`${base}/v1/product-catalog/uploads`, { method: "POST", headers })).json()) as { uploadId: string; uploadUrl: string };
  const putStarted = Date.now();
  const status = await put(created.uploadUrl, file);
  if (status !== 200) throw new Error(`PUT answered ${status}`);
  const received = Date.now();
  const cpuBefore = await cpuMicros();
  const windows = { ended: { products: 0, cpu: cpuBefore }, cpuMicrosPerProduct: [] as number[] };
  for (;;) {
    const upload = (await (await fetch(`${base}/v1/product-catalog/uploads/${created.uploadId}`, { headers })).json()) as {
      status: string;
      productsProcessed: number;
      lastUpdated: string;
      errors: Array<{ errorType: string }>;
    };
    const ended = upload.status === "failed" || upload.status === "completed";
    const products = upload.productsProcessed;
    if (ended || products >= windows.ended.products + WINDOW_PRODUCTS) {
      const cpu = await cpuMicros();
      if (products > windows.ended.products) windows.cpuMicrosPerProduct.push(Math.round((cpu - windows.ended.cpu) / (products - windows.ended.products)));
      windows.ended = { products, cpu };
    }
    if (ended) {
      const cpuSeconds = (windows.ended.cpu - cpuBefore) / 1e6;
      const errorCounts: Record<string, number> = {};
      for (const { errorType } of upload.errors) errorCounts[errorType] = (errorCounts[errorType] ?? 0) + 1;
      // Server and client share the machine's clock: the end is the upload's lastUpdated.
      const seconds = (Date.parse(upload.lastUpdated) - received) / 1000;
      return {
        status: upload.status,
        productsProcessed: products,
        errorCounts,
        seconds: round(seconds),
        cpuSeconds,
        cpuMicrosPerProductByWindow: windows.cpuMicrosPerProduct,
        uploadSeconds: round((received - putStarted) / 1000),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
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
const load = () => loadavg().map((value) => round(value));

async function throughput(lineCounts: readonly number[]): Promise<void> {
  const results: Record<string, unknown> = {};
  for (const lines of lineCounts) {
    const file = join(tmpdir(), `reachkit-bench-catalog-${lines}-${process.pid}.ndjson`);
    try {
      const bytes = await writeCatalogFile(file, lines);
      // Alternated rounds, medians: a burst of noise on a shared machine hits both.
      const rounds = Number(process.env.BENCH_ROUNDS ?? (lines <= 200_000 ? 3 : 1));
      const baselines: Run[] = [];
      const reachkits: Array<Awaited<ReturnType<typeof reachkit>>> = [];
      const loadAverages = [load()];
      for (let round = 0; round < rounds; round++) {
        baselines.push(await baseline(file, lines));
        reachkits.push(await reachkit(file, lines));
        loadAverages.push(load());
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
        // The baseline's CPU per product over reachkit's, medians: the ratio a quiet machine would show.
        cpuRatio: Math.round((median(baselines, (run) => run.cpuMicrosPerProduct).cpuMicrosPerProduct / median(reachkits, (run) => run.cpuMicrosPerProduct).cpuMicrosPerProduct) * 100) / 100,
        rounds: {
          reachkit: reachkits.map((run) => run.productsPerSecond),
          baseline: baselines.map((run) => run.productsPerSecond),
          ratios: reachkits.map((run, index) => round(run.productsPerSecond / baselines[index]!.productsPerSecond)),
          reachkitCpuMicrosPerProduct: reachkits.map((run) => run.cpuMicrosPerProduct),
          baselineCpuMicrosPerProduct: baselines.map((run) => run.cpuMicrosPerProduct),
        },
        loadAverages,
      };
    } finally {
      rmSync(file, { force: true });
    }
  }
  report("catalog", { ...results, target: { ratio: 0.7, peakRssMB: 200 } });
}

/** Each degenerate file, and a file of products of the same size, in a fresh server each: what a file of that size costs. */
async function degenerate(sizeMB: number): Promise<void> {
  const results: Record<string, unknown> = {};
  for (const kind of ["products", ...DEGENERATE_FILES] as const) {
    const file = join(tmpdir(), `reachkit-bench-catalog-${kind}-${process.pid}.ndjson`);
    try {
      const bytes = kind === "products" ? await writeCatalogFile(file, Math.round((sizeMB * MB) / PRODUCT_LINE_BYTES)) : await writeDegenerateFile(file, kind, sizeMB * MB);
      const loadBefore = load();
      const { result, peakRssMB, idleRssMB } = await withServer((upload) => upload(file));
      results[kind] = {
        fileMB: round(bytes / MB),
        status: result.status,
        productsProcessed: result.productsProcessed,
        errorEntries: result.errorCounts,
        seconds: result.seconds,
        secondsPerMB: round(result.seconds / (bytes / MB)),
        peakRssMB,
        overIdleRssMB: peakRssMB - idleRssMB,
        loadAverage: loadBefore,
      };
    } finally {
      rmSync(file, { force: true });
    }
  }
  report("catalog-degenerate", results);
}

/**
 * The same file through the server with its objects in an S3 bucket and in its data directory, alternated. The
 * S3 side's time runs from the PUT's answer, so it holds the wait for the poll that finds the file (5 s at most).
 */
async function s3(lines: number): Promise<void> {
  const bucket = await startS3Server("bench-catalog");
  const file = join(tmpdir(), `reachkit-bench-catalog-s3-${lines}-${process.pid}.ndjson`);
  try {
    const bytes = await writeCatalogFile(file, lines);
    const s3Env = {
      REACHKIT_OBJECT_STORAGE: `s3://${bucket.bucket}/bench`,
      REACHKIT_S3_ENDPOINT: bucket.endpoint,
      AWS_ACCESS_KEY_ID: bucket.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: bucket.credentials.secretAccessKey,
    };
    const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const sides: Record<"s3" | "dataDirectory", Array<{ seconds: number; cpuMicrosPerProduct: number; peakRssMB: number; idleRssMB: number }>> = { s3: [], dataDirectory: [] };
    const loadAverages = [load()];
    for (let round = 0; round < rounds; round++) {
      for (const [side, env] of [["dataDirectory", {}], ["s3", s3Env]] as const) {
        const { result, peakRssMB, idleRssMB } = await withServer((upload) => upload(file), env);
        if (result.status !== "completed" || result.productsProcessed !== lines) throw new Error(`${side}: the upload ended ${result.status} with ${result.productsProcessed} of ${lines} products`);
        sides[side].push({ seconds: result.seconds, cpuMicrosPerProduct: Math.round((result.cpuSeconds * 1e6) / lines), peakRssMB, idleRssMB });
      }
      loadAverages.push(load());
    }
    report("catalog-s3", {
      lines,
      fileMB: Math.round(bytes / MB),
      s3: { median: median(sides.s3, (run) => run.peakRssMB), rounds: sides.s3 },
      dataDirectory: { median: median(sides.dataDirectory, (run) => run.peakRssMB), rounds: sides.dataDirectory },
      loadAverages,
    });
  } finally {
    rmSync(file, { force: true });
    await bucket.close();
  }
}

const args = process.argv.slice(2);
if (args[0] === "degenerate") await degenerate(Number(args[1] ?? 20));
else if (args[0] === "s3") await s3(Number(args[1] ?? 100_000));
else await throughput(args.length > 0 ? args.map(Number) : [100_000, 1_000_000]);
