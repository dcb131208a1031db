import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { smtpEmail } from "../../../adapters/email/smtp/index.ts";
import { EmailSendError } from "../../../src/index.ts";
import { SMTP_USER, startSmtpServer, type TestSmtpServer } from "../../support/smtp-server.ts";

const message = { from: "Shop <news@shop.example>", to: "jane@example.com", subject: "Hello", text: "Hello Jane" };

describe("smtpEmail against a real SMTP server", () => {
  let server: TestSmtpServer;
  before(async () => {
    server = await startSmtpServer();
  });
  after(() => server.close());

  it("upgrades with STARTTLS, authenticates, and names the message by its key in Message-ID", async () => {
    const first = server.messages.length;
    const sender = smtpEmail({ url: server.url, ca: server.ca });
    try {
      const sent = await sender.send({ ...message, idempotencyKey: "0mm7p6zfs000ac869721894a5" });
      assert.equal(sent.providerMessageId, "<0mm7p6zfs000ac869721894a5@shop.example>");
      const [received] = server.messages.slice(first);
      assert.equal(received!.secure, true);
      assert.equal(received!.user, SMTP_USER);
      assert.equal(received!.headers["message-id"], "<0mm7p6zfs000ac869721894a5@shop.example>");
      assert.deepEqual(received!.envelope, { from: "news@shop.example", to: ["jane@example.com"] });
    } finally {
      await sender.close?.();
    }
  });

  it("keeps its connections open: twelve messages over at most maxConnections connections", async () => {
    const first = server.messages.length;
    const connectionsBefore = server.connections();
    const sender = smtpEmail({ url: server.url, ca: server.ca, maxConnections: 2 });
    try {
      for (let round = 0; round < 3; round++) {
        await Promise.all([0, 1, 2, 3].map((i) => sender.send({ ...message, to: `r${round}-${i}@example.com`, idempotencyKey: `pool-${round}-${i}` })));
      }
      assert.equal(server.messages.length - first, 12);
      assert.ok(server.connections() - connectionsBefore <= 2, `${server.connections() - connectionsBefore} connections`);
    } finally {
      await sender.close?.();
    }
  });

  it("answers a deferral (451) as retryable and a refusal of the message (554) as final", async () => {
    const sender = smtpEmail({ url: server.url, ca: server.ca });
    try {
      server.failNextData(451, "try again later");
      await assert.rejects(
        () => sender.send({ ...message, idempotencyKey: "deferred" }),
        (error: unknown) => error instanceof EmailSendError && error.kind === "unavailable" && error.retryable && error.providerCode === "451",
      );
      server.failNextData(554, "message refused");
      await assert.rejects(
        () => sender.send({ ...message, idempotencyKey: "refused" }),
        (error: unknown) => error instanceof EmailSendError && error.kind === "rejected" && !error.retryable && error.providerCode === "554",
      );
      // The deferred message goes out on the next attempt.
      await sender.send({ ...message, idempotencyKey: "deferred" });
      assert.equal(server.messages.at(-1)!.headers["message-id"], "<deferred@shop.example>");
    } finally {
      await sender.close?.();
    }
  });

  it("fails for now with wrong credentials, sending nothing", async () => {
    const first = server.messages.length;
    const url = new URL(server.url);
    url.password = "wrong";
    const sender = smtpEmail({ url: url.toString(), ca: server.ca });
    try {
      await assert.rejects(
        () => sender.send({ ...message, idempotencyKey: "bad-auth" }),
        (error: unknown) => error instanceof EmailSendError && error.kind === "unavailable" && error.retryable && !error.mayHaveSent,
      );
      assert.equal(server.messages.length, first);
    } finally {
      await sender.close?.();
    }
  });

  it("refuses to send in clear to a server that offers no STARTTLS", async () => {
    const plain = await startSmtpServer({ offerStartTls: false });
    const sender = smtpEmail({ url: plain.url, ca: plain.ca });
    try {
      await assert.rejects(
        () => sender.send({ ...message, idempotencyKey: "clear" }),
        (error: unknown) => error instanceof EmailSendError && error.kind === "unavailable",
      );
      assert.equal(plain.messages.length, 0);
    } finally {
      await sender.close?.();
      await plain.close();
    }
  });

  it("refuses a URL that is not smtp:// or smtps://", () => {
    assert.throws(() => smtpEmail({ url: "http://localhost:25" }), /smtp:\/\/ or smtps:\/\//);
  });
});
