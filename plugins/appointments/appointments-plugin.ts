import { ACCOUNTS } from "../../src/auth/accounts.ts";
import { definePlugin } from "../../src/kernel/plugin.ts";
import { defineToken } from "../../src/kernel/token.ts";
import { SUBSCRIPTIONS_SERVICE } from "../subscriptions/index.ts";
import { AppointmentsService } from "./appointments-service.ts";
import { appointmentsCommands } from "./commands.ts";
import { appointmentCollections } from "./records.ts";
import { appointmentRoutes } from "./routes.ts";

/** The in-process service of the appointments plugin (`kit.plugin("appointments")`). */
export type AppointmentsApi = AppointmentsService;

declare module "../../src/kernel/plugin.ts" {
  interface PluginApis {
    appointments: AppointmentsApi;
  }
}

/** The appointments service, for other plugins (`requires: [APPOINTMENTS_SERVICE]`, then `resolve`). */
export const APPOINTMENTS_SERVICE = defineToken<AppointmentsService>("AppointmentsService", ["reachkit/plugins/appointments (appointmentsPlugin)"]);

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
    register({ container, storage, clock, jobs, outbox, events }) {
      container.bind(APPOINTMENTS_SERVICE, {
        useFactory: (c) =>
          new AppointmentsService({
            storage,
            clock,
            jobs,
            outbox,
            events,
            subscriptions: () => c.resolve(SUBSCRIPTIONS_SERVICE),
            accounts: () => c.resolve(ACCOUNTS),
          }),
      });
    },
    routes: ({ resolve }) => appointmentRoutes(resolve(APPOINTMENTS_SERVICE)),
    jobs: ({ resolve }) => resolve(APPOINTMENTS_SERVICE).jobHandlers(),
    api: ({ resolve }): AppointmentsApi => resolve(APPOINTMENTS_SERVICE),
    deleteSubjectData: ({ resolve }, subject) => resolve(APPOINTMENTS_SERVICE).deleteSubjectData(subject),
  });
}
