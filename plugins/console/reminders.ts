import * as v from "valibot";
import type { AnyRoute } from "../../src/index.ts";
import { EXAMPLE_REMINDER_UUID, MESSAGE_TYPES, type AppointmentsService, type ReminderState, type ReminderView } from "../appointments/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { status, table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";
import { personLink } from "./subscribers.ts";

const STATES: readonly ReminderState[] = ["scheduled", "completed", "canceled", "no_show"];
const isState = (value: string | undefined): value is ReminderState => STATES.includes(value as ReminderState);
const UUID_PARAM = { uuid: "The reminder's uuid" };

/** Appointment reminders: the latest, one with its steps, and an owner's cancel and no-show. */
export function reminderRoutes(deps: ConsoleDeps, appointments: AppointmentsService): AnyRoute[] {
  const ending = (action: "cancel" | "no-show", operationId: string, label: string, description: string) =>
    actionRoute(deps, {
      path: `/reminders/:uuid/${action}`,
      section: "reminders",
      role: "owner",
      summary: `${label} from the console`,
      docs: actionDocs({
        operationId,
        description,
        params: UUID_PARAM,
        exampleParams: { uuid: EXAMPLE_REMINDER_UUID },
        after: ["createAppointmentType", "createReminder", "showConsoleReminder"],
        fields: v.object({ csrf_token: v.string() }),
        body: {},
        success: { status: 303, location: `/console/reminders/${EXAMPLE_REMINDER_UUID}`, description: "Done: back to the reminder" },
      }),
      async run(viewer, _form, context) {
        const uuid = context.params.uuid ?? "";
        const reminders = appointments.reminders;
        await (action === "cancel" ? reminders.cancel(viewer.company.id, uuid) : reminders.noShow(viewer.company.id, uuid));
        return { redirect: `${viewer.base}/reminders/${encodeURIComponent(uuid)}` };
      },
    });
  return [
    pageRoute(deps, {
      path: "/reminders",
      section: "reminders",
      summary: "Show the console's appointment reminders",
      docs: pageDocs({
        operationId: "showConsoleReminders",
        description: "The company's latest 100 appointment reminders, newest first, all or in one state, or of one phone.",
        query: v.object({ state: v.optional(v.picklist(STATES)), phone: v.optional(v.pipe(v.string(), v.description("E.164"))) }),
        example: { query: { state: "scheduled" } },
      }),
      async render(viewer, context) {
        const chosen = queryText(context, "state");
        const state = isState(chosen) ? chosen : undefined;
        const phone = queryText(context, "phone");
        const reminders = await appointments.reminders.list(viewer.company.id, { state, phone, limit: 100 });
        const rows = reminders.map(
          (reminder) => html`<tr><td><a href="${viewer.base}/reminders/${reminder.uuid}">${reminder.eventAt}</a></td><td><a href="${personLink(viewer.base, { phone: reminder.phone })}">${reminder.phone}</a></td>
<td>${[reminder.firstName, reminder.lastName].filter(Boolean).join(" ")}</td><td>${status(reminder.state)}</td><td>${when(reminder.createdAt)}</td></tr>`,
        );
        const path = `${viewer.base}/reminders`;
        const options = ["", ...STATES].map((value) => html`<option value="${value}"${value === (state ?? "") ? " selected" : ""}>${value.replace("_", " ") || "any"}</option>`);
        return {
          title: "Reminders",
          section: "reminders",
          body: html`<h1>Appointment reminders</h1>
<form method="get" action="${path}" class="filters" role="search">
<div><label for="state">State</label><select id="state" name="state">${options}</select></div>
<div><label for="phone">Phone</label><input type="tel" id="phone" name="phone" value="${phone ?? ""}"></div>
<div><button type="submit">Filter</button></div>
</form>
${table("Reminders", ["Appointment", "Phone", "Name", "State", "Created"], rows, "No reminders match.")}`,
        };
      },
    }),
    pageRoute(deps, {
      path: "/reminders/:uuid",
      section: "reminders",
      summary: "Show an appointment reminder in the console",
      docs: pageDocs({
        operationId: "showConsoleReminder",
        description: "One reminder: the appointment, and each step (confirmation, reminder, follow-up, cancellation, no-show) with when it is or was sent, its message's status, or why it was skipped.",
        params: UUID_PARAM,
        example: { params: { uuid: EXAMPLE_REMINDER_UUID }, after: ["createAppointmentType", "createReminder"] },
      }),
      async render(viewer, context) {
        const reminder = await appointments.reminders.get(viewer.company.id, context.params.uuid ?? "");
        return { title: "Reminder", section: "reminders", body: reminderBody(viewer, reminder) };
      },
    }),
    ending("cancel", "cancelConsoleReminder", "Cancel a reminder", "Cancels the reminder, as POST /events/reminders/{uuid}/cancel does: pending sends are dropped and the cancellation text goes out."),
    ending("no-show", "markConsoleReminderNoShow", "Mark a reminder a no-show", "Marks the appointment a no-show, as POST /events/reminders/{uuid}/no-show does: the no-show text goes out and the follow-up is dropped."),
  ];
}

function reminderBody(viewer: Viewer, reminder: ReminderView): SafeHtml {
  const steps = MESSAGE_TYPES.flatMap((type) => {
    const step = reminder.steps[type];
    if (!step) return [];
    const why = step.reason ? `${step.reason.replace(/_/g, " ")}${step.missingMacros ? `: ${step.missingMacros.join(", ")}` : ""}` : "";
    return [html`<tr><td>${type.replace("_", " ")}</td><td>${status(step.status)}</td><td>${step.sendAt ?? ""}</td><td>${why}</td><td>${step.messageId ? html`<code>${step.messageId}</code>` : ""}</td></tr>`];
  });
  const live = reminder.state === "scheduled";
  const actions =
    live && viewer.user.role === "owner"
      ? html`<div class="card">${actionForm(viewer, `/reminders/${reminder.uuid}/cancel`, html`<button type="submit" class="danger">Cancel the appointment</button>`, { class: "inline" })}
${actionForm(viewer, `/reminders/${reminder.uuid}/no-show`, html`<button type="submit" class="secondary">Mark a no-show</button>`, { class: "inline" })}</div>`
      : "";
  return html`<h1>Reminder for ${reminder.eventAt}</h1>
<section class="card"><dl class="fields">
<dt>State</dt><dd>${status(reminder.state)}</dd>
<dt>Phone</dt><dd><a href="${personLink(viewer.base, { phone: reminder.phone })}">${reminder.phone}</a></dd>
<dt>Name</dt><dd>${[reminder.firstName, reminder.lastName].filter(Boolean).join(" ")}</dd>
<dt>Appointment</dt><dd>${reminder.eventDateTime} (${reminder.subscriberTimeZone})</dd>
<dt>Reminds</dt><dd>${reminder.remindTimeOffset} before${reminder.followUpTimeOffset ? `, follows up ${reminder.followUpTimeOffset} after` : ""}</dd>
${reminder.externalEventId ? html`<dt>External id</dt><dd>${reminder.externalEventId}</dd>` : ""}
<dt>Created</dt><dd>${when(reminder.createdAt)}</dd>
</dl></section>
${actions}
<h2>Steps</h2>
${table("Steps", ["Step", "Status", "Sends at", "Why skipped", "Message"], steps, "No steps.")}
<p><a href="${viewer.base}/reminders">All reminders</a></p>`;
}
