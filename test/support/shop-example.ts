import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configFromEnv, type ServerConfig } from "../../server/config.ts";
import type { RunningExample } from "../../examples/shared/embedded.ts";
import { startExampleProcess } from "./example-process.ts";
import { TEST_SECRET } from "./test-kit.ts";
import { temporaryDirectory } from "./temp-dir.ts";

/** The smoke test of an embedding example: the shop's own routes and reachkit under /reachkit, in process and through its npm script's entry. */
export function shopExampleSmokeTest(framework: string, start: (config: ServerConfig, print: (text: string) => void) => Promise<RunningExample>, entry: string): void {
  describe(`${framework} embedding example`, () => {
    it("serves the shop's own routes beside reachkit's, each with its own body parsing", async () => {
      let printed = "";
      const dataDir = temporaryDirectory(framework);
      const running = await start(configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir }), (text) => void (printed += text));
      try {
        const apiKey = /apiKey:\s+(\S+)/.exec(printed)?.[1];
        assert.ok(apiKey, printed);
        const home = await fetch(`${running.url}/`);
        assert.equal(home.status, 200);
        assert.match(await home.text(), /Corner Shop/);
        assert.equal(((await (await fetch(`${running.url}/api/products`)).json()) as unknown[]).length, 2);
        const order = await fetch(`${running.url}/api/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"sku":"mug","quantity":2}' });
        assert.equal(order.status, 201);
        assert.deepEqual(await order.json(), { sku: "mug", quantity: 2, totalCents: 2400 });
        const badOrder = await fetch(`${running.url}/api/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"sku":"mug","quantity":0}' });
        assert.equal(badOrder.status, 400);

        const me = await fetch(`${running.url}/reachkit/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
        assert.equal(me.status, 200);
        assert.equal(me.headers.get("content-type"), "application/json");
        assert.equal(((await me.json()) as { companyName: string }).companyName, "My Company");
        const refused = await fetch(`${running.url}/reachkit/v1/me`);
        assert.equal(refused.status, 401);
        assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "unauthorized");
        assert.equal((await fetch(`${running.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } })).status, 404);

        // The webhook URL printed at first start is where the provider must call: under the mount prefix.
        const webhookUrl = /inboundWebhookUrl:\s+(\S+)/.exec(printed)?.[1] ?? "";
        assert.match(webhookUrl, /^http:\/\/localhost:\d+\/reachkit\/sms\/inbound\/[\w-]+$/, printed);
        const inbound = await fetch(`${running.url}${new URL(webhookUrl).pathname}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ From: "+19148440001", To: /senderNumber:\s+(\S+)/.exec(printed)![1]!, Body: "HELP" }).toString(),
        });
        assert.equal(inbound.status, 200, await inbound.clone().text());
      } finally {
        await running.close();
      }
    });

    it(`runs from its npm script's entry point (${entry}) and stops gracefully on SIGTERM`, async () => {
      const dataDir = temporaryDirectory(framework);
      const server = await startExampleProcess(entry, { REACHKIT_DATA_DIR: dataDir, REACHKIT_SECRET: TEST_SECRET });
      const base = `http://localhost:${server.port}`;
      assert.equal((await fetch(`${base}/api/products`)).status, 200);
      assert.equal((await fetch(`${base}/reachkit/v1/me`, { headers: { authorization: `Bearer ${server.apiKey}` } })).status, 200);
      assert.equal(await server.stop(), 0);
      assert.ok(server.logs.some((line) => line.msg === "stopped"));
    });
  });
}
