import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { nodeHttpServer } from "../../adapters/http/node/index.ts";
import { nodeScheduleScheduler } from "../../adapters/scheduler/node-schedule/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { accountsPlugin } from "../../plugins/accounts/index.ts";
import { subscriptionsPlugin } from "../../plugins/subscriptions/index.ts";
import { createReachkit, definePlugin, silentLogger, type Reachkit } from "../../src/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { TEST_SECRET } from "../support/test-kit.ts";

/** Jobs that each queue the next, due at once: a backlog that never drains while the test runs. */
const CHAINS = 64;
const REQUESTS = 10;

/**
 * A kit on SQLite and the real scheduler whose runner always has due jobs, each queueing another (as an opt-in
 * queues its text): the HTTP server must keep answering, reads and writes, over a real socket, and a job of
 * another type due meanwhile must run. A runner that kept the event loop or the storage to itself while a
 * backlog lasted would leave these unanswered (the test then fails on its timeout).
 */
describe("a steady backlog of jobs", () => {
  for (const batchSize of [1, 32]) {
    it(`leaves the HTTP server answering reads and writes, and runs a job due meanwhile (jobs in batches of ${batchSize})`, { timeout: 120_000 }, async (t) => {
      let kit: Reachkit | undefined;
      let done = 0;
      let doneWhenPinged: number | undefined;
      kit = createReachkit({
        storage: sqliteStorage({ filename: join(temporaryDirectory("backlog-serving"), "db.sqlite") }),
        scheduler: nodeScheduleScheduler(),
        sms: memorySms(),
        logger: silentLogger(),
        secret: TEST_SECRET,
        plugins: [
          accountsPlugin(),
          subscriptionsPlugin(),
          definePlugin({
            name: "test-chain",
            jobs: () => ({
              chain: {
                batchSize,
                handler: async (link: number) => {
                  await kit!.jobs.enqueue({ type: "chain", payload: link + 1 });
                  done++;
                },
              },
              // A job of another type, due a moment later: it must run while the chains go on (they go on after it).
              ping: async () => {
                doneWhenPinged = done;
              },
            }),
          }),
        ],
      });
      await kit.start();
      const { apiKey } = (await kit.provisionCompany({ name: "Acme" })).output as { apiKey: string };
      const server = nodeHttpServer(kit);
      const { port } = await server.listen(0, "127.0.0.1");
      const base = `http://127.0.0.1:${port}`;
      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
      // Closed after the test even when it times out: a kit left running would keep its chains going, and the test's process alive.
      t.after(() => server.close());
      await kit.storage.transaction(async () => {
        for (let i = 0; i < CHAINS; i++) await kit!.jobs.enqueue({ type: "chain", payload: 0 });
      });
      const doneBefore = await waitForJobs(() => done, 1, t.signal);
      await kit.jobs.enqueue({ type: "ping", payload: 0, runAt: Date.now() + 50 });
      for (let i = 0; i < REQUESTS; i++) {
        assert.equal((await fetch(`${base}/v1/me`, { headers })).status, 200, `read ${i}`);
        const optIn = await fetch(`${base}/v1/subscriptions`, {
          method: "POST",
          headers,
          body: JSON.stringify({ user: { phone: `+1914844${String(1000 + i)}` }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING" }),
        });
        assert.equal(optIn.status, 202, `write ${i}`);
      }
      const doneAfterRequests = done;
      assert.ok(doneAfterRequests > doneBefore, "the backlog was being worked while the requests were answered");
      await waitForJobs(() => (doneWhenPinged === undefined ? 0 : 1), 1, t.signal);
      // Still worked after the last request and the ping: they were served while it lasted, not once it was gone.
      await waitForJobs(() => done, Math.max(doneAfterRequests, doneWhenPinged!) + 1, t.signal);
    });
  }
});

/** Resolves with the count once it reaches `least`, without a timing assertion: the test's timeout bounds it (its signal ends the wait). */
async function waitForJobs(count: () => number, least: number, signal: AbortSignal): Promise<number> {
  while (count() < least) {
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return count();
}
