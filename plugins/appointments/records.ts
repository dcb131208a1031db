import type { CollectionSpec, Doc, JsonValue } from "../../src/index.ts";

/** The five texts of an appointment (interface 2.8), in the order a reminder's life sends them. */
export const MESSAGE_TYPES = ["CONFIRMATION", "REMINDER", "FOLLOW_UP", "CANCELLATION", "NO_SHOW"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** The steps a durable job sends at a time of their own; the others go out at once, from the call that triggers them. */
export const TIMED_STEPS = ["REMINDER", "FOLLOW_UP"] as const satisfies readonly MessageType[];
export type TimedStep = (typeof TIMED_STEPS)[number];

/** An appointment type: the `eventType.uuid` that messages and reminders name. */
export interface AppointmentType extends Doc {
  companyId: string;
  /** The caller's name for it ("Haircut", "Consultation"). */
  type: string;
  createdAt: number;
  updatedAt: number;
}

/** The text of one message type of one appointment type (one per pair). */
export interface AppointmentMessage extends Doc {
  companyId: string;
  eventTypeId: string;
  messageType: MessageType;
  text: string;
  /** The `{name}` macros of `text`, in order of first appearance. */
  macros: string[];
  createdAt: number;
  updatedAt: number;
}

/**
 * scheduled: a send is still planned; completed: every planned send has happened
 * (or was skipped); canceled and no_show: ended by those calls.
 */
export type ReminderState = "scheduled" | "completed" | "canceled" | "no_show";

/** Why a step sends nothing. */
export type SkipReason =
  /** The appointment type has no message of this type. */
  | "no_message"
  /** Its moment had already passed when the reminder was created or moved. */
  | "time_passed"
  /** The phone opted out of texts at this company (sendEligibleSubscribersOnly false). */
  | "opted_out"
  /** The phone has no active text subscription (sendEligibleSubscribersOnly true). */
  | "not_eligible"
  /** The message has macros that neither metadata nor the built-ins fill (its text changed after the reminder was made). */
  | "missing_macros"
  /** The reminder was canceled before the step's time. */
  | "canceled"
  /** A no-show was triggered before the step's time. */
  | "no_show";

/**
 * One step of a reminder. scheduled: a durable job sends it at `sendAt`;
 * queued: handed to the outbox as `messageId` (the view reports the outbox's own
 * status); skipped and canceled: nothing was sent, `reason` says why.
 */
export interface ReminderStep {
  status: "scheduled" | "queued" | "skipped" | "canceled";
  /** Epoch ms the step is (or was) due. */
  sendAt?: number;
  /** The event time the step was planned for: a moved appointment gets new messages. */
  eventAt: number;
  messageId?: string;
  reason?: SkipReason;
  /** When it was queued, skipped or canceled. */
  at?: number;
  /** The macros nothing filled, with reason `missing_macros`. */
  missingMacros?: string[];
}

/** An appointment reminder (interface 2.9) and the state of its sends. */
export interface Reminder extends Doc {
  companyId: string;
  eventTypeId: string;
  /** E.164. */
  phone: string;
  externalEventId?: string;
  /** `externalEventId` while the reminder is not canceled: one live reminder per appointment and phone. */
  externalEventKey?: string;
  firstName?: string;
  lastName?: string;
  emailAddress?: string;
  /** As the caller gave it: a wall-clock time in `subscriberTimeZone`, or an instant with its offset. */
  eventDateTime: string;
  /** The instant `eventDateTime` resolves to, epoch ms. */
  eventAt: number;
  /** An IANA zone name, as the caller wrote it (any letter case). */
  subscriberTimeZone: string;
  /** ISO 8601 durations. */
  remindTimeOffset: string;
  followUpTimeOffset?: string;
  sendEligibleSubscribersOnly: boolean;
  metadata: { [key: string]: JsonValue };
  state: ReminderState;
  steps: Partial<Record<MessageType, ReminderStep>>;
  createdAt: number;
  updatedAt: number;
  canceledAt?: number;
  noShowAt?: number;
}

export const APPOINTMENT_TYPES = "appointments_types";
export const APPOINTMENT_MESSAGES = "appointments_messages";
export const REMINDERS = "appointments_reminders";

export const appointmentCollections: readonly CollectionSpec[] = [
  { name: APPOINTMENT_TYPES, indexes: [{ fields: ["companyId"] }] },
  { name: APPOINTMENT_MESSAGES, indexes: [{ fields: ["companyId", "eventTypeId", "messageType"], unique: true }] },
  {
    name: REMINDERS,
    indexes: [
      { fields: ["companyId", "externalEventKey", "phone"], unique: true },
      { fields: ["companyId", "phone"] },
      // Sparse: most reminders have no email; privacy deletions look it up by value.
      { fields: ["companyId", "emailAddress"], sparse: true },
    ],
  },
];
