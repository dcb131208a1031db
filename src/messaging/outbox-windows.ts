import type { Collection, Where } from "../ports/storage.ts";
import type { OutboxMessage, OutboxStatus } from "./outbox-record.ts";

/** What a message asks of the windows: the same body, or the same kind, at most once to its number within a time. */
export interface WindowedMessage {
  to: string;
  kind: string;
  /** A text's body (an email has none: it is never windowed). */
  body?: string;
  suppressDuplicates?: boolean;
  onePerKindWithinMs?: number;
}

/** The statuses of a message that reached its number, or may yet: what a duplicate or a repeat is judged against. */
const WENT_OR_GOING: readonly OutboxStatus[] = ["queued", "sent", "delivered"];

export const isWindowed = (message: WindowedMessage): boolean => Boolean(message.suppressDuplicates || message.onePerKindWithinMs);

/** One question a window asks: did a message with this body (or of this kind) go to this number within `windowMs`? */
interface Check {
  to: string;
  alike: "body" | "kind";
  value: string;
  windowMs: number;
}

/** A message's checks, in the order their reasons win: a duplicate, then a repeat. */
function checksOf(message: WindowedMessage, duplicateWindowMs: number): Check[] {
  const checks: Check[] = [];
  if (message.suppressDuplicates && message.body !== undefined) checks.push({ to: message.to, alike: "body", value: message.body, windowMs: duplicateWindowMs });
  if (message.onePerKindWithinMs) checks.push({ to: message.to, alike: "kind", value: message.kind, windowMs: message.onePerKindWithinMs });
  return checks;
}

const checkKey = (check: Check) => JSON.stringify([check.to, check.alike, check.value, check.windowMs]);
/** What a message queued in the list answers, whatever the window (its createdAt is now, inside every one). */
const likeKey = (to: string, alike: Check["alike"], value: string) => JSON.stringify([to, alike, value]);

/**
 * The windows of a list of messages of one company: what went, or is queued to go, to their numbers, read once
 * per number and body or kind the list asks about (however many of its messages ask it); each message the list
 * queues joins them, so that a later one of the list is judged against it as against a stored one.
 */
export class RecipientWindows {
  readonly #queued = new Set<string>();

  private constructor(
    /** The keys of the checks a stored message answers. */
    private readonly answered: ReadonlySet<string>,
    private readonly duplicateWindowMs: number,
  ) {}

  /**
   * Holds each recipient of `windowed` (in one order, so that two lists naming the same numbers wait for one
   * another instead of each holding one the other waits for) to the end of the caller's transaction, then
   * reads what went to them: two lists at once cannot both find nothing and both send.
   */
  static async read(messages: Collection<OutboxMessage>, companyId: string, windowed: readonly WindowedMessage[], now: number, duplicateWindowMs: number): Promise<RecipientWindows> {
    // A recipient may have no message yet: a key is held, not a row.
    for (const to of [...new Set(windowed.map((message) => message.to))].sort()) await messages.lockKey(JSON.stringify([companyId, to]));
    const checks = new Map(windowed.flatMap((message) => checksOf(message, duplicateWindowMs)).map((check) => [checkKey(check), check]));
    const answered = new Set<string>();
    for (const [key, check] of checks) if (await wentRecently(messages, companyId, check, now)) answered.add(key);
    return new RecipientWindows(answered, duplicateWindowMs);
  }

  /** Why `message` (not stored yet) is suppressed, or undefined when it may go. */
  suppression(message: WindowedMessage): string | undefined {
    for (const check of checksOf(message, this.duplicateWindowMs)) {
      if (!this.answered.has(checkKey(check)) && !this.#queued.has(likeKey(check.to, check.alike, check.value))) continue;
      return check.alike === "body" ? "duplicate: the same message went to this number recently" : `repeat: a ${message.kind} text went to this number recently`;
    }
    return undefined;
  }

  /** A message of the list, as stored: when queued, later messages of the list to its number are judged against it. */
  add(message: OutboxMessage): void {
    if (message.status !== "queued") return;
    this.#queued.add(likeKey(message.to, "kind", message.kind));
    this.#queued.add(likeKey(message.to, "body", message.body));
  }
}

/**
 * Whether a message like the check's went, or is queued to go, to its number within its window. Storage filters
 * and stops at the first: the suppressed attempts a burst leaves are neither read nor parsed. Oldest first, in the
 * order of the (to, companyId, createdAt) index and its id: a burst's text is the oldest of its window and every
 * later attempt is suppressed behind it, so it is the first row read (newest first read every suppressed attempt
 * since it, and so would a read of all the window's messages of a list's numbers at once).
 */
async function wentRecently(messages: Collection<OutboxMessage>, companyId: string, check: Check, now: number): Promise<boolean> {
  const where: Where<OutboxMessage> = {
    companyId,
    to: check.to,
    createdAt: { gte: now - check.windowMs },
    status: { in: WENT_OR_GOING },
    [check.alike]: check.value,
  };
  return (await messages.findOne(where, [{ field: "createdAt" }, { field: "id" }])) !== undefined;
}
