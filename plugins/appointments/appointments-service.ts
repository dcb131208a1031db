import { inject, injectable, type DataSubject, type JobHandler } from "../../src/index.ts";
import type { AppointmentMessages } from "./appointment-messages.ts";
import type { AppointmentTypes } from "./appointment-types.ts";
import { SEND_STEP_JOB, type SendStepJob } from "./reminder-plan.ts";
import type { Reminders } from "./reminders.ts";
import { APPOINTMENT_MESSAGES_SERVICE, APPOINTMENT_TYPES_SERVICE, REMINDERS_SERVICE } from "./tokens.ts";

/**
 * Appointment types, their messages and reminders, in process: the tactical
 * routes call exactly these methods, and so can a host app
 * (`kit.plugin("appointments")`) or another plugin (`APPOINTMENTS_SERVICE`).
 * Every method takes the company id first and validates its input like the
 * route (a 400 `HttpError` naming the field).
 */
@injectable()
export class AppointmentsService {
  constructor(
    @inject(APPOINTMENT_TYPES_SERVICE) readonly types: AppointmentTypes,
    @inject(APPOINTMENT_MESSAGES_SERVICE) readonly messages: AppointmentMessages,
    @inject(REMINDERS_SERVICE) readonly reminders: Reminders,
  ) {}

  /** Privacy deletion: the subject's reminders and their jobs (see `Reminders.deleteSubjectData`). */
  deleteSubjectData(subject: DataSubject): Promise<number> {
    return this.reminders.deleteSubjectData(subject);
  }

  /** @internal The plugin registers these as its durable job handlers. */
  jobHandlers(): Record<typeof SEND_STEP_JOB, JobHandler<never>> {
    return { [SEND_STEP_JOB]: (payload: SendStepJob, context) => this.reminders.sendStep(payload, context.logger) };
  }
}
