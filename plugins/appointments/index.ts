export { appointmentsPlugin, type AppointmentsApi } from "./appointments-plugin.ts";
export { APPOINTMENTS_SERVICE } from "./tokens.ts";
export { AppointmentsService } from "./appointments-service.ts";
export { AppointmentTypes, type AppointmentTypeView } from "./appointment-types.ts";
export { AppointmentMessages, type AppointmentMessageView } from "./appointment-messages.ts";
export { Reminders, type ReminderListOptions } from "./reminders.ts";
export type { ReminderView, ReminderStepView } from "./reminder-view.ts";
export {
  MESSAGE_TYPES,
  TIMED_STEPS,
  type MessageType,
  type TimedStep,
  type AppointmentType,
  type AppointmentMessage,
  type Reminder,
  type ReminderState,
  type ReminderStep,
  type SkipReason,
} from "./records.ts";
export type {
  AppointmentTypeInput,
  AppointmentMessageInput,
  AppointmentMessagePatch,
  ReminderInput,
  ReminderPatch,
} from "./schemas.ts";
export { MAX_METADATA_BYTES, MAX_TEXT_LENGTH } from "./schemas.ts";
export { DEFAULT_REMIND_TIME_OFFSET, SEND_STEP_JOB, stepJobKey, type SendStepJob } from "./reminder-plan.ts";
export { StepSender, BUILT_IN_MACROS, type ReminderFacts } from "./step-sender.ts";
export type { AppointmentStepEvent } from "./step-events.ts";
export { textConsent, type ConsentDecision } from "./send-consent.ts";
export { resolveEventDateTime, parseOffset, TimeZoneNames, MAX_OFFSET, type EventTime, type WallClockAdjustment } from "./event-time.ts";
export { macrosOf } from "./macros.ts";
/** The reminder uuid of the API reference's examples, for plugins whose examples follow a reminder (the console). */
export { EXAMPLE_REMINDER_UUID } from "./openapi.ts";
