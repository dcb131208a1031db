import { createRequire } from "node:module";
import PQueue from "p-queue";
import { SmsSendError, type DeliveryReceipt, type InboundSms, type OutboundSms, type SentSms, type SmsSender } from "../../../src/index.ts";
import { readReceipt, RECEIPT_ESM_CLASS } from "./smpp-receipts.ts";

/** What this adapter uses of the `smpp` library (its types are not published). */
interface SmppPdu {
  command: string;
  command_status: number;
  message_id?: string;
  esm_class?: number;
  source_addr?: string;
  source_addr_ton?: number;
  destination_addr?: string;
  dest_addr_ton?: number;
  short_message?: { message?: string } | string;
  message_payload?: { message?: string } | string;
  receipted_message_id?: string;
  message_state?: number;
  response(options?: Record<string, unknown>): SmppPdu;
}
interface SmppSession {
  on(event: string, listener: (argument: never) => void): void;
  send(pdu: SmppPdu): boolean;
  bind_transceiver(options: Record<string, unknown>, callback: (pdu: SmppPdu) => void): boolean;
  submit_sm(options: Record<string, unknown>, callback: (pdu: SmppPdu) => void): boolean;
  enquire_link(callback: (pdu: SmppPdu) => void): boolean;
  unbind(callback: (pdu: SmppPdu) => void): boolean;
  destroy(): void;
}
interface SmppLibrary {
  connect(options: { host: string; port: number }): SmppSession;
}

/** SMPP command_status values (SMPP 3.4 §5.1.3) that say how to treat a refusal. */
const INVALID_DESTINATION = new Set([0x0b, 0x0c, 0x33]);
const THROTTLED = new Set([0x14, 0x58]);
const ESME_RSYSERR = 0x08;
/** A short_message holds at most 254 octets; longer texts go in the message_payload TLV. */
const SHORT_MESSAGE_LIMIT = 254;
const REMEMBERED_KEYS = 10_000;

export interface SmppSmsOptions {
  /** `smpp://system_id:password@host:port` (port 2775 by default). */
  url: string;
  /** submit_sm sent and not answered yet, at most (the throughput window); default 10. */
  window?: number;
  /** How often the bind is checked with enquire_link; default 30 s. */
  enquireLinkMs?: number;
  /** How long an answer may take (bind, submit, enquire_link) before the connection counts as broken; default 10 s. */
  responseTimeoutMs?: number;
  /** Reconnect delays after a lost bind: from the first, doubling up to the last; default 1 s to 60 s. */
  reconnectMs?: { first: number; max: number };
  /** system_type of the bind; default empty. */
  systemType?: string;
}

/**
 * SMS over SMPP 3.4 with the `smpp` library: bound as a transceiver,
 * `submit_sm` with a delivery receipt requested, receipts and subscribers'
 * texts from `deliver_sm`, `enquire_link` to keep the bind, reconnection with
 * backoff, and at most `window` submits awaiting their answer. SMPP cannot be
 * asked whether an earlier submit went through, so an attempt after one in
 * doubt is refused (`in_doubt`), never submitted twice. No MMS.
 */
export function smppSms(options: SmppSmsOptions): SmsSender {
  const smpp = createRequire(import.meta.url)("smpp") as SmppLibrary;
  const url = new URL(options.url);
  const credentials = { system_id: decodeURIComponent(url.username), password: decodeURIComponent(url.password), system_type: options.systemType ?? "" };
  const responseTimeoutMs = options.responseTimeoutMs ?? 10_000;
  const reconnect = options.reconnectMs ?? { first: 1_000, max: 60_000 };
  const window = new PQueue({ concurrency: options.window ?? 10 });
  const recent = new Map<string, string>();
  /** Provider id → outbox id, so that a receipt names its message. */
  const keysByProviderId = new Map<string, string>();
  let inboundHandler: ((message: InboundSms) => Promise<void>) | undefined;
  let receiptHandler: ((receipt: DeliveryReceipt) => Promise<void>) | undefined;
  let session: SmppSession | undefined;
  let bound: Promise<SmppSession> | undefined;
  let stopped = false;
  let reconnectDelay = reconnect.first;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let enquireTimer: NodeJS.Timeout | undefined;

  const remember = <K, V>(map: Map<K, V>, key: K, value: V) => {
    map.set(key, value);
    if (map.size > REMEMBERED_KEYS) map.delete(map.keys().next().value as K);
  };

  /**
   * A request's answer within the timeout; `unanswered` when it left and no
   * answer came (the connection is then dropped: the bind is broken), `unsent`
   * when the connection could not take it.
   */
  function answer(current: SmppSession, request: (callback: (pdu: SmppPdu) => void) => boolean): Promise<SmppPdu | "unanswered" | "unsent"> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        resolve("unanswered");
        current.destroy();
      }, responseTimeoutMs);
      const settle = (outcome: SmppPdu | "unanswered" | "unsent") => {
        clearTimeout(timer);
        resolve(outcome);
      };
      current.on("close", () => settle("unanswered"));
      if (!request(settle)) settle("unsent");
    });
  }

  function connect(): Promise<SmppSession> {
    const current = smpp.connect({ host: url.hostname, port: Number(url.port || 2775) });
    session = current;
    // A host that never answers (a dropped SYN) counts as down after the response timeout.
    const connecting = setTimeout(() => current.destroy(), responseTimeoutMs);
    const ready = new Promise<SmppSession>((resolve, reject) => {
      current.on("connect", async () => {
        clearTimeout(connecting);
        const response = await answer(current, (callback) => current.bind_transceiver(credentials, callback));
        if (typeof response === "object" && response.command_status === 0) {
          reconnectDelay = reconnect.first;
          resolve(current);
        } else {
          reject(new SmsSendError("unavailable", `the SMSC refused the bind (${typeof response === "object" ? `command_status ${response.command_status}` : "no answer"})`));
          current.destroy();
        }
      });
      current.on("error", () => reject(new SmsSendError("unavailable", "no connection to the SMSC")));
      current.on("close", () => {
        clearTimeout(connecting);
        reject(new SmsSendError("unavailable", "the SMSC closed the connection"));
      });
    });
    current.on("deliver_sm", (pdu: SmppPdu) => void received(current, pdu));
    // Errors end in "close", where the bind is made again.
    current.on("error", () => undefined);
    current.on("close", () => {
      if (session === current) lost();
    });
    ready.catch(() => undefined);
    return ready;
  }

  function lost(): void {
    session = undefined;
    bound = undefined;
    clearInterval(enquireTimer);
    if (stopped) return;
    const delay = reconnectDelay;
    reconnectDelay = Math.min(reconnect.max, reconnectDelay * 2);
    reconnectTimer = setTimeout(() => void bind().catch(() => undefined), delay);
  }

  function bind(): Promise<SmppSession> {
    if (!bound) {
      bound = connect();
      bound.then(
        (current) => {
          clearInterval(enquireTimer);
          enquireTimer = setInterval(() => void answer(current, (callback) => current.enquire_link(callback)), options.enquireLinkMs ?? 30_000);
          enquireTimer.unref();
        },
        () => undefined,
      );
    }
    return bound;
  }

  async function received(current: SmppSession, pdu: SmppPdu): Promise<void> {
    const text = messageText(pdu);
    try {
      if (((pdu.esm_class ?? 0) & RECEIPT_ESM_CLASS) !== 0) {
        const receipt = readReceipt(pdu, text);
        if (receipt?.status !== undefined) {
          const messageId = keysByProviderId.get(receipt.providerMessageId);
          await receiptHandler?.({
            providerMessageId: receipt.providerMessageId,
            status: receipt.status,
            ...(messageId !== undefined ? { messageId } : {}),
            ...(receipt.errorCode !== undefined ? { errorCode: receipt.errorCode } : {}),
          });
        }
      } else {
        await inboundHandler?.({ from: addressOf(pdu.source_addr ?? "", pdu.source_addr_ton), to: addressOf(pdu.destination_addr ?? "", pdu.dest_addr_ton), body: text });
      }
      current.send(pdu.response());
    } catch {
      // Not answered: the SMSC delivers it again, once the kit can record it.
      current.send(pdu.response({ command_status: ESME_RSYSERR }));
    }
  }

  async function submit(message: OutboundSms): Promise<SentSms> {
    let current: SmppSession;
    try {
      current = await bind();
    } catch (error) {
      throw error instanceof SmsSendError ? error : new SmsSendError("unavailable", String(error));
    }
    const long = Buffer.byteLength(message.body) > SHORT_MESSAGE_LIMIT;
    const response = await answer(current, (callback) =>
      current.submit_sm(
        {
          ...addressFields("source", message.from),
          ...addressFields("dest", message.to),
          registered_delivery: 1,
          ...(long ? { message_payload: message.body } : { short_message: message.body }),
        },
        callback,
      ),
    );
    if (response === "unsent") throw new SmsSendError("unavailable", "the connection to the SMSC broke before the submit_sm left");
    if (response === "unanswered") throw new SmsSendError("unavailable", "the SMSC did not answer the submit_sm", { mayHaveSent: true });
    const status = response.command_status;
    if (status === 0 && response.message_id) return { providerMessageId: response.message_id };
    const code = `0x${status.toString(16).padStart(8, "0")}`;
    const refusal = `the SMSC refused the message (command_status ${code})`;
    if (INVALID_DESTINATION.has(status)) throw new SmsSendError("invalid_number", refusal, { providerCode: code });
    if (THROTTLED.has(status)) throw new SmsSendError("rate_limited", refusal, { providerCode: code });
    if (status === ESME_RSYSERR) throw new SmsSendError("unavailable", refusal, { providerCode: code });
    throw new SmsSendError("rejected", refusal, { providerCode: code });
  }

  return {
    name: "smpp",
    async send(message: OutboundSms): Promise<SentSms> {
      const known = recent.get(message.idempotencyKey);
      if (known !== undefined) return { providerMessageId: known };
      if (message.mediaUrl !== undefined) throw new SmsSendError("rejected", "SMPP carries no MMS: the message has a media URL");
      if (message.earlierAttemptAt !== undefined) {
        throw new SmsSendError("in_doubt", "an earlier submit_sm of this text may have reached the SMSC, which cannot be asked; it is not submitted again");
      }
      const sent = await window.add(() => submit(message));
      remember(recent, message.idempotencyKey, sent.providerMessageId);
      remember(keysByProviderId, sent.providerMessageId, message.idempotencyKey);
      return sent;
    },
    onInbound(handler) {
      inboundHandler = handler;
    },
    onReceipt(handler) {
      receiptHandler = handler;
    },
    async start() {
      stopped = false;
      // The kit starts whether the SMSC answers or not (after one try at most the response timeout long): sends wait for the bind, retried with backoff.
      await bind().catch(() => undefined);
    },
    async stop() {
      stopped = true;
      clearTimeout(reconnectTimer);
      clearInterval(enquireTimer);
      const current = session;
      session = undefined;
      bound = undefined;
      if (current) {
        await answer(current, (callback) => current.unbind(callback));
        current.destroy();
      }
    },
  };
}

/** E.164 numbers travel as international digits (TON 1, NPI 1); short codes and names as they are. */
function addressFields(prefix: "source" | "dest", address: string): Record<string, string | number> {
  const international = /^\+\d+$/.test(address);
  return {
    [`${prefix}_addr_ton`]: international ? 1 : 0,
    [`${prefix}_addr_npi`]: international ? 1 : 0,
    [prefix === "source" ? "source_addr" : "destination_addr"]: international ? address.slice(1) : address,
  };
}

/** An address as the kit writes it: international digits get their "+". */
function addressOf(address: string, ton: number | undefined): string {
  return ton === 1 && /^\d+$/.test(address) ? `+${address}` : address;
}

function messageText(pdu: SmppPdu): string {
  const field = pdu.message_payload ?? pdu.short_message;
  if (field === undefined) return "";
  return typeof field === "string" ? field : (field.message ?? "");
}
