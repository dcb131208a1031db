import { Duration } from "luxon";
import * as v from "valibot";
import { invalidFields, issuesToDetails, type ErrorDetail } from "../../src/index.ts";
import { EVENT_KINDS, type EventKind } from "../profiles/index.ts";

/** How deep and/or/not may nest, and how many conditions one rule may hold. */
export const MAX_RULE_DEPTH = 5;
export const MAX_RULE_CONDITIONS = 50;
/** The longest look-back of an event or product condition. */
export const MAX_WITHIN = Duration.fromObject({ days: 365 });

export const CONSENT_STATES = ["active", "pending", "unsubscribed", "none"] as const;
export const ATTRIBUTE_OPERATORS = ["eq", "ne", "gt", "gte", "lt", "lte", "exists", "contains"] as const;
export const PRODUCT_ACTIONS = ["viewed", "carted", "bought"] as const;

/** An attribute or property value a condition compares with. */
export type ConditionValue = string | number | boolean;

export interface ConsentCondition {
  channel: "TEXT" | "EMAIL";
  type: "MARKETING" | "TRANSACTIONAL";
  state: (typeof CONSENT_STATES)[number];
}
export interface AttributeCondition {
  name: string;
  op: (typeof ATTRIBUTE_OPERATORS)[number];
  value?: ConditionValue;
}
export interface EventCondition {
  kind: EventKind;
  /** A custom event's type. */
  type?: string;
  /** false: did not do it within the window. */
  did: boolean;
  within: string;
  /** A custom event's properties, each equal. */
  properties?: Record<string, ConditionValue>;
}
export interface ProductCondition {
  action: (typeof PRODUCT_ACTIONS)[number];
  within: string;
  category?: string;
  collection?: string;
  brand?: string;
  tag?: string;
  minPrice?: number;
  maxPrice?: number;
}

export type SegmentRule =
  | { and: SegmentRule[] }
  | { or: SegmentRule[] }
  | { not: SegmentRule }
  | { consent: ConsentCondition }
  | { attribute: AttributeCondition }
  | { event: EventCondition }
  | { product: ProductCondition };

const within = v.pipe(
  v.string("must be an ISO 8601 duration such as P30D"),
  v.check((text) => {
    const duration = Duration.fromISO(text);
    return duration.isValid && duration.toMillis() > 0 && duration.toMillis() <= MAX_WITHIN.toMillis();
  }, "must be an ISO 8601 duration from PT1S to P365D, such as P30D"),
);
const name = (max: number) => v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(max, `must be at most ${max} characters`));
const scalar = v.union([v.string(), v.number(), v.boolean()], "must be a string, a number or a boolean");
const price = v.pipe(v.number("must be a number"), v.minValue(0, "must be 0 or more"));

const conditionSchemas = {
  consent: v.object({
    channel: v.picklist(["TEXT", "EMAIL"], "must be TEXT or EMAIL"),
    type: v.optional(v.picklist(["MARKETING", "TRANSACTIONAL"], "must be MARKETING or TRANSACTIONAL"), "MARKETING"),
    state: v.optional(v.picklist(CONSENT_STATES, `must be one of ${CONSENT_STATES.join(", ")}`), "active"),
  }),
  attribute: v.pipe(
    v.object({ name: name(100), op: v.optional(v.picklist(ATTRIBUTE_OPERATORS, `must be one of ${ATTRIBUTE_OPERATORS.join(", ")}`), "eq"), value: v.optional(scalar) }),
    v.forward(
      v.check((condition) => condition.op === "exists" || condition.value !== undefined, "is required unless op is exists"),
      ["value"],
    ),
  ),
  event: v.object({
    kind: v.optional(v.picklist(EVENT_KINDS, `must be one of ${EVENT_KINDS.join(", ")}`), "custom"),
    type: v.optional(name(100)),
    did: v.optional(v.boolean("must be true or false"), true),
    within,
    properties: v.optional(v.pipe(v.record(v.string(), scalar, "must be an object of values"), v.check((properties) => Object.keys(properties).length <= 20, "must have at most 20 properties"))),
  }),
  product: v.object({
    action: v.picklist(PRODUCT_ACTIONS, `must be one of ${PRODUCT_ACTIONS.join(", ")}`),
    within,
    category: v.optional(name(64)),
    collection: v.optional(name(256)),
    brand: v.optional(name(256)),
    tag: v.optional(name(64)),
    minPrice: v.optional(price),
    maxPrice: v.optional(price),
  }),
} as const;

const KEYS = ["and", "or", "not", ...(Object.keys(conditionSchemas) as Array<keyof typeof conditionSchemas>)] as const;

/**
 * Checks a segment rule and returns it with its defaults applied; throws the
 * 400 naming every field at fault (`rule.and.1.event.within`). A hand walk
 * over the tree, each condition checked by its valibot schema, so that a
 * mistake deep in an `or` is named where it is rather than as "no branch of
 * the union matched".
 */
export function parseSegmentRule(input: unknown, root = "rule"): SegmentRule {
  const errors: ErrorDetail[] = [];
  let conditions = 0;
  const walk = (node: unknown, path: string, depth: number): SegmentRule | undefined => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return void errors.push({ path, message: `must be an object with one of ${KEYS.join(", ")}` });
    const keys = Object.keys(node);
    const key = keys[0];
    if (keys.length !== 1 || !(KEYS as readonly string[]).includes(key!)) return void errors.push({ path, message: `must have exactly one of ${KEYS.join(", ")}` });
    const value = (node as Record<string, unknown>)[key!];
    if (key === "and" || key === "or" || key === "not") {
      if (depth >= MAX_RULE_DEPTH) return void errors.push({ path, message: `nests and, or and not at most ${MAX_RULE_DEPTH} deep` });
      if (key === "not") {
        const inner = walk(value, `${path}.not`, depth + 1);
        return inner && { not: inner };
      }
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RULE_CONDITIONS) return void errors.push({ path: `${path}.${key}`, message: `must be a list of 1 to ${MAX_RULE_CONDITIONS} rules` });
      const inner = value.map((item, index) => walk(item, `${path}.${key}.${index}`, depth + 1));
      return inner.every(Boolean) ? ({ [key]: inner } as SegmentRule) : undefined;
    }
    if (++conditions === MAX_RULE_CONDITIONS + 1) errors.push({ path: root, message: `must hold at most ${MAX_RULE_CONDITIONS} conditions` });
    const result = v.safeParse(conditionSchemas[key as keyof typeof conditionSchemas], value, { abortEarly: false });
    if (!result.success) return void errors.push(...issuesToDetails(result.issues, `${path}.${key}`).map((detail) => (detail.path.startsWith(`${path}.`) ? detail : { ...detail, path: `${path}.${key}.${detail.path}` })));
    return { [key!]: result.output } as SegmentRule;
  };
  const rule = walk(input, root, 0);
  if (errors.length > 0 || !rule) throw invalidFields(errors);
  return rule;
}

/** The longest look-back of a rule's event and product conditions (their events are read once per page of people). */
export function longestWithin(rule: SegmentRule): number | undefined {
  if ("and" in rule) return maxOf(rule.and.map(longestWithin));
  if ("or" in rule) return maxOf(rule.or.map(longestWithin));
  if ("not" in rule) return longestWithin(rule.not);
  if ("event" in rule) return durationMs(rule.event.within);
  if ("product" in rule) return durationMs(rule.product.within);
  return undefined;
}

/** Whether a rule reads consent or the catalog (so its evaluation fetches them for the page). */
export function ruleUses(rule: SegmentRule, what: "consent" | "product"): boolean {
  if ("and" in rule) return rule.and.some((inner) => ruleUses(inner, what));
  if ("or" in rule) return rule.or.some((inner) => ruleUses(inner, what));
  if ("not" in rule) return ruleUses(rule.not, what);
  return what in rule;
}

/** Durations already parsed: a scan asks for its rule's windows at every event of every person it reads. */
const parsedDurations = new Map<string, number>();
/** Enough for every window of the segments one process scans; past it the cache starts over. */
const PARSED_DURATIONS_KEPT = 1000;

/** The milliseconds of an ISO 8601 duration (already validated), parsed once. */
export function durationMs(text: string): number {
  let ms = parsedDurations.get(text);
  if (ms === undefined) {
    if (parsedDurations.size >= PARSED_DURATIONS_KEPT) parsedDurations.clear();
    ms = Duration.fromISO(text).toMillis();
    parsedDurations.set(text, ms);
  }
  return ms;
}

function maxOf(values: ReadonlyArray<number | undefined>): number | undefined {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : Math.max(...known);
}
