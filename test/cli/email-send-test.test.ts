import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TEST_SECRET, type Json } from "../support/test-kit.ts";
import { REFUSED_ADDRESS, startSmtpServer, type TestSmtpServer } from "../support/smtp-server.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

/** `reachkit email send-test` as an operator runs it: the bin, configured by the environment. */
function sendTest(server: TestSmtpServer, caFile: string, to: string): Promise<{ code: number; json: Json; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "server/cli.ts", "email", "send-test", "--to", to, "--data-dir", temporaryDirectory("send-test"), "--json"],
      {
        env: {
          ...process.env,
          REACHKIT_SECRET: TEST_SECRET,
          REACHKIT_EMAIL: server.url,
          REACHKIT_EMAIL_FROM: "ops@shop.example",
          // How an operator trusts a private or self-signed certificate of their SMTP server.
          NODE_EXTRA_CA_CERTS: caFile,
        },
      },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, json: stdout ? JSON.parse(stdout) : undefined, stderr }),
    );
  });
}

describe("reachkit email send-test", () => {
  let server: TestSmtpServer;
  let caFile: string;
  before(async () => {
    server = await startSmtpServer();
    caFile = join(temporaryDirectory("smtp-ca"), "ca.pem");
    writeFileSync(caFile, server.ca);
  });
  after(() => server.close());

  it("sends one email through REACHKIT_EMAIL from REACHKIT_EMAIL_FROM and prints the message id", async () => {
    const result = await sendTest(server, caFile, "jane@example.com");
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.json.sent, true);
    assert.equal(result.json.adapter, "smtp");
    const [received] = server.messages;
    assert.deepEqual(received!.envelope, { from: "ops@shop.example", to: ["jane@example.com"] });
    assert.equal(received!.subject, "reachkit test email");
    assert.equal(received!.secure, true);
    assert.equal(received!.headers["message-id"], result.json.providerMessageId);
  });

  it("prints the server's refusal and exits 1", async () => {
    const before = server.messages.length;
    const result = await sendTest(server, caFile, REFUSED_ADDRESS);
    assert.equal(result.code, 1);
    assert.equal(result.json.sent, false);
    assert.equal(result.json.error, "invalid_address");
    assert.match(result.json.reason, /550/);
    assert.equal(server.messages.length, before);
  });
});
