import * as v from "valibot";
import { invalidFields, parseOrThrow, plainObject, type ErrorDetail } from "../../src/index.ts";
import { isKnownEvent, KNOWN_EVENTS } from "./event-catalog.ts";
import { urlProblem } from "./target-policy.ts";

/** More names than there are events is a mistake; the bound keeps an error answer small. */
const MAX_EVENT_NAMES = 100;
const events = v.pipe(v.array(v.string("must be a string"), "must be a list of event names"), v.maxLength(MAX_EVENT_NAMES, `must list at most ${MAX_EVENT_NAMES} events`));

/** `POST /v1/webhooks` (the reference's CreateWebhookRequestDto). */
export const createWebhookSchema = plainObject({
  url: v.string("must be a string"),
  events,
});

/** `PUT /v1/webhooks/{id}` (UpdateWebhookRequestDto): any subset. */
export const updateWebhookSchema = plainObject({
  url: v.optional(v.string("must be a string")),
  events: v.optional(events),
  disabled: v.optional(v.boolean("must be true or false")),
});

export interface WebhookInput {
  url: string;
  events: string[];
}

export interface WebhookPatch {
  url?: string;
  events?: string[];
  disabled?: boolean;
}

/** Validates a create body: 400 naming each field, unknown event names listed beside the known ones. */
export function parseWebhookInput(body: unknown, allowPrivateTargets: boolean): WebhookInput {
  const input = parseOrThrow(createWebhookSchema, body, "body");
  throwIfProblems([...checkUrl(input.url, allowPrivateTargets), ...checkEvents(input.events)]);
  return { url: input.url, events: [...new Set(input.events)] };
}

export function parseWebhookPatch(body: unknown, allowPrivateTargets: boolean): WebhookPatch {
  const input = parseOrThrow(updateWebhookSchema, body, "body");
  throwIfProblems([...(input.url !== undefined ? checkUrl(input.url, allowPrivateTargets) : []), ...(input.events !== undefined ? checkEvents(input.events) : [])]);
  const patch: WebhookPatch = {};
  if (input.url !== undefined) patch.url = input.url;
  if (input.events !== undefined) patch.events = [...new Set(input.events)];
  if (input.disabled !== undefined) patch.disabled = input.disabled;
  return patch;
}

function checkUrl(url: string, allowPrivateTargets: boolean): ErrorDetail[] {
  const problem = urlProblem(url, allowPrivateTargets);
  return problem ? [{ path: "url", message: problem }] : [];
}

function checkEvents(names: readonly string[]): ErrorDetail[] {
  if (names.length === 0) return [{ path: "events", message: "must name at least one event" }];
  const unknown = names.flatMap((name, index) => (isKnownEvent(name) ? [] : [{ path: `events.${index}`, message: `unknown event "${name.slice(0, 100)}"; known events: ${KNOWN_EVENTS.join(", ")}` }]));
  return unknown;
}

function throwIfProblems(details: ErrorDetail[]): void {
  if (details.length > 0) throw invalidFields(details);
}
