import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { afterEach, it } from "node:test";
import { memoryStorage } from "../../../adapters/storage/memory/index.ts";
import type { Storage } from "../../../src/index.ts";
import { wrapStorage } from "../../support/storage-wrappers.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

/** `storage`, logging after each outermost commit how many clicks are stored: what a kill -9 right then would leave. */
function loggingCommits(storage: Storage, log: string[]): Storage {
  const nested = new AsyncLocalStorage<true>();
  return wrapStorage(storage, {
    async transaction(fn) {
      if (nested.getStore()) return storage.transaction(fn);
      const result = await storage.transaction(() => nested.run(true, fn));
      log.push(`commit ${await storage.collection("campaigns_clicks").count()}`);
      return result;
    },
  });
}

let t: CampaignsTestKit;
afterEach(() => t.stop());

it("clicks arriving at once share one commit, and each redirect is answered only once its click is committed", async () => {
  const log: string[] = [];
  t = await startCampaignsKit({ storage: loggingCommits(memoryStorage(), log) });
  const codes: string[] = [];
  for (let i = 0; i < 5; i++) codes.push((await t.ok("POST", "/v1/short-links", { url: `https://shop.example.com/item/${i}` }, 201)).code);

  log.length = 0;
  const answers = await Promise.all(
    codes.map(async (code) => {
      const answer = await t.request({ url: `/l/${code}`, token: null });
      log.push("answer");
      return [answer.status, answer.headers.location];
    }),
  );
  assert.deepEqual(answers, codes.map((_, i) => [302, `https://shop.example.com/item/${i}`]));
  assert.deepEqual(log, ["commit 5", "answer", "answer", "answer", "answer", "answer"]);
});
