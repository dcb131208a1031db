import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { prepareTemplate } from "../support/test-storage.ts";

/**
 * The subscriptions, catalog, appointments, profiles, send-rules and journeys suites, unchanged, on the
 * PostgreSQL storage adapter: their test kits pick it up from
 * REACHKIT_TEST_STORAGE. One cluster serves them all: a database per kit, copied
 * from a template that holds every collection.
 */
const SUITES = ["subscriptions", "catalog", "appointments", "profiles", "send-rules", "journeys"];
const root = join(import.meta.dirname, "..", "..");

let cluster: PostgresCluster;
let url: string;
before(async () => {
  cluster = await startPostgres();
  url = await prepareTemplate(await cluster.createDatabase());
});
after(() => cluster.stop());

/**
 * The suites' budget. They took 6 minutes at a load of 9 on two cores; at loads of 25 to 35 (the machine shared
 * with other test runs) three times that, so 10 minutes failed runs that were only slow.
 */
const BUDGET_MS = 30 * 60_000;

it(`the ${SUITES.join(", ")} suites pass on PostgreSQL`, { timeout: BUDGET_MS + 60_000 }, async () => {
  // One test runner for all of them, so that both of its workers stay busy up to the last file.
  const files = SUITES.flatMap((suite) => {
    const directory = join("test", "plugins", suite);
    return readdirSync(join(root, directory))
      .filter((file) => file.endsWith(".test.ts"))
      .sort()
      .map((file) => join(directory, file));
  });
  // Without NODE_TEST_CONTEXT (set for this file by the runner) the child is a test runner of its own.
  const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
  // A process group of its own: the runner and its test processes end together when the budget runs out. Left
  // running, they outlived the cluster that `after` stops, failed, and one of them, kept alive by a server it
  // never closed, stayed up for good.
  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files], {
    cwd: root,
    env: { ...env, REACHKIT_TEST_STORAGE: "postgres", REACHKIT_TEST_DATABASE_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const endGroup = () => {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let outOfTime = false;
  const budget = setTimeout(() => {
    outOfTime = true;
    endGroup();
  }, BUDGET_MS);
  let code: number | null;
  try {
    code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  } finally {
    clearTimeout(budget);
    endGroup();
  }
  assert.ok(!outOfTime, `the suites ran past ${BUDGET_MS / 60_000} minutes; what they printed last:\n${output.slice(-20_000)}`);
  assert.equal(code, 0, `a suite failed on PostgreSQL:\n${output.slice(-20_000)}`);
  // Proof that every file ran: the spec reporter names each file's top-level suite as it passes.
  const summary = /^ℹ tests (\d+)$/m.exec(output);
  assert.ok(summary && Number(summary[1]) > 0, "tests ran");
  assert.match(output, /^ℹ fail 0$/m);
});
