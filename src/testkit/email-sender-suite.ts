import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EmailSendError, type EmailSender } from "../ports/email-sender.ts";

/** A message as the receiving side (the test's mail server, or the adapter's own record) saw it. */
export interface ReceivedEmail {
  /** The envelope's sender and recipients (SMTP MAIL FROM and RCPT TO). */
  envelope: { from: string; to: string[] };
  subject: string;
  text: string;
  html?: string;
  /** Every header field, names in lower case. */
  headers: Readonly<Record<string, string>>;
}

export interface EmailSenderHarness {
  sender: EmailSender;
  /** The messages that reached the receiving side so far, oldest first. */
  received(): readonly ReceivedEmail[] | Promise<readonly ReceivedEmail[]>;
}

export interface EmailSenderSuiteOptions {
  /** An address the receiving side refuses (a mail server answering 550 to it): the suite then checks how the refusal fails. */
  refusedAddress?: string;
}

/**
 * The EmailSender port's conformance suite: a message arrives whole (both
 * parts, UTF-8, the caller's headers), a send returns a provider id, the same
 * idempotency key never delivers twice, and a bad address fails for good.
 *
 *     emailSenderConformance("smtp", async () => ({ sender: smtpEmail({ url }), received: () => server.messages }));
 */
export function emailSenderConformance(
  adapterName: string,
  makeHarness: () => EmailSenderHarness | Promise<EmailSenderHarness>,
  options: EmailSenderSuiteOptions = {},
): void {
  const base = { from: "Shop <news@shop.example>", to: "jane@example.com", subject: "Hello", text: "Hello Jane" };

  async function withHarness(test: (harness: EmailSenderHarness) => Promise<void>): Promise<void> {
    const harness = await makeHarness();
    try {
      await test(harness);
    } finally {
      await harness.sender.close?.();
    }
  }

  describe(`EmailSender conformance: ${adapterName}`, () => {
    it("delivers the text and HTML parts, the subject and the caller's headers, in UTF-8, and returns a provider id", () =>
      withHarness(async ({ sender, received }) => {
        const sent = await sender.send({
          ...base,
          subject: "Café ✓ news",
          text: "Grüße, Jane: ünïcödé ✓",
          html: "<p>Grüße, <b>Jane</b> ✓</p>",
          headers: {
            "List-Unsubscribe": "<https://shop.example/u/abc>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
          },
          idempotencyKey: "m1",
        });
        assert.equal(typeof sent.providerMessageId, "string");
        assert.ok(sent.providerMessageId.length > 0);
        const [message, ...more] = await received();
        assert.equal(more.length, 0);
        assert.deepEqual(message!.envelope, { from: "news@shop.example", to: ["jane@example.com"] });
        assert.equal(message!.subject, "Café ✓ news");
        assert.equal(message!.text.trim(), "Grüße, Jane: ünïcödé ✓");
        assert.equal(message!.html?.trim(), "<p>Grüße, <b>Jane</b> ✓</p>");
        assert.equal(message!.headers["list-unsubscribe"], "<https://shop.example/u/abc>");
        assert.equal(message!.headers["list-unsubscribe-post"], "List-Unsubscribe=One-Click");
        assert.match(message!.headers.from ?? "", /news@shop\.example/);
        assert.match(message!.headers.to ?? "", /jane@example\.com/);
      }));

    it("sends a text-only message, and gives each message its own provider id", () =>
      withHarness(async ({ sender, received }) => {
        const first = await sender.send({ ...base, idempotencyKey: "a" });
        const second = await sender.send({ ...base, to: "joe@example.com", idempotencyKey: "b" });
        assert.notEqual(first.providerMessageId, second.providerMessageId);
        const messages = await received();
        assert.deepEqual(
          messages.map((message) => message.envelope.to),
          [["jane@example.com"], ["joe@example.com"]],
        );
        assert.equal(messages[0]!.html, undefined);
        assert.equal(messages[0]!.text.trim(), "Hello Jane");
      }));

    it("delivers once per idempotency key and returns the same provider id", () =>
      withHarness(async ({ sender, received }) => {
        const message = { ...base, idempotencyKey: "same" };
        const first = await sender.send(message);
        const second = await sender.send(message);
        assert.equal(second.providerMessageId, first.providerMessageId);
        assert.equal((await received()).length, 1);
      }));

    it("fails for good on a malformed address (invalid_address, not retryable) and delivers nothing", () =>
      withHarness(async ({ sender, received }) => {
        for (const to of ["not an address", "jane@", "<jane@example.com>", "a@b.c, evil@example.com"]) {
          await assert.rejects(
            () => sender.send({ ...base, to, idempotencyKey: `bad ${to}` }),
            (error: unknown) => error instanceof EmailSendError && error.kind === "invalid_address" && !error.retryable,
            to,
          );
        }
        assert.equal((await received()).length, 0);
      }));

    const { refusedAddress } = options;
    if (refusedAddress !== undefined) {
      it("fails for good when the receiving side refuses the address (invalid_address, not retryable)", () =>
        withHarness(async ({ sender, received }) => {
          await assert.rejects(
            () => sender.send({ ...base, to: refusedAddress, idempotencyKey: "refused" }),
            (error: unknown) => error instanceof EmailSendError && error.kind === "invalid_address" && !error.retryable,
          );
          assert.equal((await received()).length, 0);
        }));
    }
  });
}
