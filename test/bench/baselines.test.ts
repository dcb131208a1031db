// The benchmarks' baselines must do reachkit's work by the fastest plain means: the same rows with the same
// indexed columns, read through the same indexes (bench/servers/baseline-sql.ts).
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { fakeClock } from "../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { bareHandlers } from "../../bench/servers/bare-handlers.ts";
import { bareSubscriptions } from "../../bench/servers/bare-subscription-handlers.ts";
import { indexedStatement } from "../../bench/servers/baseline-sql.ts";
import { startServerProcess, stopServerProcess } from "../../bench/support.ts";
import { createServerKit, serverPlugins } from "../../server/server-kit.ts";
import { createReachkit, silentLogger } from "../../src/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { TEST_SECRET } from "../support/test-kit.ts";

const PHONE = "+15555550123";

/** A self-hosted data directory with one company, as the benchmarks prepare it. */
async function benchData(): Promise<{ dataDir: string; file: string; apiKey: string; companyId: string }> {
  const dataDir = temporaryDirectory("bench-baselines");
  const setup = createServerKit({ dataDir, publicUrl: "http://localhost", secret: TEST_SECRET, logger: silentLogger() });
  await setup.start({ runJobs: false });
  const { output, company } = await setup.provisionCompany({ name: "Bench Co" });
  await setup.stop();
  return { dataDir, file: join(dataDir, "reachkit.db"), apiKey: output.apiKey as string, companyId: company.id };
}

describe("bench baselines", () => {
  it("refuse a statement that reads a whole table (a filter on json_extract of an indexed field), and take the indexed column", async () => {
    const { file } = await benchData();
    const db = new Database(file, { readonly: true });
    assert.throws(
      () => indexedStatement(db, "SELECT doc FROM accounts_credentials WHERE json_extract(doc, '$.tokenHash') = ?"),
      /a baseline statement reads a whole table or index \(SCAN accounts_credentials\)/,
    );
    assert.throws(() => indexedStatement(db, `SELECT doc FROM subscriptions_subscriptions WHERE "f_address" = ?`), /reads a whole table or index/);
    indexedStatement(db, `SELECT doc FROM accounts_credentials WHERE "f_tokenHash" = ?`);
    db.close();
  });

  it("prepare every statement of the bare handlers through an index", async () => {
    const { dataDir, file } = await benchData();
    const handlers = bareHandlers(dataDir);
    assert.deepEqual(Object.keys(handlers), ["/v1/me", "/v1/subscriptions"]);
    const db = new Database(file);
    bareSubscriptions(db);
    db.close();
  });

  it("start every bare server of the benchmarks (each checks its statements before it listens)", async () => {
    const { dataDir } = await benchData();
    const env = { BENCH_DATA_DIR: dataDir, BENCH_SECRET: TEST_SECRET, BENCH_API_KEY: "rk_bench" };
    for (const script of ["bare-server.ts", "bare-subscriptions.ts", "bare-install-page.ts", "bare-events.ts"]) {
      const server = await startServerProcess(join(import.meta.dirname, "../../bench/servers", script), env);
      assert.ok(server.port > 0, script);
      await stopServerProcess(server.child);
    }
  });

  it("the bare opt-in writes the job row reachkit writes: each indexed column as reachkit fills it, and reachkit's job runner processes it", async () => {
    const { file, apiKey, companyId } = await benchData();
    const db = new Database(file);
    const answer = bareSubscriptions(db).optIn(`Bearer ${apiKey}`, { user: { phone: PHONE }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" });
    assert.equal(answer.status, 202);
    const columns = db.prepare(`SELECT name FROM pragma_table_info('reachkit_jobs') WHERE name LIKE 'f\\_%' ESCAPE '\\'`).pluck().all() as string[];
    assert.deepEqual(columns.sort(), ["f_activeKey", "f_companyId", "f_key", "f_lane", "f_leaseUntil", "f_runAt", "f_status"]);
    for (const column of columns) {
      const path = `$.${column.slice("f_".length)}`;
      const differing = db.prepare(`SELECT count(*) FROM reachkit_jobs WHERE "${column}" IS NOT json_extract(doc, ?) OR typeof("${column}") != typeof(json_extract(doc, ?))`).pluck();
      assert.equal(differing.get(path, path), 0, column);
    }
    db.close();

    const clock = fakeClock(new Date(Date.now() + 60_000));
    const scheduler = manualScheduler(clock);
    const kit = createReachkit({
      storage: sqliteStorage({ filename: file }),
      scheduler,
      clock,
      objectStorage: memoryObjectStorage({ clock }),
      logger: silentLogger(),
      secret: TEST_SECRET,
      plugins: serverPlugins(),
    });
    await kit.start();
    await scheduler.flush();
    const subscriptions = await kit.plugin("subscriptions").subscriptions(companyId, { phone: PHONE });
    assert.deepEqual(subscriptions.map((s) => [s.type, s.channel, s.state]), [["MARKETING", "TEXT", "pending"]]);
    await kit.stop();
  });
});
