import { randomUUID } from "node:crypto";
import {
  CLOCK,
  HttpError,
  inject,
  injectable,
  invalidFields,
  JOBS,
  notFound,
  OUTBOX,
  STORAGE,
  UniqueConstraintError,
  type Clock,
  type Collection,
  type DataSubject,
  type Jobs,
  type Logger,
  type Outbox,
  type Storage,
  type Where,
} from "../../src/index.ts";
import type { AppointmentMessages } from "./appointment-messages.ts";
import type { AppointmentTypes } from "./appointment-types.ts";
import { resolveEventDateTime, TimeZoneNames } from "./event-time.ts";
import { missingMacros } from "./macros.ts";
import { REMINDERS, TIMED_STEPS, type MessageType, type Reminder, type ReminderState } from "./records.ts";
import {
  DEFAULT_REMIND_TIME_OFFSET,
  endScheduledSteps,
  planTimedSteps,
  progressOf,
  SEND_STEP_JOB,
  stepJobKey,
  type SendStepJob,
} from "./reminder-plan.ts";
import { reminderView, type ReminderView } from "./reminder-view.ts";
import { reminderParsers, type ValidReminderInput, type ValidReminderPatch } from "./schemas.ts";
import type { StepSender } from "./step-sender.ts";
import { APPOINTMENT_MESSAGES_SERVICE, APPOINTMENT_TYPES_SERVICE, STEP_SENDER } from "./tokens.ts";

/** A timed step that runs later than this after its time is logged as late. */
const LATE_AFTER_MS = 1_000;

/** Reminders per delete statement in a privacy deletion. */
const DELETE_CHUNK = 400;

export interface ReminderListOptions {
  phone?: string;
  state?: ReminderState;
  limit?: number;
}

/**
 * Appointment reminders (interface 4.15): create, update, cancel, no-show, read.
 * Each change runs in one storage transaction with the sends it makes and the
 * durable jobs it plans, so a crash leaves either all of it or none.
 */
@injectable()
export class Reminders {
  readonly #reminders: Collection<Reminder>;
  readonly #parse = reminderParsers(new TimeZoneNames());

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(APPOINTMENT_TYPES_SERVICE) private readonly types: AppointmentTypes,
    @inject(APPOINTMENT_MESSAGES_SERVICE) private readonly messages: AppointmentMessages,
    @inject(STEP_SENDER) private readonly sender: StepSender,
  ) {
    this.#reminders = storage.collection(REMINDERS);
  }

  /**
   * Creates a reminder, sends its CONFIRMATION and plans REMINDER and FOLLOW_UP.
   * 400 naming the field for invalid input, an unknown `eventType.uuid`, a macro
   * without a value, a duplicate `externalEventId` for the phone, or (with
   * `sendEligibleSubscribersOnly`) a phone without an eligible TEXT subscription.
   */
  async create(companyId: string, input: unknown): Promise<ReminderView> {
    const valid = this.#parse.input(input);
    const now = this.clock.now();
    const reminder = await this.storage.transaction(async () => {
      const settled = await this.#settle(newReminder(companyId, valid, now), undefined, now);
      settled.steps.CONFIRMATION = await this.sender.send(settled, "CONFIRMATION", now);
      await this.#write(() => this.#reminders.insert(settled));
      await this.#planJobs(settled, false);
      return settled;
    });
    return this.#view(reminder);
  }

  /**
   * Changes any subset of the fields, then plans REMINDER and FOLLOW_UP again
   * for the (maybe new) event time, replacing the pending jobs: a moved
   * appointment never gets the old reminder. No new CONFIRMATION is sent.
   * 404 for an unknown uuid; 400 for a canceled or no-show reminder.
   */
  async update(companyId: string, uuid: string, patch: unknown): Promise<ReminderView> {
    const valid = this.#parse.patch(patch);
    const now = this.clock.now();
    const reminder = await this.storage.transaction(async () => {
      const current = await this.#owned(companyId, uuid, true);
      if (current.state === "canceled" || current.state === "no_show") {
        throw new HttpError(400, "reminder_ended", `reminder ${uuid} is ${current.state === "canceled" ? "canceled" : "a no-show"}; it can no longer be updated`);
      }
      const settled = await this.#settle(applyPatch(current, valid, now), current, now);
      await this.#write(() => this.#reminders.upsert(settled));
      await this.#planJobs(settled, true);
      return settled;
    });
    return this.#view(reminder);
  }

  /**
   * Cancels: removes every pending send and sends the CANCELLATION. Calling it
   * again answers the same reminder and sends nothing. 400 after a no-show.
   */
  async cancel(companyId: string, uuid: string): Promise<ReminderView> {
    return this.#end(companyId, uuid, "canceled");
  }

  /**
   * Sends the NO_SHOW message and drops every pending send (the FOLLOW_UP is
   * skipped). Calling it again sends nothing. 400 after a cancel.
   */
  async noShow(companyId: string, uuid: string): Promise<ReminderView> {
    return this.#end(companyId, uuid, "no_show");
  }

  /** 404 unless the company has this reminder. */
  async get(companyId: string, uuid: string): Promise<ReminderView> {
    return this.#view(await this.#owned(companyId, uuid));
  }

  /** A company's reminders, newest first, optionally for one phone or in one state. */
  async list(companyId: string, options: ReminderListOptions = {}): Promise<ReminderView[]> {
    const where: Where<Reminder> = { companyId };
    if (options.phone !== undefined) where.phone = options.phone;
    if (options.state !== undefined) where.state = options.state;
    const page = await this.#reminders.find({ where, orderBy: [{ field: "createdAt", direction: "desc" }], limit: options.limit ?? 100 });
    return Promise.all(page.items.map((reminder) => this.#view(reminder)));
  }

  /**
   * @internal The job handler: sends a timed step when it is (still) due. A step
   * that runs more than a second after its time (the kit was down, or the job
   * runner behind) is logged with its lateness.
   */
  async sendStep(job: SendStepJob, logger?: Logger): Promise<void> {
    await this.storage.transaction(async () => {
      const now = this.clock.now();
      // Held to the commit: a cancel or an update at the same time waits for this step and sees it sent.
      const reminder = await this.#reminders.getForUpdate(job.reminderId);
      // A job that outlived its plan (the reminder moved, ended or was deleted) does nothing.
      if (reminder?.companyId !== job.companyId || reminder.state !== "scheduled") return;
      const step = reminder.steps[job.step];
      if (step?.status !== "scheduled" || step.sendAt === undefined || step.sendAt > now) return;
      // Run late (the kit was down at its time): a reminder of an appointment that has begun is no use.
      const tooLate = job.step === "REMINDER" && now >= reminder.eventAt;
      const outcome = tooLate ? await this.sender.skipLate(reminder, job.step, step, now) : await this.sender.send(reminder, job.step, now);
      const steps = { ...reminder.steps, [job.step]: outcome };
      await this.#reminders.update(reminder.id, { steps, state: progressOf(steps), updatedAt: now });
      const lateByMs = now - step.sendAt;
      if (lateByMs > LATE_AFTER_MS) {
        const fields = { reminderUuid: reminder.id, companyId: reminder.companyId, step: job.step, dueAt: new Date(step.sendAt).toISOString(), lateByMs };
        logger?.warn(tooLate ? "reminder step skipped: it ran late and the appointment has begun" : "reminder step sent late", fields);
      }
    });
  }

  /**
   * Deletes the subject's reminders (by phone, or by emailAddress) with their
   * pending and finished jobs. Returns how many records. The outbox's messages
   * are the core's (`outbox.deleteForRecipient`).
   */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const { companyId } = subject;
    const email = subject.email?.trim().toLowerCase();
    const phone = subject.phone?.trim();
    if (phone === undefined && email === undefined) return 0;
    return this.storage.transaction(async () => {
      const found = new Map<string, Reminder>();
      if (phone) for (const reminder of await this.#all({ companyId, phone })) found.set(reminder.id, reminder);
      if (email) for (const reminder of await this.#all({ companyId, emailAddress: email })) found.set(reminder.id, reminder);
      const ids = [...found.keys()];
      let removed = 0;
      // Chunks keep each `in` list far below the parameter limits of SQL databases.
      for (let start = 0; start < ids.length; start += DELETE_CHUNK) {
        const chunk = ids.slice(start, start + DELETE_CHUNK);
        const keys = chunk.flatMap((id) => TIMED_STEPS.map((step) => stepJobKey(id, step)));
        removed += await this.jobs.deleteWhere({ companyId, key: { in: keys } });
        removed += await this.#reminders.deleteWhere({ companyId, id: { in: chunk } });
      }
      return removed;
    });
  }

  async #end(companyId: string, uuid: string, ending: "canceled" | "no_show"): Promise<ReminderView> {
    const reminder = await this.storage.transaction(async () => {
      const current = await this.#owned(companyId, uuid, true);
      if (current.state === ending) return current;
      if (current.state === "canceled" || current.state === "no_show") {
        const was = current.state === "canceled" ? "canceled" : "a no-show";
        throw new HttpError(400, "reminder_ended", `reminder ${uuid} is ${was} already; it cannot also be ${ending === "canceled" ? "canceled" : "a no-show"}`);
      }
      const now = this.clock.now();
      const step: MessageType = ending === "canceled" ? "CANCELLATION" : "NO_SHOW";
      const ended: Reminder = {
        ...current,
        state: ending,
        steps: endScheduledSteps(current.steps, ending, now),
        updatedAt: now,
        ...(ending === "canceled" ? { canceledAt: now } : { noShowAt: now }),
      };
      // A canceled appointment frees its externalEventId for a new reminder.
      if (ending === "canceled") delete ended.externalEventKey;
      ended.steps[step] = await this.sender.send(ended, step, now);
      await this.#reminders.upsert(ended);
      for (const timed of TIMED_STEPS) await this.jobs.cancel(stepJobKey(current.id, timed));
      return ended;
    });
    return this.#view(reminder);
  }

  /**
   * Checks a new or changed reminder against the company's data and plans its
   * timed steps: the type exists, the event time resolves, every macro of the
   * type's messages has a value, the phone is eligible when it must be, and no
   * other live reminder has the same externalEventId and phone.
   */
  async #settle(next: Reminder, previous: Reminder | undefined, now: number): Promise<Reminder> {
    const { types, messages, sender } = this;
    if (next.eventTypeId !== previous?.eventTypeId) await types.referenced(next.companyId, next.eventTypeId);
    const event = resolveEventDateTime(next.eventDateTime, next.subscriberTimeZone);
    if (!event) throw invalidFields([{ path: "eventDateTime", message: "must be an ISO 8601 date and time" }]);
    next.eventAt = event.at.toMillis();

    const available = sender.availableMacros(next);
    const missing = new Map<string, MessageType[]>();
    for (const message of await messages.ofType(next.companyId, next.eventTypeId)) {
      for (const name of missingMacros(message.macros, available)) missing.set(name, [...(missing.get(name) ?? []), message.messageType]);
    }
    if (missing.size > 0) {
      throw new HttpError(
        400,
        "missing_macros",
        `metadata has no value for the macros ${[...missing.keys()].join(", ")}`,
        [...missing].map(([name, used]) => ({ path: `metadata.${name}`, message: `is required: the ${used.join(", ")} message${used.length > 1 ? "s use" : " uses"} {${name}}` })),
      );
    }

    const consentChanged = !previous || previous.phone !== next.phone || !previous.sendEligibleSubscribersOnly;
    if (next.sendEligibleSubscribersOnly && consentChanged && !(await sender.consent(next)).allowed) {
      throw new HttpError(400, "not_eligible", "sendEligibleSubscribersOnly is true and the phone has no eligible TEXT subscription", [
        { path: "phone", message: "has no active TEXT subscription at this company" },
      ]);
    }

    if (next.externalEventKey !== undefined && (next.externalEventKey !== previous?.externalEventKey || next.phone !== previous.phone)) {
      const existing = await this.#reminders.findOne({ companyId: next.companyId, externalEventKey: next.externalEventKey, phone: next.phone });
      if (existing && existing.id !== next.id) throw duplicateError(existing.id);
    }

    const steps = planTimedSteps(next, event.at, now);
    return { ...next, steps, state: progressOf(steps) };
  }

  /** Queues (or moves) the job of every scheduled timed step, and, for an update, cancels the others'. */
  async #planJobs(reminder: Reminder, replacing: boolean): Promise<void> {
    const { jobs } = this;
    for (const step of TIMED_STEPS) {
      const planned = reminder.steps[step];
      const key = stepJobKey(reminder.id, step);
      if (planned?.status === "scheduled") {
        const payload: SendStepJob = { companyId: reminder.companyId, reminderId: reminder.id, step };
        await jobs.enqueue({ type: SEND_STEP_JOB, payload, key, replace: true, runAt: planned.sendAt, companyId: reminder.companyId });
      } else if (replacing) {
        await jobs.cancel(key);
      }
    }
  }

  /**
   * The company's reminder, else a 404. `held` reads it with getForUpdate, for a transaction that writes it
   * back whole: a step job under way is waited for and seen instead of having its sent step overwritten.
   */
  async #owned(companyId: string, uuid: string, held = false): Promise<Reminder> {
    const reminder = uuid === "" ? undefined : await (held ? this.#reminders.getForUpdate(uuid) : this.#reminders.get(uuid));
    if (!reminder || reminder.companyId !== companyId) throw notFound(`no reminder ${uuid}`);
    return reminder;
  }

  async #all(where: Where<Reminder>): Promise<Reminder[]> {
    const found: Reminder[] = [];
    let after: string | undefined;
    do {
      const page = await this.#reminders.find({ where, limit: 1000, after });
      found.push(...page.items);
      after = page.nextCursor;
    } while (after);
    return found;
  }

  /** A unique-key race lost to another request: the same 400 as the check before it. */
  async #write(write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (error instanceof UniqueConstraintError && error.fields.includes("externalEventKey")) throw duplicateError(undefined);
      throw error;
    }
  }

  #view(reminder: Reminder): Promise<ReminderView> {
    return reminderView(reminder, this.outbox);
  }
}

function duplicateError(existingId: string | undefined) {
  return new HttpError(400, "duplicate_reminder", "a reminder for this externalEventId and phone exists already", [
    { path: "externalEventId", message: `already has a reminder for this phone${existingId ? ` (${existingId})` : ""}` },
  ]);
}

function newReminder(companyId: string, valid: ValidReminderInput, now: number): Reminder {
  const reminder: Reminder = {
    id: randomUUID(),
    companyId,
    eventTypeId: valid.eventType.uuid,
    phone: valid.phone,
    eventDateTime: valid.eventDateTime,
    eventAt: 0,
    subscriberTimeZone: valid.subscriberTimeZone,
    remindTimeOffset: valid.remindTimeOffset ?? DEFAULT_REMIND_TIME_OFFSET,
    sendEligibleSubscribersOnly: valid.sendEligibleSubscribersOnly ?? false,
    metadata: valid.metadata ?? {},
    state: "scheduled",
    steps: {},
    createdAt: now,
    updatedAt: now,
  };
  return applyOptionalFields(reminder, valid);
}

/** The fields of a patch over the current reminder; null removes an optional field. */
function applyPatch(current: Reminder, patch: ValidReminderPatch, now: number): Reminder {
  const next: Reminder = { ...current, updatedAt: now };
  if (patch.eventType !== undefined) next.eventTypeId = patch.eventType.uuid;
  if (patch.phone !== undefined) next.phone = patch.phone;
  if (patch.eventDateTime !== undefined) next.eventDateTime = patch.eventDateTime;
  if (patch.subscriberTimeZone !== undefined) next.subscriberTimeZone = patch.subscriberTimeZone;
  if (patch.remindTimeOffset !== undefined) next.remindTimeOffset = patch.remindTimeOffset ?? DEFAULT_REMIND_TIME_OFFSET;
  if (patch.sendEligibleSubscribersOnly !== undefined) next.sendEligibleSubscribersOnly = patch.sendEligibleSubscribersOnly ?? false;
  if (patch.metadata !== undefined) next.metadata = patch.metadata ?? {};
  return applyOptionalFields(next, patch);
}

type OptionalFields = Pick<ValidReminderPatch, "externalEventId" | "firstName" | "lastName" | "emailAddress" | "followUpTimeOffset">;

function applyOptionalFields(reminder: Reminder, fields: OptionalFields): Reminder {
  for (const key of ["externalEventId", "firstName", "lastName", "emailAddress", "followUpTimeOffset"] as const) {
    const value = fields[key];
    if (value === null) delete reminder[key];
    else if (value !== undefined) reminder[key] = value;
  }
  if (reminder.externalEventId === undefined) delete reminder.externalEventKey;
  else reminder.externalEventKey = reminder.externalEventId;
  return reminder;
}
