import * as v from "valibot";
import type { RouteDocs } from "../../src/index.ts";
import { TRIGGERS } from "./definition.ts";
import { EXIT_REASONS, SKIP_REASONS } from "./journey-log.ts";

const TAG = "Journeys (reachkit)";
/** The id of the journey the API reference's story creates (the real one replaces it). */
export const EXAMPLE_JOURNEY_ID = "01JQ6Z7W5T9V3KX8M2B4C6D8EF";
const ID = EXAMPLE_JOURNEY_ID;
const OWN = "reachkit's own API (not the reference service's); scopes `journeys:read` and `journeys:write`.";

const step = v.object({ type: v.picklist(["wait", "sms", "mms", "email"]), duration: v.optional(v.string()), text: v.optional(v.string()), subject: v.optional(v.string()), mediaUrl: v.optional(v.string()) });
const journey = v.object({
  id: v.string(),
  name: v.string(),
  status: v.picklist(["active", "paused"]),
  template: v.optional(v.picklist(TRIGGERS)),
  trigger: v.object({ type: v.picklist(TRIGGERS) }),
  audience: v.object({ interactedWithin: v.optional(v.string()), attributes: v.optional(v.record(v.string(), v.union([v.string(), v.number(), v.boolean()]))) }),
  steps: v.array(step),
  exitOn: v.array(v.literal("purchase")),
  window: v.string(),
  pacing: v.optional(v.object({ messagesPerUnit: v.number(), interval: v.string() })),
  createdAt: v.number(),
  updatedAt: v.number(),
});

const exampleJourney = {
  id: ID,
  name: "Cart abandonment",
  status: "active",
  template: "cart_abandonment",
  trigger: { type: "cart_abandonment" },
  audience: {},
  steps: [
    { type: "wait", duration: "PT2H" },
    { type: "sms", text: "Still thinking it over? {productName} is waiting in your cart at {companyName}: {productLink}" },
  ],
  exitOn: ["purchase"],
  window: "P1D",
  createdAt: 1772366400000,
  updatedAt: 1772366400000,
};

const notFoundDoc = { description: "No journey of the company has this id" };
const idParam = { id: "The journey's id (as created)" };

export const createDocs: RouteDocs = {
  operationId: "createJourney",
  tag: TAG,
  description:
    `Creates a journey: a trigger (${TRIGGERS.join(", ")}), an audience, steps (wait a duration, sms, mms, email), exits and a window of one message per person and product. ` +
    "Give `template` to start from a ready journey and change any field; without one, `name`, `trigger` and `steps` are required. " +
    "Texts may use `{firstName}`, `{lastName}`, `{companyName}` and, in a product journey, `{productName}`, `{productLink}`, `{price}`; a person without a value is skipped, never sent a broken text. " +
    `At most 100 journeys per company (409). ${OWN}`,
  responses: { 201: { description: "Created", schema: journey, example: exampleJourney } },
  example: { body: { template: "cart_abandonment", steps: exampleJourney.steps } },
};

export const listDocs: RouteDocs = {
  operationId: "listJourneys",
  tag: TAG,
  description: `The company's journeys, oldest first. ${OWN}`,
  responses: { 200: { description: "The journeys", schema: v.object({ journeys: v.array(journey) }), example: { journeys: [exampleJourney] } } },
  example: { after: ["createJourney"] },
};

export const getDocs: RouteDocs = {
  operationId: "getJourney",
  tag: TAG,
  description: `One journey. ${OWN}`,
  params: idParam,
  responses: { 200: { description: "The journey", schema: journey, example: exampleJourney }, 404: notFoundDoc },
  example: { params: { id: ID }, after: ["createJourney"] },
};

export const updateDocs: RouteDocs = {
  operationId: "updateJourney",
  tag: TAG,
  description: `Replaces the fields given (\`status\` too); the journey is validated as a whole. People already in it go on with the steps as they are when each step comes. ${OWN}`,
  params: idParam,
  responses: { 200: { description: "The journey as changed", schema: journey, example: { ...exampleJourney, window: "P2D" } }, 404: notFoundDoc },
  example: { params: { id: ID }, body: { window: "P2D" }, after: ["createJourney"] },
};

const statusDocs = (operationId: string, what: string, status: string): RouteDocs => ({
  operationId,
  tag: TAG,
  description: `${what} ${OWN}`,
  params: idParam,
  responses: { 200: { description: "The journey", schema: journey, example: { ...exampleJourney, status } }, 404: notFoundDoc },
  example: { params: { id: ID }, after: ["createJourney"] },
});

export const pauseDocs = statusDocs("pauseJourney", "Pauses a journey: nobody enters it, and people waiting in it leave it when their next step comes.", "paused");
export const resumeDocs = statusDocs("resumeJourney", "Resumes a paused journey: people enter it again from the next trigger on.", "active");

export const deleteDocs: RouteDocs = {
  operationId: "deleteJourney",
  tag: TAG,
  description: `Deletes a journey: nobody enters it, and people waiting in it leave it when their next step comes, with nothing sent. ${OWN}`,
  params: idParam,
  responses: { 204: { description: "Deleted (empty body)" }, 404: notFoundDoc },
  example: { params: { id: ID }, after: ["createJourney"] },
};

const counts = (reasons: readonly string[]) => v.object(Object.fromEntries(reasons.map((reason) => [reason, v.number()])));

export const statsDocs: RouteDocs = {
  operationId: "getJourneyStats",
  tag: TAG,
  description:
    "What the journey did: people entered, messages sent, sends deferred to the end of quiet hours, people skipped and exited by reason, and purchases within 7 days of one of its messages with their order totals by currency (from purchase events). " +
    OWN,
  params: idParam,
  responses: {
    200: {
      description: "The journey's figures",
      schema: v.object({
        entered: v.number(),
        sent: v.number(),
        deferredForQuietHours: v.number(),
        skipped: counts(SKIP_REASONS),
        exited: counts(EXIT_REASONS),
        purchases: v.number(),
        revenue: v.record(v.string(), v.number()),
      }),
      example: {
        entered: 120,
        sent: 97,
        deferredForQuietHours: 14,
        skipped: { no_consent: 6, frequency_cap: 2, missing_macro: 0, no_phone: 0, audience: 0, email_unavailable: 0 },
        exited: { purchased: 15, journey_paused: 0, journey_deleted: 0, person_unknown: 0, no_product: 0 },
        purchases: 11,
        revenue: { USD: 843.5 },
      },
    },
    404: notFoundDoc,
  },
  example: { params: { id: ID }, after: ["createJourney"] },
};
