import { after, before } from "node:test";
import { consoleEmail } from "../../adapters/email/console/index.ts";
import { memoryEmail, type DeliveredEmail } from "../../adapters/email/memory/index.ts";
import { smtpEmail } from "../../adapters/email/smtp/index.ts";
import type { OutboundEmail } from "../../src/index.ts";
import { emailSenderConformance, type ReceivedEmail } from "../../src/testkit/index.ts";
import { REFUSED_ADDRESS, startSmtpServer, type TestSmtpServer } from "../support/smtp-server.ts";

/** What a recipient of an adapter's own record would have received. */
function asReceived(message: OutboundEmail | DeliveredEmail): ReceivedEmail {
  const headers: Record<string, string> = { from: message.from, to: message.to, subject: message.subject };
  for (const [name, value] of Object.entries(message.headers ?? {})) headers[name.toLowerCase()] = value;
  const envelopeFrom = /<([^>]+)>\s*$/.exec(message.from)?.[1] ?? message.from;
  return {
    envelope: { from: envelopeFrom, to: [message.to] },
    subject: message.subject,
    text: message.text,
    ...(message.html !== undefined ? { html: message.html } : {}),
    headers,
  };
}

emailSenderConformance(
  "memory",
  () => {
    const sender = memoryEmail({ refuses: (address) => address === REFUSED_ADDRESS });
    return { sender, received: () => sender.sent.map(asReceived) };
  },
  { refusedAddress: REFUSED_ADDRESS },
);

emailSenderConformance("console", () => {
  const lines: string[] = [];
  return {
    sender: consoleEmail({ write: (line) => void lines.push(line) }),
    received: () => lines.map((line) => asReceived((JSON.parse(line) as { email: OutboundEmail }).email)),
  };
});

let server: TestSmtpServer;
before(async () => {
  server = await startSmtpServer();
});
after(() => server.close());

emailSenderConformance(
  "smtp",
  () => {
    const first = server.messages.length;
    return { sender: smtpEmail({ url: server.url, ca: server.ca }), received: () => server.messages.slice(first) };
  },
  { refusedAddress: REFUSED_ADDRESS },
);
