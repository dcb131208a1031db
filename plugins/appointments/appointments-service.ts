import type { Accounts } from "../../src/auth/accounts.ts";
import type { EventBus } from "../../src/events/event-bus.ts";
import type { JobHandler } from "../../src/jobs/job-runner.ts";
import type { Jobs } from "../../src/jobs/jobs.ts";
import type { DataSubject } from "../../src/kernel/plugin.ts";
import type { Outbox } from "../../src/messaging/outbox.ts";
import type { Clock } from "../../src/ports/clock.ts";
import type { Storage } from "../../src/ports/storage.ts";
import type { SubscriptionsService } from "../subscriptions/index.ts";
import { AppointmentMessages } from "./appointment-messages.ts";
import { AppointmentTypes } from "./appointment-types.ts";
import { SEND_STEP_JOB, type SendStepJob } from "./reminder-plan.ts";
import { Reminders } from "./reminders.ts";
import { StepSender } from "./step-sender.ts";

/** What the service is built from (the plugin binds it with a factory). */
export interface AppointmentsServiceParts {
  storage: Storage;
  clock: Clock;
  jobs: Jobs;
  outbox: Outbox;
  events: EventBus;
  subscriptions: () => SubscriptionsService;
  accounts: () => Accounts;
}

/**
 * Appointment types, their messages and reminders, in process: the tactical
 * routes call exactly these methods, and so can a host app
 * (`kit.plugin("appointments")`) or another plugin (`APPOINTMENTS_SERVICE`).
 * Every method takes the company id first and validates its input like the
 * route (a 400 `HttpError` naming the field).
 */
export class AppointmentsService {
  readonly types: AppointmentTypes;
  readonly messages: AppointmentMessages;
  readonly reminders: Reminders;

  constructor(parts: AppointmentsServiceParts) {
    this.types = new AppointmentTypes(parts.storage, parts.clock);
    this.messages = new AppointmentMessages(parts.storage, parts.clock, this.types);
    const sender = new StepSender(this.messages, parts.subscriptions, parts.accounts, parts.outbox, parts.events);
    this.reminders = new Reminders({ ...parts, types: this.types, messages: this.messages, sender });
  }

  /** Privacy deletion: the subject's reminders and their jobs (see `Reminders.deleteSubjectData`). */
  deleteSubjectData(subject: DataSubject): Promise<number> {
    return this.reminders.deleteSubjectData(subject);
  }

  /** @internal The plugin registers these as its durable job handlers. */
  jobHandlers(): Record<typeof SEND_STEP_JOB, JobHandler<never>> {
    return { [SEND_STEP_JOB]: (payload: SendStepJob, context) => this.reminders.sendStep(payload, context.logger) };
  }
}
