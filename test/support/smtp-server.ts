import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { generate } from "selfsigned";
import { SMTPServer, type SMTPServerAddress } from "smtp-server";
import type { ReceivedEmail } from "../../src/testkit/index.ts";

/** A message the test server received, with what the session was like when it came. */
export interface ServerEmail extends ReceivedEmail {
  /** The session had upgraded to TLS (STARTTLS) before the message. */
  secure: boolean;
  /** The user the session authenticated as. */
  user: string | undefined;
}

export interface TestSmtpServer {
  url: string;
  /** The server's self-signed certificate (PEM), for the client to trust. */
  ca: string;
  readonly messages: ServerEmail[];
  /** Connections opened so far. */
  connections(): number;
  /** The next message's DATA is answered with this reply (`451 try later`), once. */
  failNextData(code: number, message: string): void;
  close(): Promise<void>;
}

export const SMTP_USER = "mailer";
export const SMTP_PASSWORD = "p@ss word";
/** The test server refuses this recipient (550), as a server refuses a mailbox it does not have. */
export const REFUSED_ADDRESS = "nobody@refused.example";

/**
 * A real SMTP server on loopback (smtp-server) offering STARTTLS with a
 * certificate made for this run, refusing authentication before TLS, and
 * keeping every message it receives, parsed.
 */
export async function startSmtpServer(options: { offerStartTls?: boolean } = {}): Promise<TestSmtpServer> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keySize: 2048,
    algorithm: "sha256",
    extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }] }],
  });
  const messages: ServerEmail[] = [];
  let connections = 0;
  let dataFailure: { code: number; message: string } | undefined;
  const server = new SMTPServer({
    key: pems.private,
    cert: pems.cert,
    authMethods: ["PLAIN", "LOGIN"],
    // The default, spelled out: AUTH is refused until the session is upgraded with STARTTLS.
    allowInsecureAuth: false,
    logger: false,
    ...(options.offerStartTls === false ? { disabledCommands: ["STARTTLS"], allowInsecureAuth: true } : {}),
    onConnect(_session, callback) {
      connections++;
      callback();
    },
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) return callback(null, { user: auth.username });
      callback(Object.assign(new Error("invalid credentials"), { responseCode: 535 }));
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      if (address.address === REFUSED_ADDRESS) return callback(Object.assign(new Error("no such mailbox"), { responseCode: 550 }));
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (dataFailure) {
          const { code, message } = dataFailure;
          dataFailure = undefined;
          return callback(Object.assign(new Error(message), { responseCode: code }));
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw).then(
          (parsed) => {
            const headers: Record<string, string> = {};
            for (const line of parsed.headerLines) headers[line.key] = line.line.slice(line.line.indexOf(":") + 1).replace(/\r?\n[ \t]+/g, " ").trim();
            messages.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
                to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
              },
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              ...(typeof parsed.html === "string" ? { html: parsed.html } : {}),
              headers,
              secure: session.secure,
              user: session.user,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://${encodeURIComponent(SMTP_USER)}:${encodeURIComponent(SMTP_PASSWORD)}@localhost:${port}`,
    ca: pems.cert,
    messages,
    connections: () => connections,
    failNextData(code, message) {
      dataFailure = { code, message };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
