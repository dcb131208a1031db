import * as v from "valibot";
import type { ResponseDoc, RouteDocs } from "../../src/index.ts";
import { MESSAGE_TYPES } from "./records.ts";

const TYPES = "Appointment types and messages";
const REMINDERS = "Appointment reminders";
const TYPE_UUID = "86645f00-c1a2-4c5f-b053-72c5e32874c8";
const MESSAGE_UUID = "e893667a-0a0b-4baf-9404-c42b9ac35c29";
/** The reminder of the examples (the story's createReminder answers the real one). */
export const EXAMPLE_REMINDER_UUID = "985cd75b-378e-42d7-9315-6aacb1b19cc9";
const REMINDER_UUID = EXAMPLE_REMINDER_UUID;

const appointmentType = v.object({ uuid: v.string(), type: v.string() });
const message = v.object({
  uuid: v.string(),
  eventType: v.object({ uuid: v.string() }),
  messageType: v.picklist(MESSAGE_TYPES),
  text: v.string(),
  macros: v.pipe(v.array(v.string()), v.description("The {macro} names of the text: each needs a value in the reminder's metadata")),
});
const step = v.object({
  status: v.pipe(v.string(), v.description("scheduled, queued, sent, failed, suppressed, skipped or canceled")),
  sendAt: v.optional(v.pipe(v.string(), v.description("ISO 8601 in the subscriber's zone"))),
  messageId: v.optional(v.string()),
  reason: v.optional(v.string()),
  missingMacros: v.optional(v.array(v.string())),
});
const reminder = v.object({
  uuid: v.string(),
  externalEventId: v.optional(v.string()),
  phone: v.string(),
  firstName: v.optional(v.string()),
  lastName: v.optional(v.string()),
  emailAddress: v.optional(v.string()),
  eventType: v.object({ uuid: v.string() }),
  remindTimeOffset: v.string(),
  followUpTimeOffset: v.optional(v.string()),
  eventDateTime: v.string(),
  subscriberTimeZone: v.string(),
  sendEligibleSubscribersOnly: v.boolean(),
  metadata: v.record(v.string(), v.unknown()),
  eventAt: v.pipe(v.string(), v.description("The instant eventDateTime resolved to, in the subscriber's zone")),
  state: v.picklist(["scheduled", "completed", "canceled", "no_show"]),
  steps: v.pipe(v.record(v.string(), step), v.description("Each message of the reminder (CONFIRMATION, REMINDER, FOLLOW_UP...) and what became of it")),
  createdAt: v.string(),
  updatedAt: v.string(),
  canceledAt: v.optional(v.string()),
  noShowAt: v.optional(v.string()),
});

const typeExample = { uuid: TYPE_UUID, type: "Haircut" };
const messageExample = { uuid: MESSAGE_UUID, eventType: { uuid: TYPE_UUID }, messageType: "REMINDER", text: "See you at {eventTime}, {firstName}!", macros: ["eventTime", "firstName"] };
const reminderExample = {
  uuid: REMINDER_UUID,
  phone: "+13125550100",
  firstName: "Jane",
  eventType: { uuid: TYPE_UUID },
  remindTimeOffset: "PT3H",
  eventDateTime: "2026-03-10T15:00:00",
  subscriberTimeZone: "America/Chicago",
  sendEligibleSubscribersOnly: false,
  metadata: { stylist: "Alex" },
  eventAt: "2026-03-10T15:00:00.000-05:00",
  state: "scheduled",
  steps: { REMINDER: { status: "scheduled", sendAt: "2026-03-10T12:00:00.000-05:00" } },
  createdAt: "2026-03-01T12:00:01.000Z",
  updatedAt: "2026-03-01T12:00:01.000Z",
};

const unknownType: ResponseDoc = { description: "No appointment type of the company has this uuid" };
const unknownMessage: ResponseDoc = { description: "No appointment message of the company has this uuid" };
const unknownReminder: ResponseDoc = { description: "No reminder of the company has this uuid" };
const endedAlready: ResponseDoc = { description: "Invalid fields, or the reminder has ended (canceled, no-show, or past)" };

export const createTypeDocs: RouteDocs = {
  operationId: "createAppointmentType",
  tag: TYPES,
  description: "An appointment type: its uuid is the `eventType.uuid` of its messages and reminders.",
  responses: { 200: { description: "The new type", schema: appointmentType, example: typeExample } },
  example: { body: { type: "Haircut" } },
};

export const getTypeDocs: RouteDocs = {
  operationId: "getAppointmentType",
  tag: TYPES,
  params: { uuid: "The type's uuid" },
  responses: { 200: { description: "The type", schema: appointmentType, example: typeExample }, 404: unknownType },
  example: { params: { uuid: TYPE_UUID }, after: ["createAppointmentType"] },
};

export const createMessageDocs: RouteDocs = {
  operationId: "createAppointmentMessage",
  tag: TYPES,
  description: "The text an appointment type sends for one messageType; {macros} take their values from each reminder's metadata (or the built-in ones).",
  responses: { 200: { description: "The message, with its macros", schema: message, example: messageExample }, 404: unknownType },
  example: { body: { eventType: { uuid: TYPE_UUID }, messageType: "REMINDER", text: "See you at {eventTime}, {firstName}!" }, after: ["createAppointmentType"] },
};

export const getMessageDocs: RouteDocs = {
  operationId: "getAppointmentMessage",
  tag: TYPES,
  params: { uuid: "The message's uuid" },
  responses: { 200: { description: "The message", schema: message, example: messageExample }, 404: unknownMessage },
  example: { params: { uuid: MESSAGE_UUID }, after: ["createAppointmentType", "createAppointmentMessage"] },
};

export const updateMessageDocs: RouteDocs = {
  operationId: "updateAppointmentMessage",
  tag: TYPES,
  description: "Any subset of eventType, messageType and text; uuid and macros are never set by a request.",
  params: { uuid: "The message's uuid" },
  responses: {
    200: { description: "The message as updated", schema: message, example: { ...messageExample, text: "See you soon, {firstName}!", macros: ["firstName"] } },
    404: unknownMessage,
  },
  example: { params: { uuid: MESSAGE_UUID }, body: { text: "See you soon, {firstName}!" }, after: ["createAppointmentType", "createAppointmentMessage"] },
};

export const createReminderDocs: RouteDocs = {
  operationId: "createReminder",
  tag: REMINDERS,
  description:
    "A reminder of one appointment: the confirmation is sent now, the reminder `remindTimeOffset` before (default PT3H) and the follow-up `followUpTimeOffset` after. " +
    "`eventDateTime` without an offset is a wall-clock time in `subscriberTimeZone`. The same externalEventId for the same phone answers the existing reminder.",
  responses: { 200: { description: "The reminder and its planned sends", schema: reminder, example: reminderExample }, 404: unknownType },
  example: {
    body: {
      eventType: { uuid: TYPE_UUID },
      phone: "+13125550100",
      eventDateTime: "2026-03-10T15:00:00",
      subscriberTimeZone: "America/Chicago",
      remindTimeOffset: "PT3H",
      firstName: "Jane",
      metadata: { stylist: "Alex" },
    },
    after: ["createAppointmentType"],
  },
};

const afterReminder = ["createAppointmentType", "createReminder"];

export const getReminderDocs: RouteDocs = {
  operationId: "getReminder",
  tag: REMINDERS,
  description: "A reminder, its state and each message's send status (a reachkit addition).",
  params: { uuid: "The reminder's uuid" },
  responses: { 200: { description: "The reminder", schema: reminder, example: reminderExample }, 404: unknownReminder },
  example: { params: { uuid: REMINDER_UUID }, after: afterReminder },
};

export const updateReminderDocs: RouteDocs = {
  operationId: "updateReminder",
  tag: REMINDERS,
  description: "Any subset of the create's fields; null removes an optional one. Sends still to come are planned again.",
  params: { uuid: "The reminder's uuid" },
  responses: {
    200: {
      description: "The reminder as updated",
      schema: reminder,
      example: { ...reminderExample, eventDateTime: "2026-03-10T16:00:00", eventAt: "2026-03-10T16:00:00.000-05:00", steps: { REMINDER: { status: "scheduled", sendAt: "2026-03-10T13:00:00.000-05:00" } } },
    },
    400: endedAlready,
    404: unknownReminder,
  },
  example: { params: { uuid: REMINDER_UUID }, body: { eventDateTime: "2026-03-10T16:00:00" }, after: afterReminder },
};

/** Cancel and no-show: the reminder ends, the reminder message still to come is dropped. */
function endingDocs(operationId: string, description: string, ended: { state: string; at: "canceledAt" | "noShowAt"; reason: string; answer: string }): RouteDocs {
  const reminderStep = { status: "canceled", sendAt: "2026-03-10T12:00:00.000-05:00", reason: ended.reason };
  return {
    operationId,
    tag: REMINDERS,
    description,
    params: { uuid: "The reminder's uuid" },
    responses: {
      200: { description: ended.answer, schema: reminder, example: { ...reminderExample, state: ended.state, steps: { REMINDER: reminderStep }, [ended.at]: "2026-03-01T12:00:02.000Z" } },
      400: endedAlready,
      404: unknownReminder,
    },
    example: { params: { uuid: REMINDER_UUID }, after: afterReminder },
  };
}

export const cancelReminderDocs = endingDocs("cancelReminder", "Cancels the appointment: sends still to come are dropped and the cancellation message is sent.", {
  state: "canceled",
  at: "canceledAt",
  reason: "canceled",
  answer: "The canceled reminder",
});

export const noShowDocs = endingDocs("sendNoShowMessage", "The subscriber missed the appointment: the no-show message is sent and the follow-up dropped.", {
  state: "no_show",
  at: "noShowAt",
  reason: "no_show",
  answer: "The reminder, now a no-show",
});
