import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { startPostgres, type PostgresCluster } from "../support/postgres.ts";
import { prepareTemplate } from "../support/test-storage.ts";

/**
 * The subscriptions, catalog and appointments suites, unchanged, on the
 * PostgreSQL storage adapter: their test kits pick it up from
 * REACHKIT_TEST_STORAGE. One cluster serves them all: a database per kit, copied
 * from a template that holds every collection.
 */
const SUITES = ["subscriptions", "catalog", "appointments"];
const root = join(import.meta.dirname, "..", "..");

let cluster: PostgresCluster;
let url: string;
before(async () => {
  cluster = await startPostgres();
  url = await prepareTemplate(await cluster.createDatabase());
});
after(() => cluster.stop());

for (const suite of SUITES) {
  it(`the ${suite} suite passes on PostgreSQL`, { timeout: 240_000 }, async () => {
    const directory = join("test", "plugins", suite);
    const files = readdirSync(join(root, directory))
      .filter((file) => file.endsWith(".test.ts"))
      .sort()
      .map((file) => join(directory, file));
    // Without NODE_TEST_CONTEXT (set for this file by the runner) the child is a test runner of its own.
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=dot", ...files], {
      cwd: root,
      env: { ...env, REACHKIT_TEST_STORAGE: "postgres", REACHKIT_TEST_DATABASE_URL: url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0, `the ${suite} suite failed on PostgreSQL:\n${output.slice(-20_000)}`);
    // The dot reporter prints one character per test: proof that the suite ran at all.
    assert.match(output, /\./);
  });
}
