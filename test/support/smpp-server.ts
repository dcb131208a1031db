import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type { AddressInfo, Server } from "node:net";

/** The parts of the `smpp` library's PDUs and sessions this server uses (its types are not published). */
interface Pdu {
  command: string;
  command_status: number;
  system_id?: string;
  password?: string;
  source_addr?: string;
  destination_addr?: string;
  registered_delivery?: number;
  short_message?: { message?: string };
  message_payload?: { message?: string };
  response(options?: Record<string, unknown>): Pdu;
}
interface Session {
  on(event: string, listener: (pdu: Pdu) => void): void;
  send(pdu: Pdu): boolean;
  deliver_sm(options: Record<string, unknown>, callback: (pdu: Pdu) => void): boolean;
  destroy(): void;
}
const smpp = createRequire(import.meta.url)("smpp") as { createServer(listener: (session: Session) => void): Server };

/** A message the SMSC took. */
export interface SubmittedSms {
  messageId: string;
  from: string;
  to: string;
  body: string;
  receiptRequested: boolean;
}

/** How the SMSC answers the next submit_sm instead of taking it: a command_status, or `drop` (taken, never answered). */
export type SmscRefusal = number | "drop";

/**
 * An SMPP 3.4 SMSC on a local port, for tests (the `smpp` library's server
 * side): binds transceivers with one system_id and password, takes submit_sm,
 * answers enquire_link, and plays the network's part with delivery receipts
 * and subscribers' texts in deliver_sm.
 */
export class SmscServer {
  readonly submitted: SubmittedSms[] = [];
  readonly sessions = new Set<Session>();
  binds = 0;
  enquireLinks = 0;
  readonly #refusals: SmscRefusal[] = [];
  #server: Server | undefined;
  #port = 0;

  constructor(
    readonly systemId = "reachkit",
    readonly password = "secret12",
  ) {}

  get url(): string {
    return `smpp://${this.systemId}:${this.password}@127.0.0.1:${this.#port}`;
  }

  async start(): Promise<this> {
    const server = smpp.createServer((session) => this.#serve(session));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** Breaks every bound connection, as a gateway restart does. */
  dropConnections(): void {
    for (const session of this.sessions) session.destroy();
    this.sessions.clear();
  }

  refuseNext(...refusals: SmscRefusal[]): void {
    this.#refusals.push(...refusals);
  }

  /** A delivery receipt for a message, as SMSCs write it; resolves with the client's deliver_sm_resp status. */
  deliverReceipt(messageId: string, stat: string, err = "000"): Promise<number> {
    const message = this.submitted.find((candidate) => candidate.messageId === messageId);
    const text = `id:${messageId} sub:001 dlvr:001 submit date:2603011200 done date:2603011201 stat:${stat} err:${err} text:`;
    return this.#deliver({
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: (message?.to ?? "").replace(/^\+/, ""),
      destination_addr: (message?.from ?? "").replace(/^\+/, ""),
      esm_class: 0x04,
      short_message: text,
    });
  }

  /** A subscriber's text to a sender number; resolves with the client's deliver_sm_resp status. */
  deliverText(from: string, to: string, body: string): Promise<number> {
    return this.#deliver({
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: from.replace(/^\+/, ""),
      dest_addr_ton: to.startsWith("+") ? 1 : 0,
      destination_addr: to.replace(/^\+/, ""),
      esm_class: 0,
      short_message: body,
    });
  }

  #deliver(fields: Record<string, unknown>): Promise<number> {
    const [session] = this.sessions;
    if (!session) return Promise.reject(new Error("no client is bound"));
    return new Promise((resolve) => session.deliver_sm(fields, (response) => resolve(response.command_status)));
  }

  #serve(session: Session): void {
    let bound = false;
    session.on("error", () => undefined);
    session.on("close", () => this.sessions.delete(session));
    session.on("bind_transceiver", (pdu) => {
      if (pdu.system_id !== this.systemId || pdu.password !== this.password) {
        session.send(pdu.response({ command_status: 0x0e })); // ESME_RINVPASWD
        return;
      }
      bound = true;
      this.binds++;
      this.sessions.add(session);
      session.send(pdu.response({ system_id: "smsc" }));
    });
    session.on("enquire_link", (pdu) => {
      this.enquireLinks++;
      session.send(pdu.response());
    });
    session.on("unbind", (pdu) => session.send(pdu.response()));
    session.on("submit_sm", (pdu) => {
      if (!bound) return void session.send(pdu.response({ command_status: 0x04 })); // ESME_RINVBNDSTS
      const refusal = this.#refusals.shift();
      if (typeof refusal === "number") return void session.send(pdu.response({ command_status: refusal }));
      const body = pdu.message_payload?.message ?? pdu.short_message?.message ?? "";
      const message: SubmittedSms = {
        messageId: randomBytes(8).toString("hex"),
        from: `+${pdu.source_addr}`,
        to: `+${pdu.destination_addr}`,
        body,
        receiptRequested: (pdu.registered_delivery ?? 0) & 1 ? true : false,
      };
      this.submitted.push(message);
      if (refusal === "drop") return;
      session.send(pdu.response({ message_id: message.messageId }));
    });
  }
}
