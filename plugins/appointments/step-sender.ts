import { ACCOUNTS, EVENTS, fillPlaceholders, inject, injectable, OUTBOX, type Accounts, type EventBus, type Outbox } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import type { AppointmentMessages } from "./appointment-messages.ts";
import { eventDateAndTime } from "./event-time.ts";
import { macroValuesOf, missingMacros, type MacroValues } from "./macros.ts";
import type { MessageType, Reminder, ReminderStep, SkipReason } from "./records.ts";
import { textConsent } from "./send-consent.ts";
import { APPOINTMENT_MESSAGES_SERVICE } from "./tokens.ts";
import "./step-events.ts";

/** Built-in macros filled from the reminder's own fields, when it has them. */
const FIELD_MACROS = ["firstName", "lastName", "emailAddress"] as const;
/** Built-in macros every reminder fills (the event's date and time in the subscriber's zone). */
const ALWAYS_FILLED_MACROS = ["phone", "companyName", "eventDate", "eventTime"] as const;
/** What a reminder fills macros from: metadata, then these built-ins for names metadata does not give. */
export const BUILT_IN_MACROS: readonly string[] = [...FIELD_MACROS, ...ALWAYS_FILLED_MACROS];

/** The parts of a reminder that fill macros and decide consent. */
export type ReminderFacts = Pick<
  Reminder,
  "companyId" | "phone" | "firstName" | "lastName" | "emailAddress" | "eventAt" | "subscriberTimeZone" | "metadata" | "sendEligibleSubscribersOnly"
>;

/**
 * Sends one step of a reminder through the outbox, or says why not: no message
 * of that type, no consent (see `textConsent`), or a macro nothing fills. The
 * outbox's idempotency key is reminder × step × event time, so a step that runs
 * again sends nothing twice, and a moved appointment's new reminder is a new message.
 * Each outcome is an event (`appointment.step.queued` or `.skipped`), emitted in
 * the caller's transaction.
 */
@injectable()
export class StepSender {
  constructor(
    @inject(APPOINTMENT_MESSAGES_SERVICE) private readonly messages: AppointmentMessages,
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(EVENTS) private readonly events: EventBus,
  ) {}

  async send(reminder: Reminder, step: MessageType, now: number): Promise<ReminderStep> {
    const outcome = await this.#send(reminder, step, now);
    await this.announce(reminder, step, outcome);
    return outcome;
  }

  /** A step skipped because its time passed (the job ran late): the outcome, announced. */
  async skipLate(reminder: Reminder, step: MessageType, planned: ReminderStep, now: number): Promise<ReminderStep> {
    const outcome = { ...planned, status: "skipped" as const, reason: "time_passed" as SkipReason, at: now };
    await this.announce(reminder, step, outcome);
    return outcome;
  }

  /** Emits the step's event, inside the caller's transaction. */
  async announce(reminder: Reminder, step: MessageType, outcome: ReminderStep): Promise<void> {
    if (outcome.status !== "queued" && outcome.status !== "skipped") return;
    await this.events.emit(outcome.status === "queued" ? "appointment.step.queued" : "appointment.step.skipped", {
      companyId: reminder.companyId,
      reminderUuid: reminder.id,
      eventTypeUuid: reminder.eventTypeId,
      ...(reminder.externalEventId !== undefined ? { externalEventId: reminder.externalEventId } : {}),
      step,
      phone: reminder.phone,
      eventAt: outcome.eventAt,
      ...(outcome.messageId !== undefined ? { messageId: outcome.messageId } : {}),
      ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
      at: outcome.at ?? reminder.updatedAt,
    });
  }

  async #send(reminder: Reminder, step: MessageType, now: number): Promise<ReminderStep> {
    const outcome = { eventAt: reminder.eventAt, at: now, ...(reminder.steps[step]?.sendAt !== undefined ? { sendAt: reminder.steps[step].sendAt } : {}) };
    const message = await this.messages.forStep(reminder.companyId, reminder.eventTypeId, step);
    if (!message) return { ...outcome, status: "skipped", reason: "no_message" };
    const consent = await this.consent(reminder);
    if (!consent.allowed) return { ...outcome, status: "skipped", reason: consent.reason };
    const values = await this.macroValues(reminder, message.macros);
    const missing = missingMacros(message.macros, new Set(Object.keys(values)));
    if (missing.length > 0) return { ...outcome, status: "skipped", reason: "missing_macros", missingMacros: missing };
    const queued = await this.outbox.send({
      companyId: reminder.companyId,
      to: reminder.phone,
      body: fillPlaceholders(message.text, values),
      kind: `appointment_${step.toLowerCase()}`,
      idempotencyKey: `appointments:${reminder.id}:${step}:${reminder.eventAt}`,
      tags: { reminderUuid: reminder.id, eventTypeUuid: reminder.eventTypeId, step },
    });
    return { ...outcome, status: "queued", messageId: queued.id };
  }

  /** The rule of `textConsent`, on the phone's subscriptions now. */
  async consent(reminder: Pick<ReminderFacts, "companyId" | "phone" | "sendEligibleSubscribersOnly">) {
    const subscriptions = await this.subscriptions.subscriptions(reminder.companyId, { phone: reminder.phone });
    return textConsent(subscriptions, reminder.sendEligibleSubscribersOnly);
  }

  /** The macro names a reminder fills: its metadata's, and the built-ins it has (a company always has a name). */
  availableMacros(reminder: ReminderFacts): Set<string> {
    const names = new Set<string>(ALWAYS_FILLED_MACROS);
    for (const field of FIELD_MACROS) if (reminder[field] !== undefined) names.add(field);
    for (const name of Object.keys(macroValuesOf(reminder.metadata))) names.add(name);
    return names;
  }

  /**
   * The values of `names`: metadata first (the caller's explicit values), then
   * the built-ins it leaves out. Only what the text uses is computed (dates
   * cost time-zone work, the company name a lookup).
   */
  async macroValues(reminder: ReminderFacts, names: readonly string[]): Promise<MacroValues> {
    const metadata = macroValuesOf(reminder.metadata);
    const wanted = new Set(names.filter((name) => !Object.hasOwn(metadata, name)));
    const builtIns: Record<string, string> = {};
    if (wanted.has("phone")) builtIns.phone = reminder.phone;
    for (const field of FIELD_MACROS) {
      const value = reminder[field];
      if (wanted.has(field) && value !== undefined) builtIns[field] = value;
    }
    if (wanted.has("eventDate") || wanted.has("eventTime")) Object.assign(builtIns, eventDateAndTime(reminder.eventAt, reminder.subscriberTimeZone));
    if (wanted.has("companyName")) {
      const company = await this.accounts.getCompany(reminder.companyId);
      if (company) builtIns.companyName = company.name;
    }
    return { ...builtIns, ...metadata };
  }
}
