import * as v from "valibot";
import type { AnyRoute } from "../../src/index.ts";
import { maskEmail, maskPhone, type PrivacyRequests } from "../privacy/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { status, table, when } from "./format.ts";
import { html } from "./html.ts";
import { actionForm } from "./layout.ts";

/** Privacy (deletion) requests: the list, and an owner's new request. */
export function privacyRoutes(deps: ConsoleDeps, privacy: PrivacyRequests): AnyRoute[] {
  return [
    pageRoute(deps, {
      path: "/privacy",
      section: "privacy",
      summary: "Show the console's privacy requests",
      docs: pageDocs({
        operationId: "showConsolePrivacyRequests",
        description: "The company's deletion requests, newest first: whom they are about (masked once processed), when they are due and what they removed. An owner files a new one here.",
      }),
      async render(viewer, context) {
        const requests = (await privacy.list(viewer.company.id)).reverse();
        // The subject stays masked in the list even before processing: the list is read by every viewer.
        const subject = (request: (typeof requests)[number]) =>
          [request.subjectPhone && (request.processed ? request.subjectPhone : maskPhone(request.subjectPhone)), request.subjectEmail && (request.processed ? request.subjectEmail : maskEmail(request.subjectEmail))]
            .filter(Boolean)
            .join(", ");
        const rows = requests.map(
          (request) => html`<tr><td class="num">${request.number}</td><td>${subject(request)}</td><td>${request.origin}</td><td>${when(request.requestedAt)}</td>
<td>${status(request.processed ? "completed" : "pending")}</td><td>${request.processed ? when(request.processingEndedAt) : when(request.dueAt)}</td><td class="num">${request.removedRecords ?? ""}</td></tr>`,
        );
        const form =
          viewer.user.role === "owner"
            ? html`<h2>New deletion request</h2>${actionForm(
                viewer,
                "/privacy",
                html`<div><label for="subjectPhone">Phone</label><input type="tel" id="subjectPhone" name="subjectPhone" placeholder="+12025550123"></div>
<div><label for="subjectEmail">Email</label><input type="email" id="subjectEmail" name="subjectEmail"></div>
<div><label for="requestMsg">Note (optional)</label><input type="text" id="requestMsg" name="requestMsg"></div>
<div><button type="submit" class="danger">Delete this person's data</button></div>`,
                { class: "stack card", label: "New deletion request" },
              )}`
            : "";
        return {
          title: "Privacy requests",
          section: "privacy",
          notice: queryText(context, "done") === "requested" ? "The request is recorded; the person's data is deleted when it is due." : undefined,
          body: html`<h1>Privacy requests</h1>
${table("Privacy requests", ["#", "About", "From", "Requested", "State", "Due or done", "Records removed"], rows, "No requests.")}
${form}`,
        };
      },
    }),
    actionRoute(deps, {
      path: "/privacy",
      section: "privacy",
      role: "owner",
      summary: "File a privacy request from the console",
      docs: actionDocs({
        operationId: "createConsolePrivacyRequest",
        description: "Files a deletion request, as POST /v1/privacy/delete-request does, with the same checks (a phone or an email, each valid).",
        after: ["showConsolePrivacyRequests"],
        fields: v.object({ csrf_token: v.string(), subjectPhone: v.optional(v.string()), subjectEmail: v.optional(v.string()), requestMsg: v.optional(v.string()) }),
        body: { subjectPhone: "+13125550199" },
        success: { status: 303, location: "/console/privacy?done=requested", description: "Filed: back to the list" },
      }),
      async run(viewer, form) {
        const given = (name: string) => (form[name]?.trim() ? form[name]!.trim() : undefined);
        await privacy.create(viewer.company.id, { subjectPhone: given("subjectPhone"), subjectEmail: given("subjectEmail"), requestMsg: given("requestMsg") }, "in_process");
        return { redirect: `${viewer.base}/privacy?done=requested` };
      },
    }),
  ];
}
