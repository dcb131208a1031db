import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { WEBHOOKS, type WebhookRecord } from "../../../plugins/webhooks/index.ts";
import { cli, newDataDir, openServerKit } from "../../support/cli.ts";
import { Receiver } from "./support.ts";

describe("webhooks CLI", () => {
  let receiving: Receiver;
  after(() => receiving?.close());

  it("init shows the signing key once; signing-key makes a new one with an overlap; deliveries shows the log; redeliver sends again with the same webhook-id", async () => {
    const dataDir = newDataDir();
    const init = (await cli(dataDir, "init", "--company", "Acme", "--json")).json;
    assert.match(init.webhookSigningKey, /^whsec_[A-Za-z0-9+/]{43}=$/);
    receiving = await Receiver.start(init.webhookSigningKey);
    const kit = await openServerKit(dataDir);
    // The CLI's kit refuses private targets like the server's: the webhook is written as the registry would.
    const applicationId = (await kit.plugin("accounts").listApplications(init.companyId))[0]!.id;
    await kit.storage.collection<WebhookRecord>(WEBHOOKS).insert({ id: "w1", companyId: init.companyId, applicationId, credentialKind: "api_key", url: "https://hooks.example/x", events: ["sms.subscribed"], createdAt: 0, updatedAt: 0 });
    await kit.plugin("subscriptions").optInNow(init.companyId, { user: { phone: "+19148440001" }, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true });
    const [delivery] = await kit.plugin("webhooks").deliveries.log("w1");
    assert.equal(delivery!.status, "pending", "queued for the server's job runner");
    await kit.stop();

    const listed = await cli(dataDir, "webhooks", "list", "--company", init.companyId);
    assert.match(listed.stdout, /w1 .*https:\/\/hooks\.example\/x .*sms\.subscribed/);
    const log = await cli(dataDir, "webhooks", "deliveries", "--webhook", "w1");
    assert.match(log.stdout, new RegExp(`${delivery!.id}\\s+sms\\.subscribed\\s+pending\\s+0`));
    assert.equal((await cli(dataDir, "webhooks", "deliveries", "--webhook", "nope")).code, 2);
    assert.equal((await cli(dataDir, "webhooks", "deliveries", "--webhook", "w1", "--status", "lost")).code, 2);

    const rotated = await cli(dataDir, "webhooks", "signing-key", "--application", applicationId, "--overlap-hours", "2", "--json");
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual(rotated.json.signingKey, init.webhookSigningKey);
    assert.equal(rotated.json.previousKeysSignUntil.length, 1);
    assert.equal((await cli(dataDir, "webhooks", "signing-key", "--application", "nope")).code, 2);
    assert.equal((await cli(dataDir, "webhooks", "signing-key", "--application", applicationId, "--overlap-hours", "721")).code, 2);
    const text = await cli(dataDir, "webhooks", "signing-key", "--application", applicationId, "--overlap-hours", "0");
    assert.match(text.stdout, /signingKey: +whsec_.*\nThe signing key is shown once: store it now\./s);
    const newest = /signingKey: +(\S+)/.exec(text.stdout)![1]!;

    // The delivery's URL refuses: redeliver reports the failure and leaves it pending.
    const refused = await cli(dataDir, "webhooks", "redeliver", "--delivery", delivery!.id);
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /status: +pending/);
    assert.match(refused.stdout, /error: +ENOTFOUND/);
    assert.equal((await cli(dataDir, "webhooks", "redeliver", "--delivery", "msg_nope")).code, 2);

    // With private targets allowed (REACHKIT_WEBHOOKS_ALLOW_PRIVATE=true), to a receiver on this machine.
    process.env.REACHKIT_WEBHOOKS_ALLOW_PRIVATE = "true";
    try {
      const local = await openServerKit(dataDir);
      await local.storage.collection<WebhookRecord>(WEBHOOKS).update("w1", { url: receiving.url });
      await local.stop();
      receiving.signingKey = newest;
      const sent = await cli(dataDir, "webhooks", "redeliver", "--delivery", delivery!.id, "--json");
      assert.equal(sent.code, 0, sent.stdout + sent.stderr);
      assert.deepEqual([sent.json.status, sent.json.attempts, sent.json.responseStatus], ["delivered", 2, 200]);
      assert.equal(receiving.requests.length, 1);
      assert.equal(receiving.requests[0]!.headers["webhook-id"], delivery!.id);
      assert.ok(receiving.hmacMatches(receiving.requests[0]!));
    } finally {
      delete process.env.REACHKIT_WEBHOOKS_ALLOW_PRIVATE;
    }
  });
});
