import { defineToken } from "../../src/index.ts";
import type { AppointmentMessages } from "./appointment-messages.ts";
import type { AppointmentTypes } from "./appointment-types.ts";
import type { AppointmentsService } from "./appointments-service.ts";
import type { Reminders } from "./reminders.ts";
import type { StepSender } from "./step-sender.ts";

const PROVIDER = "reachkit/plugins/appointments (appointmentsPlugin)";
/** The appointments service, for other plugins (`requires: [APPOINTMENTS_SERVICE]`, then `resolve`). */
export const APPOINTMENTS_SERVICE = defineToken<AppointmentsService>("AppointmentsService", [PROVIDER]);
export const APPOINTMENT_TYPES_SERVICE = defineToken<AppointmentTypes>("AppointmentTypes", [PROVIDER]);
export const APPOINTMENT_MESSAGES_SERVICE = defineToken<AppointmentMessages>("AppointmentMessages", [PROVIDER]);
export const STEP_SENDER = defineToken<StepSender>("StepSender", [PROVIDER]);
export const REMINDERS_SERVICE = defineToken<Reminders>("Reminders", [PROVIDER]);
