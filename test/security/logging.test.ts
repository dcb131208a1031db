import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fakeClock } from "../../adapters/clock/index.ts";
import { memoryObjectStorage } from "../../adapters/object-storage/memory/index.ts";
import { manualScheduler } from "../../adapters/scheduler/manual/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { memoryStorage } from "../../adapters/storage/memory/index.ts";
import { serverPlugins } from "../../server/server-kit.ts";
import { oauthPlugin } from "../../plugins/oauth/index.ts";
import { createReachkit, jsonLogger, redactLogText, SmsSendError, type LogLevel } from "../../src/index.ts";
import { fastPasswords, InstallClient, REDIRECT_URI } from "../support/oauth.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import type { ProvisionedCompany } from "./support.ts";

/**
 * What the logs may hold (docs/security.md): never a credential at any level;
 * at info level and above, never a full phone number, an email address or a
 * message body. A real workload runs with a JSON logger at debug level and
 * every line is searched.
 */

const PHONE = "+19148440001";
const OTHER_PHONE = "+19148440002";
const EMAIL = "ada.lovelace@example.com";
const MESSAGE_BODY = "Your parcel 7731 left the depot";
const PASSWORD = "correct horse battery";

interface Line {
  level: LogLevel;
  msg: string;
  [field: string]: unknown;
}

async function runWorkload(): Promise<{ lines: Line[]; raw: string[]; secrets: string[] }> {
  const raw: string[] = [];
  const clock = fakeClock("2026-03-01T12:00:00.000Z");
  const sms = memorySms();
  const scheduler = manualScheduler(clock);
  const plugins = serverPlugins().map((plugin) => (plugin.name === "oauth" ? oauthPlugin({ passwordHasher: fastPasswords }) : plugin));
  const kit = createReachkit({
    storage: memoryStorage(),
    scheduler,
    clock,
    sms,
    objectStorage: memoryObjectStorage({ clock }),
    logger: jsonLogger({ level: "debug", write: (line) => void raw.push(line), now: () => clock.now() }),
    secret: TEST_SECRET,
    plugins,
  });
  await kit.start();
  const secrets: string[] = [TEST_SECRET, PASSWORD];
  try {
    const company = (await kit.provisionCompany({ name: "Acme" })).output as unknown as ProvisionedCompany;
    const inboundToken = company.inboundWebhookPath.split("/").pop()!;
    secrets.push(company.apiKey, company.legacyToken, inboundToken);
    const send = (token: string | null, method: string, url: string, body?: unknown, headers: Record<string, string> = {}) =>
      kit.inject({ method, url, body, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });

    await send(company.apiKey, "POST", "/v1/subscriptions", {
      user: { phone: PHONE, email: EMAIL },
      locale: { language: "en", country: "US" },
      subscriptionType: "MARKETING",
    });
    await send(company.apiKey, "GET", `/v1/subscriptions?phone=${encodeURIComponent(PHONE)}&email=${encodeURIComponent(EMAIL)}`);
    await send(company.apiKey, "POST", "/v1/graphql", {
      query: `{ viewer { installedApplication { installerCompany { user(phone: "${PHONE}", email: "${EMAIL}") { phone } } } } }`,
    });
    await send(null, "POST", company.inboundWebhookPath, new URLSearchParams({ From: PHONE, To: company.senderNumber, Body: "YES" }).toString(), {
      "content-type": "application/x-www-form-urlencoded",
    });
    await scheduler.flush();
    await send(company.legacyToken, "POST", "/1/add-subscribers", { phone: OTHER_PHONE, email: EMAIL });
    await send(company.legacyToken, "POST", "/1/messages", { to: OTHER_PHONE, body: MESSAGE_BODY, type: "TRANSACTIONAL" });
    // The provider refuses the archived message, naming the number as providers do: the warning must not carry it.
    sms.failNext(new SmsSendError("invalid_number", `The 'To' number ${OTHER_PHONE} is not a valid mobile number`));
    await send(company.legacyToken, "POST", "/v1/messages", { to: OTHER_PHONE, body: `${MESSAGE_BODY} again` });
    await send("rk_key_not-a-real-token-but-looks-like-one-000000", "GET", "/v1/me");
    await send(company.apiKey, "POST", "/v1/privacy/delete-request", { subjectPhone: PHONE, subjectEmail: EMAIL });
    const upload = (await send(company.apiKey, "POST", "/v1/product-catalog/uploads", {})).json<Json>();
    const uploadUrl = new URL(upload.uploadUrl);
    secrets.push(uploadUrl.searchParams.get("signature")!);
    await send(null, "PUT", `${uploadUrl.pathname}${uploadUrl.search}`, "not json\n");
    const type = (await send(company.legacyToken, "POST", "/events/types", { type: "Haircut" })).json<Json>().uuid;
    await send(company.legacyToken, "POST", "/events/types/messages", { eventType: { uuid: type }, messageType: "CONFIRMATION", text: MESSAGE_BODY });
    await send(company.legacyToken, "POST", "/events/reminders", {
      eventType: { uuid: type },
      phone: PHONE,
      emailAddress: EMAIL,
      eventDateTime: "2026-03-08T15:00:00",
      subscriberTimeZone: "America/New_York",
    });

    // OAuth: a password sign-in, a code, a client secret and an access token.
    const oauth = kit.plugin("oauth");
    const { application, clientSecret } = await oauth.applications.create({
      companyId: company.companyId,
      name: "Shop Sync",
      redirectUris: [REDIRECT_URI],
      scopes: ["subscriptions:read"],
    });
    await oauth.users.create({ companyId: company.companyId, email: "owner@acme.example", password: PASSWORD });
    const client = new InstallClient(kit);
    const installUrl = new URL(oauth.installUrl({ clientId: application.clientId, redirectUri: REDIRECT_URI, state: "s" }));
    const installPath = `${installUrl.pathname}${installUrl.search}`;
    await client.signIn(installPath, "owner@acme.example", "a wrong password");
    await client.signIn(installPath, "owner@acme.example", PASSWORD);
    const { location } = await client.decide(installPath, "authorize");
    const code = location.searchParams.get("code")!;
    const form = new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: application.clientId, client_secret: clientSecret });
    const exchange = await send(null, "POST", "/v1/authorization-codes/tokens", form.toString(), { "content-type": "application/x-www-form-urlencoded" });
    const accessToken = exchange.json<Json>().access_token as string;
    secrets.push(clientSecret, code, accessToken, client.jar.get("rk_session")!);
    await send(accessToken, "GET", "/v1/me");
    await send(accessToken, "GET", `/v1/subscriptions?phone=${encodeURIComponent(PHONE)}`);

    // Every job (opt-in processing, sends, the privacy deletion, the catalog check, reminders) runs and logs.
    await scheduler.advance(10 * 24 * 3_600_000);
  } finally {
    await kit.stop();
  }
  return { lines: raw.map((line) => JSON.parse(line) as Line), raw, secrets };
}

describe("logs", () => {
  it("hold no credential at any level, and no phone number, email or message body at info level or above", async () => {
    const { lines, raw, secrets } = await runWorkload();
    // The workload must have logged: every request at info, the failed send at warn.
    assert.ok(lines.filter((line) => line.msg === "request").length >= 20, "every request is logged");
    assert.ok(lines.some((line) => line.level === "warn" && /not sent/.test(line.msg)), "the refused send is logged");
    for (const [index, line] of raw.entries()) {
      for (const secret of secrets) assert.ok(!line.includes(secret), `a credential in the log: ${line}`);
      assert.doesNotMatch(line, /rk_(key|leg|oat|cs|code)_[A-Za-z0-9_-]{8,}/, `a token-shaped string in the log: ${line}`);
      if (lines[index]!.level === "debug") continue;
      for (const phone of [PHONE, OTHER_PHONE, PHONE.slice(2), OTHER_PHONE.slice(2)]) assert.ok(!line.includes(phone), `a phone number in the log: ${line}`);
      assert.ok(!line.includes(EMAIL), `an email address in the log: ${line}`);
      assert.ok(!line.includes("parcel 7731"), `a message body in the log: ${line}`);
    }
  });

  it("redacts credentials, phone numbers and email addresses in messages, fields and errors, keeping what helps an operator", () => {
    const lines: string[] = [];
    const logger = jsonLogger({ write: (line) => void lines.push(line), now: () => 0 });
    const error = new Error("provider refused +447700900123 for ada@example.com with rk_key_abcDEF123_-xyz");
    logger.warn("send to +19148440001 failed", { to: "+19148440001", error, nested: { token: "rk_oat_0123456789abcdef" } });
    const line = JSON.parse(lines[0]!) as Json;
    assert.equal(line.msg, "send to +*****0001 failed");
    assert.equal(line.to, "+*****0001");
    assert.equal(line.error.message, "provider refused +*****0123 for a**@example.com with rk_key_[redacted]");
    assert.doesNotMatch(line.error.stack, /447700900123|ada@|abcDEF123/);
    assert.equal(line.nested.token, "rk_oat_[redacted]");
    // Ids, times, routes and amounts are left alone.
    for (const text of ["2026-03-01T12:00:00.000+0000", "/v1/privacy/delete-request/:id", "0mm7p6yo0000615fd8e2be315", "+15 points", "a+b"]) {
      assert.equal(redactLogText(text), text);
    }
  });

  it("redacts every email address of a text, and long texts a client could send come back whole but for them", () => {
    assert.equal(redactLogText("ada@example.com,bob.smith@mail.example.org"), "a**@example.com,b**@mail.example.org");
    assert.equal(redactLogText("to <ada@example.com> from x@y"), "to <a**@example.com> from x@y");
    const long = `${"a".repeat(100_000)}@${"b".repeat(100_000)}+${"1".repeat(100_000)}`;
    assert.equal(redactLogText(long), long, "nothing in it is an address");
    const padded = `${"x ".repeat(50_000)}ada@example.com`;
    assert.equal(redactLogText(padded), `${"x ".repeat(50_000)}a**@example.com`);
  });
});
