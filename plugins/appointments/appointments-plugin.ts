import { ACCOUNTS, definePlugin } from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { AppointmentMessages } from "./appointment-messages.ts";
import { AppointmentTypes } from "./appointment-types.ts";
import { AppointmentsService } from "./appointments-service.ts";
import { appointmentsCommands } from "./commands.ts";
import { appointmentCollections } from "./records.ts";
import { Reminders } from "./reminders.ts";
import { appointmentRoutes } from "./routes.ts";
import { StepSender } from "./step-sender.ts";
import { APPOINTMENT_MESSAGES_SERVICE, APPOINTMENT_TYPES_SERVICE, APPOINTMENTS_SERVICE, REMINDERS_SERVICE, STEP_SENDER } from "./tokens.ts";

/** The in-process service of the appointments plugin (`kit.plugin("appointments")`). */
export type AppointmentsApi = AppointmentsService;

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    appointments: AppointmentsApi;
  }
}

/**
 * Appointment types, their messages and reminders on the tactical host (legacy
 * token): `/events/types`, `/events/types/messages`, `/events/reminders`. Every
 * timed send is a durable job keyed by reminder and step; every text goes
 * through the outbox. Needs the subscriptions plugin (consent before each send).
 */
export function appointmentsPlugin() {
  return definePlugin({
    name: "appointments",
    requires: [ACCOUNTS, SUBSCRIPTIONS_SERVICE],
    collections: appointmentCollections,
    commands: appointmentsCommands,
    register({ container }) {
      container.bind(APPOINTMENT_TYPES_SERVICE, { useClass: AppointmentTypes });
      container.bind(APPOINTMENT_MESSAGES_SERVICE, { useClass: AppointmentMessages });
      container.bind(STEP_SENDER, { useClass: StepSender });
      container.bind(REMINDERS_SERVICE, { useClass: Reminders });
      container.bind(APPOINTMENTS_SERVICE, { useClass: AppointmentsService });
    },
    routes: ({ resolve }) => appointmentRoutes(resolve(APPOINTMENTS_SERVICE)),
    jobs: ({ resolve }) => resolve(APPOINTMENTS_SERVICE).jobHandlers(),
    api: ({ resolve }): AppointmentsApi => resolve(APPOINTMENTS_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(APPOINTMENTS_SERVICE).deleteSubjectData(subject),
  });
}
