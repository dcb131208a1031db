import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { TestKit } from "../../support/test-kit.ts";
import { CONSOLE_REQUESTS, consoleFixture, SESSION_ROUTES, type ConsoleFixture } from "./requests.ts";
import { ConsoleBrowser, PASSWORD, signedIn, startConsoleKit } from "./support.ts";

/** Routes whose request names one of A's records: B gets exactly what a record nobody has gets, a 404. */
const NAMES_A_RECORD = [
  "GET /console/subscriber",
  "GET /console/journeys/:journeyId",
  "POST /console/journeys/:journeyId/pause",
  "POST /console/journeys/:journeyId/resume",
  "POST /console/journeys/:journeyId/delete",
  "GET /console/campaigns/:campaignId",
  "POST /console/campaigns/:campaignId/send",
  "POST /console/campaigns/:campaignId/cancel",
  "GET /console/segments/:segmentId",
  "POST /console/webhooks",
  "GET /console/webhooks/:webhookId",
  "POST /console/webhooks/:webhookId/disable",
  "POST /console/webhooks/:webhookId/enable",
  "POST /console/webhooks/:webhookId/delete",
  "POST /console/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
  "POST /console/webhooks/signing-keys/:applicationId/rotate",
  "GET /console/catalog/uploads/:uploadId",
  "GET /console/catalog/uploads/:uploadId/progress",
  "GET /console/products/:productId",
  "GET /console/reminders/:uuid",
  "POST /console/reminders/:uuid/cancel",
  "POST /console/reminders/:uuid/no-show",
  "POST /console/settings/api-keys/:credentialId/revoke",
  "POST /console/settings/oauth-apps/:applicationId/rotate-secret",
  "POST /console/settings/users/:userId/role",
  "POST /console/settings/users/:userId/delete",
];

const B_OWNER = "owner@globex.example";

/**
 * DESIGN §8 for the console: a user of company B walks every page and action
 * of the console with company A's ids, phones and emails. Each record of A
 * answers 404, as a record nobody has; no page shows anything of A; and A's
 * records are as they were afterwards.
 */
describe("console tenancy: company B's user on company A's ids", () => {
  let t: TestKit;
  let a: ConsoleFixture;
  let b: ConsoleBrowser;
  /** Everything of A that could leak into a page. */
  let secrets: string[];

  async function aSnapshot() {
    const kit = t.kit;
    const companyId = a.world.companyId;
    const webhooks = kit.plugin("webhooks");
    return {
      reminders: (await kit.plugin("appointments").reminders.list(companyId, { limit: 1000 })).map((reminder) => [reminder.uuid, reminder.state]).sort(),
      credentials: (await kit.plugin("accounts").listCredentials(companyId)).map((credential) => [credential.id, credential.revokedAt ?? null]).sort(),
      oauthApps: await kit.plugin("oauth").applications.list(companyId),
      users: (await kit.plugin("oauth").users.list(companyId)).map((user) => [user.id, user.role]).sort(),
      uploads: await kit.plugin("catalog").listUploads(companyId),
      privacy: (await kit.plugin("privacy").list(companyId)).length,
      company: await kit.plugin("accounts").getCompany(companyId),
      units: (await kit.plugin("subscriptions").signUpUnits.list(companyId)).length,
      prefix: await kit.plugin("legacy").prefixes.template(companyId),
      journeys: (await kit.plugin("journeys").list(companyId)).map((journey) => [journey.id, journey.status]).sort(),
      sendRules: await kit.plugin("sendRules").policies.get(companyId),
      campaigns: (await kit.plugin("campaigns").list(companyId)).map((campaign) => [campaign.id, campaign.status]).sort(),
      webhooks: await Promise.all((await webhooks.registry.ofCompany(companyId)).map(async (webhook) => [webhook, await webhooks.deliveries.log(webhook.id)])),
      signingKeys: await webhooks.signingKeys.list(await a.application()),
    };
  }

  before(async () => {
    t = await startConsoleKit();
    a = await consoleFixture(t);
    const globex = (await t.kit.provisionCompany({ name: "Globex" })).output as { companyId: string; apiKey: string; legacyToken: string };
    await consoleFixture(t, globex, { phonePrefix: "+1415555", emailDomain: "globex.example" });
    await t.kit.plugin("oauth").users.create({ companyId: globex.companyId, email: B_OWNER, password: PASSWORD });
    b = await signedIn(t.kit, B_OWNER);
    const company = (await t.kit.plugin("accounts").getCompany(a.world.companyId))!;
    const { webhookId, deliveryId } = await a.webhook();
    secrets = [company.name, company.id, ...a.world.phones, ...a.world.emails, a.world.uploadId, a.world.productId, a.world.reminderUuid, a.world.journeyId, webhookId, deliveryId, await a.segment(), await a.application()];
  });
  after(() => t.stop());

  it("answers 404 to every request that names a record of A, as for a record nobody has, and shows nothing of A on any page", async () => {
    // Made first: the fixture makes fresh reminders, keys and users of A for some requests.
    const requests = [];
    for (const [key, make] of Object.entries(CONSOLE_REQUESTS)) if (!SESSION_ROUTES.includes(key)) requests.push([key, await make(a)] as const);
    await t.scheduler.flush();
    const before_ = await aSnapshot();
    let walked = 0;
    for (const [key, request] of requests) {
      const answer = request.method === "GET" ? await b.get(request.url) : await b.act(request.url, request.fields);
      walked++;
      if (NAMES_A_RECORD.includes(key)) assert.equal(answer.status, 404, `${key}: ${answer.status} ${answer.body.slice(0, 200)}`);
      else assert.ok(answer.status < 500, `${key}: ${answer.status}`);
      const pages = [answer.body];
      // Where B was sent next: the page B sees after the action.
      if (answer.status === 303 && answer.headers.location?.startsWith("/console")) pages.push((await b.get(answer.headers.location)).body);
      for (const page of pages) for (const secret of secrets) assert.ok(!page.includes(secret), `${key} shows A's ${secret}`);
    }
    assert.equal(walked, Object.keys(CONSOLE_REQUESTS).length - SESSION_ROUTES.length, "every route but sign-in, sign-out and the files");
    await t.scheduler.flush();
    assert.deepEqual(await aSnapshot(), before_);
  });

  it("finds none of A's subscribers or texts by A's phone, email or subscriber id", async () => {
    const aSubscriber = await t.kit.plugin("subscriptions").findSubscriber(a.world.companyId, { phone: a.world.phones[0] });
    for (const url of [
      `/console/subscribers?q=${encodeURIComponent(a.world.phones[0]!)}`,
      `/console/subscribers?q=${encodeURIComponent(a.world.emails[0]!)}`,
      `/console/subscribers?q=${aSubscriber!.id}`,
      `/console/messages?to=${encodeURIComponent(a.world.phones[0]!)}`,
      `/console/reminders?phone=${encodeURIComponent(a.world.phones[0]!)}`,
    ]) {
      const page = await b.get(url);
      assert.equal(page.status, 200);
      assert.match(page.body, /Nobody matches|No (messages|reminders) match/, url);
      // The search box shows what was searched; nothing else of A may show.
      const shown = page.body.replace(/ value="[^"]*"/g, "");
      for (const secret of secrets) assert.ok(!shown.includes(secret), `${url} shows A's ${secret}`);
    }
    assert.equal((await b.get(`/console/subscriber?email=${encodeURIComponent(a.world.emails[1]!)}`)).status, 404);
  });

  it("keeps B's own pages B's: its subscribers and messages, its company's name", async () => {
    const page = await b.get("/console/subscribers");
    assert.ok(page.body.includes("+14155550100") && page.body.includes("Globex"));
    const messages = await b.get("/console/messages");
    assert.ok(messages.body.includes("+14155550100"));
  });
});
