import type { MessageType, SkipReason } from "./records.ts";

/** What the appointment step events carry. */
export interface AppointmentStepEvent {
  companyId: string;
  reminderUuid: string;
  eventTypeUuid: string;
  externalEventId?: string;
  step: MessageType;
  /** The subscriber's phone (E.164). */
  phone: string;
  /** When the appointment is (epoch ms). */
  eventAt: number;
  /** The outbox message of a queued step. */
  messageId?: string;
  /** Why a skipped step sent nothing. */
  reason?: SkipReason;
  at: number;
}

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** A step's text (CONFIRMATION, REMINDER, CANCELLATION, NO_SHOW, FOLLOW_UP) went to the outbox. */
    "appointment.step.queued": AppointmentStepEvent;
    /** A step sent nothing: no message of its type, no consent, a macro without a value, or its time had passed. */
    "appointment.step.skipped": AppointmentStepEvent;
  }
}
