import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { smtpEmail } from "../../../adapters/email/smtp/index.ts";
import type { SubscriptionEvent } from "../../../plugins/subscriptions/index.ts";
import { startSmtpServer } from "../../support/smtp-server.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { EMAIL, eligibilityRows, optIn } from "./support.ts";

const newsletter = { to: EMAIL, type: "MARKETING" as const, subject: "Spring sale", text: "Everything 20% off", html: "<p>Everything 20% off</p>" };

/** An active MARKETING and TRANSACTIONAL email subscription of EMAIL at Acme. */
async function subscribed(t: TestKit): Promise<void> {
  await optIn(t, { user: { email: EMAIL } });
  await optIn(t, { user: { email: EMAIL }, subscriptionType: "TRANSACTIONAL" });
  await t.scheduler.flush();
}

/** The path and query of a List-Unsubscribe header's URL. */
const pathOf = (header: string | undefined) => {
  const url = new URL(/^<(https?:\/\/[^>]+)>$/.exec(header ?? "")![1]!);
  return `${url.pathname}${url.search}`;
};

/** Subscribes EMAIL, sends it the newsletter, and answers the path and query of its one-click link. */
async function newsletterLink(t: TestKit): Promise<string> {
  await subscribed(t);
  await t.kit.plugin("subscriptions").sendEmail(t.company.companyId, newsletter);
  await t.scheduler.flush();
  return pathOf(t.email.sent[0]!.headers!["List-Unsubscribe"]);
}

const ONE_CLICK = { "content-type": "application/x-www-form-urlencoded" };

describe("subscriber emails and one-click unsubscribe (RFC 8058)", () => {
  it("sends only to an active subscription of the type, with List-Unsubscribe and List-Unsubscribe-Post", async () => {
    const t = await startTestKit();
    const service = t.kit.plugin("subscriptions");
    assert.equal(await service.sendEmail(t.company.companyId, newsletter), undefined);
    await subscribed(t);
    const queued = await service.sendEmail(t.company.companyId, { ...newsletter, to: " Ada@Example.com " });
    assert.equal(queued?.kind, "marketing");
    await t.scheduler.flush();
    const [sent] = t.email.sent;
    assert.equal(sent!.to, EMAIL);
    assert.equal(sent!.headers!["List-Unsubscribe-Post"], "List-Unsubscribe=One-Click");
    assert.match(sent!.headers!["List-Unsubscribe"]!, /^<http:\/\/localhost:3000\/email\/unsubscribe\?token=[\w-]+\.[\w-]+>$/);
    await t.stop();
  });

  it("unsubscribes the address from that type at once on the one-click POST, and answers a repeat alike", async () => {
    const t = await startTestKit();
    const unsubscribed: SubscriptionEvent[] = [];
    t.kit.events.on("subscription.unsubscribed", (event) => void unsubscribed.push(event));
    const link = await newsletterLink(t);
    const response = await t.request({ method: "POST", url: link, headers: ONE_CLICK, body: "List-Unsubscribe=One-Click", token: null });
    assert.equal(response.status, 200);
    assert.match(response.body, /Unsubscribed/);
    // No job to wait for: the change is made before the answer.
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [
      ["MARKETING", "EMAIL", false],
      ["TRANSACTIONAL", "EMAIL", true],
    ]);
    assert.deepEqual(
      unsubscribed.map((event) => [event.type, event.channel, event.address]),
      [["MARKETING", "EMAIL", EMAIL]],
    );
    const changes = await t.kit.plugin("subscriptions").changes(t.company.companyId, { email: EMAIL });
    assert.deepEqual(changes.at(-1) && [changes.at(-1)!.action, changes.at(-1)!.source], ["unsubscribed", "email_one_click"]);
    assert.equal((await t.request({ method: "POST", url: link, headers: ONE_CLICK, body: "List-Unsubscribe=One-Click", token: null })).status, 200);
    assert.equal(unsubscribed.length, 1);
    assert.equal(await t.kit.plugin("subscriptions").sendEmail(t.company.companyId, newsletter), undefined, "no email after the unsubscribe");
    await t.stop();
  });

  it("takes the POST as a multipart form too (the RFC's own example)", async () => {
    const t = await startTestKit();
    const link = await newsletterLink(t);
    const boundary = "---FormBoundaryjWmhtjORrn";
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
    const response = await t.request({
      method: "POST",
      url: link,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      token: null,
    });
    assert.equal(response.status, 200);
    assert.deepEqual((await eligibilityRows(t, `email=${EMAIL}`))[0], ["MARKETING", "EMAIL", false]);
    await t.stop();
  });

  it("shows a page with a button on a GET of the link, and changes nothing", async () => {
    const t = await startTestKit();
    const link = await newsletterLink(t);
    const page = await t.request({ url: link, token: null });
    assert.equal(page.status, 200);
    assert.match(page.headers["content-type"] ?? "", /text\/html/);
    assert.match(page.body, /Stop emails from Acme to ada@example\.com\?/);
    const action = /<form method="post" action="([^"]+)">/.exec(page.body)![1]!;
    assert.equal(new URL(action.replaceAll("&#38;", "&"), `http://kit${link}`).toString(), `http://kit${link}`);
    assert.match(page.body, /<input type="hidden" name="List-Unsubscribe" value="One-Click">/);
    assert.deepEqual((await eligibilityRows(t, `email=${EMAIL}`))[0], ["MARKETING", "EMAIL", true]);
    await t.stop();
  });

  it("answers an altered link, or one whose company was changed, with a 400 page and unsubscribes nobody", async () => {
    const t = await startTestKit();
    const token = new URL(await newsletterLink(t), "http://kit").searchParams.get("token")!;
    const [payload, signature] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    const forged = [
      `${Buffer.from(JSON.stringify({ ...claims, c: "another-company" })).toString("base64url")}.${signature}`,
      `${Buffer.from(JSON.stringify({ ...claims, t: "TRANSACTIONAL" })).toString("base64url")}.${signature}`,
      `${payload}.${signature.slice(1)}`,
      "garbage",
    ];
    for (const value of forged) {
      for (const method of ["GET", "POST"]) {
        const response = await t.request({ method, url: `/email/unsubscribe?token=${encodeURIComponent(value)}`, headers: ONE_CLICK, body: method === "POST" ? "List-Unsubscribe=One-Click" : undefined, token: null });
        assert.equal(response.status, 400, `${method} ${value}`);
        assert.match(response.body, /This link is not valid/);
      }
    }
    assert.deepEqual(await eligibilityRows(t, `email=${EMAIL}`), [
      ["MARKETING", "EMAIL", true],
      ["TRANSACTIONAL", "EMAIL", true],
    ]);
    await t.stop();
  });

  it("refuses a one-click body larger than 8 KiB (413)", async () => {
    const t = await startTestKit();
    const link = await newsletterLink(t);
    const response = await t.request({ method: "POST", url: link, headers: ONE_CLICK, body: `List-Unsubscribe=One-Click&x=${"a".repeat(9000)}`, token: null });
    assert.equal(response.status, 413);
    assert.deepEqual((await eligibilityRows(t, `email=${EMAIL}`))[0], ["MARKETING", "EMAIL", true]);
    await t.stop();
  });

  it("over real SMTP: the message carries both headers, and a POST to its List-Unsubscribe URL unsubscribes", async () => {
    const server = await startSmtpServer();
    // Closed whatever the kit does: a listening server left open keeps this file's process alive forever, its failures never reported.
    try {
      const t = await startTestKit({ emailSender: smtpEmail({ url: server.url, ca: server.ca }), config: { messaging: { emailFrom: "news@acme.example" } } });
      try {
        await subscribed(t);
        await t.kit.plugin("subscriptions").sendEmail(t.company.companyId, newsletter);
        await t.scheduler.flush();
        const [received] = server.messages;
        assert.deepEqual(received!.envelope, { from: "news@acme.example", to: [EMAIL] });
        assert.equal(received!.subject, "Spring sale");
        assert.equal(received!.text.trim(), "Everything 20% off");
        assert.equal(received!.html?.trim(), "<p>Everything 20% off</p>");
        assert.equal(received!.headers["list-unsubscribe-post"], "List-Unsubscribe=One-Click");
        assert.match(received!.headers["list-unsubscribe"] ?? "", /^<http:\/\/localhost:3000\/email\/unsubscribe\?token=[\w-]+\.[\w-]+>$/);
        const response = await t.request({ method: "POST", url: pathOf(received!.headers["list-unsubscribe"]), headers: ONE_CLICK, body: "List-Unsubscribe=One-Click", token: null });
        assert.equal(response.status, 200);
        assert.deepEqual((await eligibilityRows(t, `email=${EMAIL}`))[0], ["MARKETING", "EMAIL", false]);
      } finally {
        await t.stop();
      }
    } finally {
      await server.close();
    }
  });
});
