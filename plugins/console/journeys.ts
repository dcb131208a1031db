import * as v from "valibot";
import { notFound, type AnyRoute } from "../../src/index.ts";
import { EXAMPLE_JOURNEY_ID, type JourneyRecord, type JourneysService, type JourneyStats, type JourneyStep } from "../journeys/index.ts";
import type { Identifier } from "../profiles/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { byReason, money, status, sumOf, table, when, words } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";

const ID_PARAM = { journeyId: "The journey's id" };

/** Outcomes of journey actions, shown at the top of the page after the redirect. */
const NOTICES: Readonly<Record<string, string>> = {
  paused: "The journey is paused: it takes nobody in, and its waiting people leave it at their next step.",
  resumed: "The journey runs again.",
  deleted: "The journey is deleted: its waiting people leave it at their next step.",
};

function stepText(step: JourneyStep): SafeHtml {
  switch (step.type) {
    case "wait":
      return html`<code>${step.duration}</code>`;
    case "email":
      return html`<strong>${step.subject}</strong><br>${step.text}`;
    default:
      return html`${step.text}${step.type === "mms" && step.mediaUrl ? html`<br><code>${step.mediaUrl}</code>` : ""}`;
  }
}

/** The company's journeys with their results; a journey's definition and results; an owner's pause, resume and delete. */
export function journeyRoutes(deps: ConsoleDeps, journeys: JourneysService): AnyRoute[] {
  const ownJourney = async (viewer: Viewer, journeyId: string | undefined): Promise<JourneyRecord> => {
    const journey = await journeys.get(viewer.company.id, journeyId ?? "");
    if (!journey) throw notFound();
    return journey;
  };
  const change = (action: "pause" | "resume" | "delete", operationId: string, description: string) =>
    actionRoute(deps, {
      path: `/journeys/:journeyId/${action}`,
      section: "journeys",
      role: "owner",
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} a journey from the console`,
      docs: actionDocs({
        operationId,
        description,
        params: ID_PARAM,
        exampleParams: { journeyId: EXAMPLE_JOURNEY_ID },
        after: ["createJourney", "showConsoleJourney"],
        fields: v.object({ csrf_token: v.string() }),
        body: {},
        success:
          action === "delete"
            ? { status: 303, location: "/console/journeys?done=deleted", description: "Done: back to the journeys" }
            : { status: 303, location: `/console/journeys/${EXAMPLE_JOURNEY_ID}?done=${action}d`, description: "Done: back to the journey" },
      }),
      async run(viewer, _form, context) {
        const journey = await ownJourney(viewer, context.params.journeyId);
        const companyId = viewer.company.id;
        if (action === "delete") {
          await journeys.delete(companyId, journey.id);
          return { redirect: `${viewer.base}/journeys?done=deleted` };
        }
        await (action === "pause" ? journeys.pause(companyId, journey.id) : journeys.resume(companyId, journey.id));
        return { redirect: `${viewer.base}/journeys/${encodeURIComponent(journey.id)}?done=${action}d` };
      },
    });
  const done = { done: v.optional(v.pipe(v.string(), v.description("The action just done (its message is shown)"))) };
  return [
    pageRoute(deps, {
      path: "/journeys",
      section: "journeys",
      summary: "Show the console's journeys",
      docs: pageDocs({
        operationId: "showConsoleJourneys",
        description: "The company's journeys with their results: people entered, messages sent, people skipped, purchases attributed and their order totals.",
        query: v.object(done),
        example: { after: ["createJourney"] },
      }),
      async render(viewer, context) {
        const companyId = viewer.company.id;
        const list = await journeys.list(companyId);
        const rows = [];
        for (const journey of list) {
          const stats = (await journeys.stats(companyId, journey.id))!;
          rows.push(html`<tr><td><a href="${viewer.base}/journeys/${journey.id}">${journey.name}</a></td><td>${words(journey.trigger.type)}</td><td>${status(journey.status)}</td>
<td class="num">${stats.entered}</td><td class="num">${stats.sent}</td><td class="num">${sumOf(stats.skipped)}</td><td class="num">${stats.purchases}</td><td>${money(stats.revenue)}</td></tr>`);
        }
        const chosen = queryText(context, "done");
        return {
          title: "Journeys",
          section: "journeys",
          notice: chosen ? NOTICES[chosen] : undefined,
          body: html`<h1>Journeys</h1>
${table("Journeys", ["Journey", "Trigger", "Status", "Entered", "Sent", "Skipped", "Purchases", "Order totals"], rows, "No journeys: create one with the API or reachkit journeys create.")}
<p class="muted">Purchases are those made within 7 days of one of the journey's messages.</p>`,
        };
      },
    }),
    pageRoute(deps, {
      path: "/journeys/:journeyId",
      section: "journeys",
      summary: "Show a journey in the console",
      docs: pageDocs({
        operationId: "showConsoleJourney",
        description: "One journey: its trigger, audience, window and steps, and its results (entered, sent, deferred for quiet hours, skipped and exited by reason, purchases and order totals).",
        params: ID_PARAM,
        example: { params: { journeyId: EXAMPLE_JOURNEY_ID }, after: ["createJourney"] },
      }),
      async render(viewer, context) {
        const journey = await ownJourney(viewer, context.params.journeyId);
        const stats = (await journeys.stats(viewer.company.id, journey.id))!;
        const chosen = queryText(context, "done");
        return { title: journey.name, section: "journeys", notice: chosen ? NOTICES[chosen] : undefined, body: journeyBody(viewer, journey, stats) };
      },
    }),
    change("pause", "pauseConsoleJourney", "Pauses the journey, as POST /v1/journeys/{id}/pause does: it takes nobody in, and its waiting people leave it when their next step comes."),
    change("resume", "resumeConsoleJourney", "Resumes a paused journey, as POST /v1/journeys/{id}/resume does."),
    change("delete", "deleteConsoleJourney", "Deletes the journey, as DELETE /v1/journeys/{id} does: its waiting people leave it when their next step comes."),
  ];
}

function journeyBody(viewer: Viewer, journey: JourneyRecord, stats: JourneyStats): SafeHtml {
  const audience = [
    journey.audience.interactedWithin ? `interacted within ${journey.audience.interactedWithin}` : "",
    ...Object.entries(journey.audience.attributes ?? {}).map(([name, value]) => `${name} = ${String(value)}`),
  ].filter(Boolean);
  const actions =
    viewer.user.role === "owner"
      ? html`<div class="card">${actionForm(viewer, `/journeys/${journey.id}/${journey.status === "active" ? "pause" : "resume"}`, html`<button type="submit" class="secondary">${journey.status === "active" ? "Pause" : "Resume"} the journey</button>`, { class: "inline" })}
${actionForm(viewer, `/journeys/${journey.id}/delete`, html`<button type="submit" class="danger">Delete the journey</button>`, { class: "inline" })}</div>`
      : "";
  const figures: Array<[string, string | number]> = [
    ["Entered", stats.entered],
    ["Sent", stats.sent],
    ["Deferred for quiet hours", stats.deferredForQuietHours],
    ["Skipped", sumOf(stats.skipped)],
    ["Purchases", stats.purchases],
    ["Order totals", money(stats.revenue)],
  ];
  return html`<h1>${journey.name}</h1>
<section class="card"><dl class="fields">
<dt>Status</dt><dd>${status(journey.status)}</dd>
<dt>Trigger</dt><dd>${words(journey.trigger.type)}</dd>
${journey.template ? html`<dt>Template</dt><dd>${words(journey.template)}</dd>` : ""}
<dt>Audience</dt><dd>${audience.length > 0 ? audience.join("; ") : "everyone the trigger finds"}</dd>
<dt>Window</dt><dd>one message per person and product within <code>${journey.window}</code></dd>
<dt>Exits on</dt><dd>${journey.exitOn.length > 0 ? journey.exitOn.join(", ") : "nothing"}</dd>
${journey.pacing ? html`<dt>Pacing</dt><dd>${journey.pacing.messagesPerUnit} per unit in stock, every <code>${journey.pacing.interval}</code></dd>` : ""}
<dt>Created</dt><dd>${when(journey.createdAt)}</dd>
<dt>Changed</dt><dd>${when(journey.updatedAt)}</dd>
<dt>Id</dt><dd><code>${journey.id}</code></dd>
</dl></section>
${actions}
<h2>Steps</h2>
${table("Steps", ["#", "Step", "What"], journey.steps.map((step, index) => html`<tr><td class="num">${index + 1}</td><td>${step.type}</td><td class="wrap">${stepText(step)}</td></tr>`), "No steps.")}
<h2>Results</h2>
<div class="grid">${figures.map(([label, value]) => html`<section class="card"><h3>${label}</h3><p class="figure">${value}</p></section>`)}</div>
<h3>Skipped, by reason</h3>
${byReason("Skipped, by reason", stats.skipped)}
<h3>Left the journey, by reason</h3>
${byReason("Left the journey, by reason", stats.exited)}
<p><a href="${viewer.base}/journeys">All journeys</a></p>`;
}

/** The journeys a person is or was in, on their page. */
export async function personJourneys(journeys: JourneysService, viewer: Viewer, person: { phone?: string; email?: string }): Promise<SafeHtml> {
  const identifiers: Identifier[] = [];
  if (person.phone) identifiers.push({ kind: "phone", value: person.phone });
  if (person.email) identifiers.push({ kind: "email", value: person.email });
  const entries = await journeys.journeysOf(viewer.company.id, identifiers);
  return html`<h2>Journeys</h2>
${table(
  "Journeys",
  ["Journey", "Product", "State", "Step", "Entered", "Last message", "Why it ended"],
  entries.map(
    ({ journey, enrollment }) => html`<tr><td><a href="${viewer.base}/journeys/${journey.id}">${journey.name}</a></td><td>${enrollment.subject?.name ?? enrollment.subject?.variantId ?? ""}</td>
<td>${status(enrollment.state)}</td><td class="num">${enrollment.state === "waiting" ? enrollment.step + 1 : ""}</td><td>${when(enrollment.enteredAt)}</td><td>${when(enrollment.sentAt)}</td><td>${enrollment.reason ? words(enrollment.reason) : ""}</td></tr>`,
  ),
  "In no journey.",
)}`;
}
