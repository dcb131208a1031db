import { Duration } from "luxon";
import * as v from "valibot";
import { placeholdersOf, plainObject } from "../../src/index.ts";

export const TRIGGERS = ["back_in_stock", "price_drop", "low_inventory", "cart_abandonment", "browse_abandonment", "welcome"] as const;
export type TriggerType = (typeof TRIGGERS)[number];

/** The triggers whose messages are about a product. */
export const PRODUCT_TRIGGERS: ReadonlySet<TriggerType> = new Set(["back_in_stock", "price_drop", "low_inventory", "cart_abandonment", "browse_abandonment"]);

/** Macros every journey text may use, and those only a product journey has a value for. */
export const PERSON_MACROS = ["firstName", "lastName", "companyName"] as const;
export const PRODUCT_MACROS = ["productName", "productLink", "price"] as const;

export const MAX_NAME_LENGTH = 200;
export const MAX_STEPS = 10;
export const MAX_TEXT_LENGTH = 1600;
export const MAX_SUBJECT_LENGTH = 200;
export const MAX_EMAIL_TEXT_LENGTH = 10_000;
export const MAX_AUDIENCE_ATTRIBUTES = 20;
/** The longest wait of a step, and the longest window or audience look-back. */
export const MAX_WAIT = Duration.fromObject({ days: 30 });
export const MAX_WINDOW = Duration.fromObject({ days: 90 });
/** Back in stock: requesters told per unit of inventory per wave, at most. */
export const MAX_MESSAGES_PER_UNIT = 100;

export const DEFAULT_WINDOW = "P7D";
export const DEFAULT_INTERACTED_WITHIN = "P7D";
export const DEFAULT_PACING = { messagesPerUnit: 2, interval: "PT1H" } as const;

export type JourneyStep =
  | { type: "wait"; duration: string }
  | { type: "sms"; text: string }
  /** An MMS: the product's image, or `mediaUrl` when the journey has no product. */
  | { type: "mms"; text: string; mediaUrl?: string }
  | { type: "email"; subject: string; text: string };

export interface JourneyDefinition {
  name: string;
  trigger: { type: TriggerType };
  audience: { interactedWithin?: string; attributes?: Record<string, string | number | boolean> };
  steps: JourneyStep[];
  /** Leave the journey before a send when one of these happens. */
  exitOn: Array<"purchase">;
  /** One message per person and product within this duration (ISO 8601). */
  window: string;
  /** Back in stock: how many requesters each wave tells per unit in stock, and how long between waves. */
  pacing?: { messagesPerUnit: number; interval: string };
}

/** ISO 8601 durations without a sign and with at least one component (`PT1H`, `P1D`, `P1DT12H`). */
const ISO_DURATION = /^P(?!$)(?:\d+(?:[.,]\d+)?[YMWD])*(?:T(?:\d+(?:[.,]\d+)?[HMS])+)?$/;

/** Milliseconds of an ISO 8601 duration (days are 24 hours here), or undefined. */
export function durationMs(text: string): number | undefined {
  if (!ISO_DURATION.test(text)) return undefined;
  const duration = Duration.fromISO(text);
  return duration.isValid ? duration.toMillis() : undefined;
}

const durationSchema = (max: Duration, min = 0) =>
  v.pipe(
    v.string("must be an ISO 8601 duration such as PT1H or P7D"),
    v.maxLength(32, "must be an ISO 8601 duration such as PT1H or P7D"),
    v.check((text) => {
      const ms = durationMs(text);
      return ms !== undefined && ms >= min && ms <= max.toMillis();
    }, `must be an ISO 8601 duration such as PT1H or P7D, at most ${max.toHuman({ listStyle: "narrow" })}`),
  );

const text = (max: number) => v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(max, `must be at most ${max} characters`));

const stepSchema = v.variant(
  "type",
  [
    v.object({ type: v.literal("wait"), duration: durationSchema(MAX_WAIT, 1000) }),
    v.object({ type: v.literal("sms"), text: text(MAX_TEXT_LENGTH) }),
    v.object({ type: v.literal("mms"), text: text(MAX_TEXT_LENGTH), mediaUrl: v.optional(v.pipe(v.string("must be a string"), v.url("must be a URL"), v.maxLength(2048, "must be at most 2048 characters"))) }),
    v.object({ type: v.literal("email"), subject: text(MAX_SUBJECT_LENGTH), text: text(MAX_EMAIL_TEXT_LENGTH) }),
  ],
  'must be one of {"type":"wait","duration"}, {"type":"sms","text"}, {"type":"mms","text"} or {"type":"email","subject","text"}',
);

const attributeValue = v.union([v.pipe(v.string(), v.maxLength(1024)), v.pipe(v.number(), v.finite()), v.boolean()], "must be a string, a number or a boolean");

/** The fields of a definition as a request gives them; absent ones take the template's or the defaults. */
export const definitionFields = {
  name: v.optional(text(MAX_NAME_LENGTH)),
  trigger: v.optional(plainObject({ type: v.picklist(TRIGGERS, `must be one of ${TRIGGERS.join(", ")}`) })),
  audience: v.optional(
    plainObject({
      interactedWithin: v.optional(durationSchema(MAX_WINDOW, 60_000)),
      attributes: v.optional(
        v.pipe(
          v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(200)), attributeValue, "must be an object of attribute names to values"),
          v.check((entries) => Object.keys(entries).length <= MAX_AUDIENCE_ATTRIBUTES, `must have at most ${MAX_AUDIENCE_ATTRIBUTES} attributes`),
        ),
      ),
    }),
  ),
  steps: v.optional(v.pipe(v.array(stepSchema, "must be a list of steps"), v.minLength(1, "must have at least one step"), v.maxLength(MAX_STEPS, `must have at most ${MAX_STEPS} steps`))),
  exitOn: v.optional(v.array(v.picklist(["purchase"], "must be purchase"), "must be a list")),
  window: v.optional(durationSchema(MAX_WINDOW, 60_000)),
  pacing: v.optional(
    plainObject({
      messagesPerUnit: v.pipe(v.number("must be a number"), v.minValue(0.01, "must be more than 0"), v.maxValue(MAX_MESSAGES_PER_UNIT, `must be at most ${MAX_MESSAGES_PER_UNIT}`)),
      interval: durationSchema(MAX_WAIT, 60_000),
    }),
  ),
};

export type DefinitionFields = v.InferOutput<v.ObjectSchema<typeof definitionFields, undefined>>;

export interface DefinitionProblem {
  path: string;
  message: string;
}

/** What a complete definition must also satisfy: a send step, macros it knows, fields its trigger takes. */
export function definitionProblems(definition: JourneyDefinition): DefinitionProblem[] {
  const problems: DefinitionProblem[] = [];
  const product = PRODUCT_TRIGGERS.has(definition.trigger.type);
  const known = new Set<string>([...PERSON_MACROS, ...(product ? PRODUCT_MACROS : [])]);
  if (!definition.steps.some((step) => step.type !== "wait")) problems.push({ path: "steps", message: "must have at least one sms, mms or email step" });
  definition.steps.forEach((step, index) => {
    if (step.type === "wait") return;
    for (const field of step.type === "email" ? (["subject", "text"] as const) : (["text"] as const)) {
      const unknown = placeholdersOf((step as Record<typeof field, string>)[field]).filter((name) => !known.has(name));
      if (unknown.length > 0) {
        const hint = product ? "" : ` (a ${definition.trigger.type} journey has no product)`;
        problems.push({ path: `steps.${index}.${field}`, message: `unknown macro {${unknown[0]}}${hint}; macros: ${[...known].map((name) => `{${name}}`).join(", ")}` });
      }
    }
    if (step.type === "mms" && !product && step.mediaUrl === undefined) problems.push({ path: `steps.${index}.mediaUrl`, message: "an mms step of a journey without a product needs a mediaUrl" });
  });
  if (definition.pacing !== undefined && definition.trigger.type !== "back_in_stock") problems.push({ path: "pacing", message: "only a back_in_stock journey is paced" });
  const catalogAudience = definition.trigger.type === "price_drop" || definition.trigger.type === "low_inventory";
  if (definition.audience.interactedWithin !== undefined && !catalogAudience) problems.push({ path: "audience.interactedWithin", message: "only price_drop and low_inventory journeys take it" });
  return problems;
}
