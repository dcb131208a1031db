import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fakeClock } from "../../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../../adapters/sms/memory/index.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { serverPlugins } from "../../../server/server-kit.ts";
import { createReachkit, silentLogger } from "../../../src/index.ts";
import { cli, newDataDir } from "../../support/cli.ts";
import { TEST_SECRET, type Json } from "../../support/test-kit.ts";
import { PHONE } from "./support.ts";

/** Opts PHONE in at a company of the data directory and runs the jobs, as the server would. */
async function optInAndRunJobs(dataDir: string, companyId: string): Promise<void> {
  const scheduler = manualScheduler(fakeClock("2026-03-01T12:00:00.000Z"));
  const kit = createReachkit({
    storage: sqliteStorage({ filename: join(dataDir, "reachkit.db") }),
    scheduler,
    clock: scheduler.clock,
    sms: memorySms(),
    objectStorage: memoryObjectStorage(),
    logger: silentLogger(),
    secret: TEST_SECRET,
    plugins: serverPlugins(),
  });
  await kit.start();
  await kit.plugin("subscriptions").optIn(companyId, { user: { phone: PHONE }, locale: "en-US", subscriptionType: "MARKETING" });
  await scheduler.flush();
  await kit.stop();
}

describe("subscriptions CLI", () => {
  it("init gives each company a sender number and its inbound webhook path; sender-number set keeps numbers unique", async () => {
    const dataDir = newDataDir();
    const first = (await cli(dataDir, "init", "--company", "First", "--json")).json;
    const second = (await cli(dataDir, "init", "--company", "Second", "--json")).json;
    assert.match(first.senderNumber, /^\+1555\d{7}$/);
    assert.match(first.inboundWebhookPath, /^\/sms\/inbound\/[\w-]{43}$/);
    assert.notEqual(first.inboundWebhookPath, second.inboundWebhookPath);

    const set = await cli(dataDir, "sender-number", "set", "--company", first.companyId, "--number", "+15557654321", "--json");
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(set.json, {
      companyId: first.companyId,
      senderNumber: "+15557654321",
      inboundWebhookPath: first.inboundWebhookPath,
      inboundWebhookUrl: `http://localhost:3000${first.inboundWebhookPath}`,
    });
    const taken = await cli(dataDir, "sender-number", "set", "--company", second.companyId, "--number", "+15557654321");
    assert.equal(taken.code, 2);
    assert.match(taken.stderr, /belongs to another company/);
    assert.equal((await cli(dataDir, "sender-number", "set", "--company", second.companyId, "--number", "hello")).code, 2);
    assert.equal((await cli(dataDir, "sender-number", "show", "--company", second.companyId, "--json")).json.senderNumber, second.senderNumber);
    assert.equal((await cli(dataDir, "sender-number", "show", "--company", "nope")).code, 2);
  });

  it("message-templates set changes the company's wording; outbox list shows the text exactly as sent", async () => {
    const dataDir = newDataDir();
    const company = (await cli(dataDir, "init", "--company", "Acme", "--json")).json;
    const set = await cli(dataDir, "message-templates", "set", "--company", company.companyId, "--locale", "en-US", "--kind", "confirm_request_marketing", "--text", "{company}: reply Y for deals. Msg&data rates may apply. STOP to end.");
    assert.equal(set.code, 0, set.stderr);
    assert.equal((await cli(dataDir, "message-templates", "set", "--company", company.companyId, "--locale", "de-DE", "--kind", "help", "--text", "x")).code, 2);
    assert.equal((await cli(dataDir, "message-templates", "set", "--company", company.companyId, "--locale", "en-US", "--kind", "bogus", "--text", "x")).code, 2);
    const listed = (await cli(dataDir, "message-templates", "list", "--company", company.companyId, "--json")).json;
    assert.equal(listed.length, 18);
    assert.deepEqual(listed.filter((t: Json) => t.custom).map((t: Json) => [t.locale, t.kind]), [["en-US", "confirm_request_marketing"]]);

    await optInAndRunJobs(dataDir, company.companyId);
    const outbox = await cli(dataDir, "outbox", "list", "--to", PHONE, "--json");
    assert.equal(outbox.code, 0, outbox.stderr);
    assert.equal(outbox.json.length, 1);
    const [message] = outbox.json;
    assert.deepEqual(
      [message.companyId, message.to, message.from, message.body, message.mediaUrl, message.kind, message.status],
      [company.companyId, PHONE, company.senderNumber, "Acme: reply Y for deals. Msg&data rates may apply. STOP to end.", null, "confirm_request_marketing", "sent"],
    );
    assert.match(message.createdAt, /^2026-03-01T12:00:00/);
    assert.match(message.sentAt, /^2026-03-01T12:00:00/);
    const text = await cli(dataDir, "outbox", "list", "--to", PHONE);
    assert.match(text.stdout, /sent\s+confirm_request_marketing\s+\+19148440001/);
    assert.match(text.stdout, /\n  Acme: reply Y for deals/);

    const subscriptions = await cli(dataDir, "subscriptions", "list", "--company", company.companyId, "--phone", PHONE, "--json");
    assert.deepEqual(subscriptions.json.subscriptions.map((s: Json) => [s.type, s.channel, s.state]), [["MARKETING", "TEXT", "pending"]]);
    assert.deepEqual(subscriptions.json.changes.map((c: Json) => c.action), ["opt_in"]);
    assert.equal((await cli(dataDir, "subscriptions", "list", "--company", company.companyId)).code, 2);

    const reset = await cli(dataDir, "message-templates", "reset", "--company", company.companyId, "--locale", "en-US", "--kind", "confirm_request_marketing", "--json");
    assert.equal(reset.json.reset, true);
  });
});
