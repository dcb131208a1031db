import {
  CliUsageError,
  companyOption,
  formatFields,
  formatTable,
  HttpError,
  requiredOption,
  stringOption,
  type CliCommand,
  type CliValues,
} from "../../src/index.ts";
import type { ReminderState } from "./records.ts";
import type { ReminderView } from "./reminder-view.ts";

const REMINDER_STATES: readonly ReminderState[] = ["scheduled", "completed", "canceled", "no_show"];

/** A refused input or an unknown record is the operator's mistake: a one-line error, exit code 2. */
async function asUsageErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof HttpError) throw new CliUsageError([error.message, ...error.details.map((d) => `${d.path}: ${d.message}`)].join("; "));
    throw error;
  }
}

function stateOption(values: CliValues): ReminderState | undefined {
  const state = stringOption(values, "state");
  if (state !== undefined && !REMINDER_STATES.includes(state as ReminderState)) throw new CliUsageError(`--state must be one of ${REMINDER_STATES.join(", ")}`);
  return state as ReminderState | undefined;
}

function limitOption(values: CliValues): number {
  const text = stringOption(values, "limit") ?? "50";
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliUsageError("--limit must be a whole number from 1 to 1000");
  return limit;
}

const stepSummary = (reminder: ReminderView) =>
  Object.entries(reminder.steps)
    .map(([step, view]) => `${step}:${view.status}`)
    .join(" ");

export const appointmentsCommands: readonly CliCommand[] = [
  {
    name: "appointment-types create",
    summary: "Create an appointment type and print its uuid (the eventType.uuid of messages and reminders)",
    options: { ...companyOption, type: { type: "string", description: "The type's name", required: true, placeholder: "NAME" } },
    async run(values, context) {
      const kit = await context.openKit();
      const type = await asUsageErrors(() => kit.plugin("appointments").types.create(requiredOption(values, "company"), { type: requiredOption(values, "type") }));
      return { json: type, text: formatFields({ ...type }) };
    },
  },
  {
    name: "appointment-types list",
    summary: "List a company's appointment types and their messages",
    options: companyOption,
    async run(values, context) {
      const appointments = (await context.openKit()).plugin("appointments");
      const companyId = requiredOption(values, "company");
      const types = await appointments.types.list(companyId);
      const withMessages = await Promise.all(
        types.map(async (type) => ({ ...type, messages: (await appointments.messages.ofType(companyId, type.uuid)).map((m) => ({ uuid: m.id, messageType: m.messageType, text: m.text })) })),
      );
      return {
        json: withMessages,
        text: withMessages.length === 0 ? "(none)" : withMessages.map((t) => [`${t.uuid}  ${t.type}`, ...t.messages.map((m) => `  ${m.messageType}  ${m.uuid}\n    ${m.text}`)].join("\n")).join("\n"),
      };
    },
  },
  {
    name: "reminders list",
    summary: "List a company's reminders, newest first, with the state of each send",
    options: {
      ...companyOption,
      phone: { type: "string", description: "Only this E.164 phone", placeholder: "PHONE" },
      state: { type: "string", description: `Only this state: ${REMINDER_STATES.join(", ")}`, placeholder: "STATE" },
      limit: { type: "string", description: "At most this many (default 50)", placeholder: "N" },
    },
    async run(values, context) {
      const options = { phone: stringOption(values, "phone"), state: stateOption(values), limit: limitOption(values) };
      const reminders = await (await context.openKit()).plugin("appointments").reminders.list(requiredOption(values, "company"), options);
      return {
        json: reminders,
        text: formatTable(reminders.map((r) => ({ uuid: r.uuid, phone: r.phone, eventAt: r.eventAt, state: r.state, steps: stepSummary(r) }))),
      };
    },
  },
  {
    name: "reminders show",
    summary: "Show one reminder: its fields, state, and when each step is or was sent",
    options: { ...companyOption, uuid: { type: "string", description: "Reminder uuid", required: true, placeholder: "UUID" } },
    async run(values, context) {
      const kit = await context.openKit();
      const reminder = await asUsageErrors(() => kit.plugin("appointments").reminders.get(requiredOption(values, "company"), requiredOption(values, "uuid")));
      const steps = Object.entries(reminder.steps).map(([step, view]) => ({ step, ...view }));
      return {
        json: reminder,
        text: `${formatFields({ uuid: reminder.uuid, phone: reminder.phone, eventType: reminder.eventType.uuid, eventDateTime: reminder.eventDateTime, subscriberTimeZone: reminder.subscriberTimeZone, eventAt: reminder.eventAt, state: reminder.state })}\n${formatTable(
          steps.map((s) => ({ step: s.step, status: s.status, sendAt: s.sendAt ?? "", reason: s.reason ?? "", messageId: s.messageId ?? "" })),
        )}`,
      };
    },
  },
];
