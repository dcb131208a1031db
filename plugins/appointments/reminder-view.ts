import type { JsonValue, Outbox, OutboxStatus } from "../../src/index.ts";
import { isoInZone } from "./event-time.ts";
import { MESSAGE_TYPES, type MessageType, type Reminder, type ReminderState, type SkipReason } from "./records.ts";

/**
 * One step as the reminder object shows it. `status`: scheduled (a job sends it
 * at `sendAt`), queued / sent / failed / suppressed (the outbox's status of the
 * message), skipped or canceled (nothing sent; `reason` says why).
 */
export interface ReminderStepView {
  status: "scheduled" | "skipped" | "canceled" | OutboxStatus;
  /** ISO 8601 in the subscriber's zone. */
  sendAt?: string;
  /** The outbox message (`reachkit outbox list`). */
  messageId?: string;
  reason?: SkipReason;
  missingMacros?: string[];
}

/** The reminder object (interface 2.9) with reachkit's additions: `eventAt`, `state`, `steps` and timestamps. */
export interface ReminderView {
  uuid: string;
  externalEventId?: string;
  phone: string;
  firstName?: string;
  lastName?: string;
  emailAddress?: string;
  eventType: { uuid: string };
  remindTimeOffset: string;
  followUpTimeOffset?: string;
  /** As given. */
  eventDateTime: string;
  subscriberTimeZone: string;
  sendEligibleSubscribersOnly: boolean;
  metadata: { [key: string]: JsonValue };
  /** The instant `eventDateTime` resolved to, ISO 8601 in the subscriber's zone (shows how a DST gap was read). */
  eventAt: string;
  state: ReminderState;
  steps: Partial<Record<MessageType, ReminderStepView>>;
  createdAt: string;
  updatedAt: string;
  canceledAt?: string;
  noShowAt?: string;
}

const iso = (at: number) => new Date(at).toISOString();

/** The wire shape of a reminder; queued steps report their outbox message's status. */
export async function reminderView(reminder: Reminder, outbox: Outbox): Promise<ReminderView> {
  const zone = reminder.subscriberTimeZone;
  const steps: ReminderView["steps"] = {};
  for (const type of MESSAGE_TYPES) {
    const step = reminder.steps[type];
    if (!step) continue;
    const message = step.messageId === undefined ? undefined : await outbox.get(step.messageId);
    steps[type] = {
      status: step.status === "queued" ? (message?.status ?? "queued") : step.status,
      ...(step.sendAt !== undefined ? { sendAt: isoInZone(step.sendAt, zone) } : {}),
      ...(step.messageId !== undefined ? { messageId: step.messageId } : {}),
      ...(step.reason !== undefined ? { reason: step.reason } : {}),
      ...(step.missingMacros !== undefined ? { missingMacros: step.missingMacros } : {}),
    };
  }
  return {
    uuid: reminder.id,
    ...optional("externalEventId", reminder.externalEventId),
    phone: reminder.phone,
    ...optional("firstName", reminder.firstName),
    ...optional("lastName", reminder.lastName),
    ...optional("emailAddress", reminder.emailAddress),
    eventType: { uuid: reminder.eventTypeId },
    remindTimeOffset: reminder.remindTimeOffset,
    ...optional("followUpTimeOffset", reminder.followUpTimeOffset),
    eventDateTime: reminder.eventDateTime,
    subscriberTimeZone: zone,
    sendEligibleSubscribersOnly: reminder.sendEligibleSubscribersOnly,
    metadata: reminder.metadata,
    eventAt: isoInZone(reminder.eventAt, zone),
    state: reminder.state,
    steps,
    createdAt: iso(reminder.createdAt),
    updatedAt: iso(reminder.updatedAt),
    ...optional("canceledAt", reminder.canceledAt === undefined ? undefined : iso(reminder.canceledAt)),
    ...optional("noShowAt", reminder.noShowAt === undefined ? undefined : iso(reminder.noShowAt)),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
