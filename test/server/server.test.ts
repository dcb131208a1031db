import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { join } from "node:path";
import { configFromEnv } from "../../server/config.ts";
import { startServer } from "../../server/server.ts";
import { startExampleProcess } from "../support/example-process.ts";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

const newDataDir = () => temporaryDirectory("server");

describe("self-hosted server", () => {
  it("creates a company on first start, prints its credentials, and serves /v1/me and /healthz", async () => {
    const dataDir = newDataDir();
    let printed = "";
    const config = configFromEnv({ REACHKIT_SECRET: TEST_SECRET, LOG_LEVEL: "error" }, { port: 0, dataDir });
    const server = await startServer(config, (text) => void (printed += text));
    const apiKey = /apiKey:\s+(\S+)/.exec(printed)?.[1];
    assert.ok(apiKey, printed);
    assert.match(printed, /legacyToken:\s+rk_leg_/);

    const me = await fetch(`${server.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal(me.status, 200);
    assert.equal(me.headers.get("content-type"), "application/json");
    assert.ok(me.headers.get("x-trace-id"));
    const body = (await me.json()) as Json;
    assert.equal(body.companyName, "My Company");
    assert.deepEqual(Object.keys(body).sort(), ["applicationName", "attentiveDomainName", "companyId", "companyName", "contactEmail"]);

    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    assert.equal((await fetch(`${server.url}/nowhere`)).status, 404);
    const wrongMethodWithBigBody = await fetch(`${server.url}/v1/me`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "x".repeat(2 * 1024 * 1024),
    });
    assert.equal(wrongMethodWithBigBody.status, 405);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200, "still serving");
    await server.close();

    let printedAgain = "";
    const restarted = await startServer(config, (text) => void (printedAgain += text));
    assert.equal(printedAgain, "", "credentials are printed only on the first start");
    assert.equal((await fetch(`${restarted.url}/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } })).status, 200);
    await restarted.close();
  });

  it("keeps a generated secret in the data directory", () => {
    const dataDir = newDataDir();
    const first = configFromEnv({}, { dataDir });
    const second = configFromEnv({}, { dataDir });
    assert.equal(first.secret, second.secret);
    assert.ok(first.secret.length >= 32);
    assert.equal(configFromEnv({ REACHKIT_SECRET: TEST_SECRET }, { dataDir }).secret, TEST_SECRET);
    assert.equal(first.publicUrl, "http://localhost:3000");
    assert.throws(() => configFromEnv({ PORT: "http" }), /PORT/);
    assert.throws(() => configFromEnv({ LOG_LEVEL: "loud" }, { dataDir }), /LOG_LEVEL/);
    assert.throws(() => configFromEnv({ REACHKIT_SMS_PER_SECOND: "fast" }, { dataDir }), /REACHKIT_SMS_PER_SECOND/);
    assert.equal(configFromEnv({ REACHKIT_SMS_PER_SECOND: "25" }, { dataDir }).smsPerSecond, 25);
    assert.equal(configFromEnv({}, { dataDir }).smsPerSecond, 10);
    assert.deepEqual(configFromEnv({}, { dataDir }).sms, { kind: "console" });
    assert.deepEqual(configFromEnv({ REACHKIT_SMS_LOG: "sent.jsonl" }, { dataDir }).sms, { kind: "file", path: join(process.cwd(), "sent.jsonl") });
    const twilio = { REACHKIT_SMS: "twilio", TWILIO_ACCOUNT_SID: `AC${"a".repeat(32)}`, TWILIO_AUTH_TOKEN: "token" };
    assert.deepEqual(configFromEnv({ ...twilio, REACHKIT_TWILIO_API_URL: "http://127.0.0.1:4010" }, { dataDir }).sms, {
      kind: "twilio",
      accountSid: twilio.TWILIO_ACCOUNT_SID,
      authToken: "token",
      apiUrl: "http://127.0.0.1:4010",
    });
    assert.throws(() => configFromEnv({ ...twilio, TWILIO_ACCOUNT_SID: "SK123" }, { dataDir }), /TWILIO_ACCOUNT_SID/);
    assert.throws(() => configFromEnv({ ...twilio, TWILIO_AUTH_TOKEN: "" }, { dataDir }), /TWILIO_AUTH_TOKEN/);
    assert.throws(() => configFromEnv({ ...twilio, REACHKIT_TWILIO_API_URL: "ftp://x" }, { dataDir }), /REACHKIT_TWILIO_API_URL/);
    assert.deepEqual(configFromEnv({ REACHKIT_SMS: "smpp://esme:pw@smsc.example.com:2775" }, { dataDir }).sms, { kind: "smpp", url: "smpp://esme:pw@smsc.example.com:2775" });
    assert.throws(() => configFromEnv({ REACHKIT_SMS: "smpp://smsc.example.com" }, { dataDir }), /smpp:\/\/system_id/);
    assert.throws(() => configFromEnv({ REACHKIT_SMS: "carrier-pigeon" }, { dataDir }), /REACHKIT_SMS must be/);
    assert.throws(() => configFromEnv({ REACHKIT_SMS: "file" }, { dataDir }), /REACHKIT_SMS_LOG/);
    assert.deepEqual(configFromEnv({ REACHKIT_SMS_RATES: "+15551234567=1, 12345=100" }, { dataDir }).smsRatesBySender, { "+15551234567": 1, "12345": 100 });
    assert.throws(() => configFromEnv({ REACHKIT_SMS_RATES: "+15551234567=fast" }, { dataDir }), /REACHKIT_SMS_RATES/);
    assert.equal(configFromEnv({}, { dataDir }).privacyDelayHours, 0);
    assert.equal(configFromEnv({ REACHKIT_PRIVACY_DELAY_HOURS: "48" }, { dataDir }).privacyDelayHours, 48);
    assert.throws(() => configFromEnv({ REACHKIT_PRIVACY_DELAY_HOURS: "721" }, { dataDir }), /REACHKIT_PRIVACY_DELAY_HOURS/);
    assert.throws(() => configFromEnv({ REACHKIT_PRIVACY_DELAY_HOURS: "soon" }, { dataDir }), /REACHKIT_PRIVACY_DELAY_HOURS/);
    assert.equal(configFromEnv({ REACHKIT_JOB_CONCURRENCY: "16" }, { dataDir }).jobConcurrency, 16);
    assert.equal(configFromEnv({}, { dataDir }).jobConcurrency, 4);
    for (const bad of ["0", "2.5", "many"]) assert.throws(() => configFromEnv({ REACHKIT_JOB_CONCURRENCY: bad }, { dataDir }), /REACHKIT_JOB_CONCURRENCY/);
    assert.equal(configFromEnv({}, { dataDir }).databaseUrl, undefined);
    assert.equal(configFromEnv({}, { dataDir }).jobPollMs, undefined, "one process polls for nothing");
    const shared = configFromEnv({ REACHKIT_DATABASE_URL: "postgres://u:p@db:5432/reachkit" }, { dataDir });
    assert.equal(shared.databaseUrl, "postgres://u:p@db:5432/reachkit");
    assert.equal(shared.jobPollMs, 1_000);
    assert.throws(() => configFromEnv({ REACHKIT_DATABASE_URL: "mysql://db/reachkit" }, { dataDir }), /REACHKIT_DATABASE_URL/);
    assert.equal(configFromEnv({ REACHKIT_JOB_LEASE_MS: "5000" }, { dataDir }).jobLeaseMs, 5_000);
    assert.throws(() => configFromEnv({ REACHKIT_JOB_LEASE_MS: "10" }, { dataDir }), /REACHKIT_JOB_LEASE_MS/);
    assert.deepEqual(configFromEnv({ REACHKIT_RATE_LIMITS: "opt-in=20, default=unlimited" }, { dataDir }).rateLimits, { "opt-in": 20, default: Infinity });
    for (const bad of ["opt-in", "opt-in=0", "=5", "opt-in=fast"]) assert.throws(() => configFromEnv({ REACHKIT_RATE_LIMITS: bad }, { dataDir }), /REACHKIT_RATE_LIMITS/);
  });

  it("starts with npm start's entry point, logs JSON with trace ids, and stops gracefully on SIGTERM", async () => {
    const server = await startExampleProcess("server/main.ts", { REACHKIT_DATA_DIR: newDataDir(), REACHKIT_SECRET: TEST_SECRET });
    const me = await fetch(`http://127.0.0.1:${server.port}/v1/me`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    assert.equal(me.status, 200);
    const traceId = me.headers.get("x-trace-id");
    assert.equal(await server.stop(), 0);
    const requestLog = server.logs.find((entry) => entry.msg === "request" && entry.traceId === traceId);
    assert.ok(requestLog, "the request is logged with its trace id");
    assert.equal(requestLog.status, 200);
    assert.ok(server.logs.some((entry) => entry.msg === "stopped"));
  });
});
