import type { ReportedStatus } from "../../../src/index.ts";

/** An SMSC's delivery receipt (deliver_sm with the receipt bit of esm_class), read. */
export interface SmppReceipt {
  providerMessageId: string;
  status: ReportedStatus | undefined;
  errorCode?: string;
}

/** esm_class bits 2-5: the message is an SMSC delivery receipt. */
export const RECEIPT_ESM_CLASS = 0x04;

/** The final states a receipt's `stat:` reports (SMPP 3.4 appendix B), and the TLV message_state values. */
const BY_STAT: Readonly<Record<string, ReportedStatus | undefined>> = {
  DELIVRD: "delivered",
  UNDELIV: "undelivered",
  EXPIRED: "undelivered",
  REJECTD: "failed",
  DELETED: "failed",
  ACCEPTD: "sent",
  ENROUTE: "sent",
  UNKNOWN: undefined,
};
const BY_MESSAGE_STATE: Readonly<Record<number, ReportedStatus | undefined>> = { 1: "sent", 2: "delivered", 3: "undelivered", 4: "failed", 5: "undelivered", 6: "sent", 8: "failed" };

/**
 * Reads a receipt from its TLVs (receipted_message_id, message_state) or,
 * as most SMSCs send it, from its text:
 * `id:IIIII sub:SSS dlvr:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:...`.
 */
export function readReceipt(pdu: { receipted_message_id?: string; message_state?: number }, text: string): SmppReceipt | undefined {
  const id = pdu.receipted_message_id ?? /\bid:(\S+)/i.exec(text)?.[1];
  if (id === undefined) return undefined;
  const stat = /\bstat:(\w+)/i.exec(text)?.[1]?.toUpperCase();
  const status = pdu.message_state !== undefined ? BY_MESSAGE_STATE[pdu.message_state] : stat !== undefined ? BY_STAT[stat] : undefined;
  const err = /\berr:(\w+)/i.exec(text)?.[1];
  return { providerMessageId: id, status, ...(err !== undefined && !/^0+$/.test(err) ? { errorCode: err } : {}) };
}
