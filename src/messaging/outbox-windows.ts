import type { Collection } from "../ports/storage.ts";
import type { OutboxMessage, OutboxStatus } from "./outbox-record.ts";

/** What a text asks of the windows: the same body, or the same kind, at most once to its number within a time. */
export interface WindowedMessage {
  to: string;
  kind: string;
  suppressDuplicates?: boolean;
  onePerKindWithinMs?: number;
}

/** The statuses of a message that reached its number, or may yet: what a duplicate or a repeat is judged against. */
const WENT_OR_GOING: readonly OutboxStatus[] = ["queued", "sent", "delivered"];

export const isWindowed = (message: Partial<WindowedMessage>): boolean => Boolean(message.suppressDuplicates || message.onePerKindWithinMs);

/**
 * The texts that went, or are queued to go, to some numbers of one company within the windows of a list of
 * texts to them, read once for the list; each text the list queues joins them, so that a later one of the
 * list is judged against it as against a stored one.
 */
export class RecipientWindows {
  readonly #went = new Map<string, OutboxMessage[]>();

  private constructor(
    went: readonly OutboxMessage[],
    private readonly now: number,
    private readonly duplicateWindowMs: number,
  ) {
    for (const message of went) this.add(message);
  }

  /**
   * Holds each recipient of `windowed` (in one order, so that two lists naming the same numbers wait for one
   * another instead of each holding one the other waits for) to the end of the caller's transaction, then
   * reads what went to them: a list at once cannot both find nothing and both send.
   */
  static async read(messages: Collection<OutboxMessage>, companyId: string, windowed: readonly WindowedMessage[], now: number, duplicateWindowMs: number): Promise<RecipientWindows> {
    const recipients = [...new Set(windowed.map((message) => message.to))].sort();
    // A recipient may have no message yet: a key is held, not a row.
    for (const to of recipients) await messages.lockKey(JSON.stringify([companyId, to]));
    const longest = Math.max(...windowed.map((message) => Math.max(message.suppressDuplicates ? duplicateWindowMs : 0, message.onePerKindWithinMs ?? 0)));
    const kinds = windowed.some((message) => message.suppressDuplicates) ? undefined : [...new Set(windowed.map((message) => message.kind))];
    // Not suppressed, rather than one of WENT_OR_GOING: a list of statuses would lead SQLite to the company's messages
    // in those statuses (every text that went in the window) instead of the numbers' own. The suppressed attempts a
    // burst leaves are passed over on their status column, never parsed; the few that failed are left out by `add`.
    const found = await messages.find({
      where: { companyId, to: { in: recipients }, createdAt: { gte: now - longest }, status: { ne: "suppressed" }, ...(kinds ? { kind: { in: kinds } } : {}) },
    });
    return new RecipientWindows(found.items, now, duplicateWindowMs);
  }

  /** Why `record` (a text of `message`, not stored yet) is suppressed, or undefined when it may go. */
  suppression(record: OutboxMessage, message: WindowedMessage): string | undefined {
    const went = this.#went.get(record.to) ?? [];
    const since = (windowMs: number) => this.now - windowMs;
    if (message.suppressDuplicates && went.some((each) => each.body === record.body && each.createdAt >= since(this.duplicateWindowMs))) {
      return "duplicate: the same message went to this number recently";
    }
    if (message.onePerKindWithinMs && went.some((each) => each.kind === record.kind && each.createdAt >= since(message.onePerKindWithinMs!))) {
      return `repeat: a ${record.kind} text went to this number recently`;
    }
    return undefined;
  }

  /** A message the list queues: later texts of the list to its number are judged against it. */
  add(message: OutboxMessage): void {
    if (!WENT_OR_GOING.includes(message.status)) return;
    const went = this.#went.get(message.to);
    if (went) went.push(message);
    else this.#went.set(message.to, [message]);
  }
}
