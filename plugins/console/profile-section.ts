import type { EventRecord, ProfilesService } from "../profiles/index.ts";
import { table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";

/** Events shown on a person's page, newest first. */
export const TIMELINE_EVENTS = 50;

/** What an event says, in one line: its type or kind, its items, its order. */
function summary(event: EventRecord): string {
  const items = (event.items ?? []).map((item) => `${item.name ?? item.productId}${item.quantity && item.quantity > 1 ? ` × ${item.quantity}` : ""}`);
  const parts = [
    event.kind === "custom" ? (event.type ?? "custom") : event.kind.replace(/_/g, " "),
    items.length > 0 ? items.join(", ") : "",
    event.orderId ? `order ${event.orderId}` : "",
    event.properties ? JSON.stringify(event.properties) : "",
  ];
  return parts.filter(Boolean).join(" · ");
}

/**
 * A person's profile on their page (when the kit has the profiles plugin): the
 * identifiers linked to them, their custom attributes and their latest events.
 */
export async function profileSection(profiles: ProfilesService, companyId: string, person: { phone?: string; email?: string }): Promise<{ found: boolean; html: SafeHtml }> {
  const profile =
    (person.phone ? await profiles.show(companyId, { kind: "phone", value: person.phone }) : undefined) ??
    (person.email ? await profiles.show(companyId, { kind: "email", value: person.email }) : undefined);
  if (!profile) return { found: false, html: html`<h2>Profile</h2><p class="muted">No profile: no event or attribute was recorded for this person.</p>` };
  const timeline = await profiles.events(companyId, profile.id, { first: TIMELINE_EVENTS });
  const section = html`<h2>Profile</h2>
${table(
  "Identifiers",
  ["Identifier", "Value", "Linked"],
  profile.identifiers.map((identifier) => html`<tr><td>${identifier.kind === "custom" ? identifier.name : identifier.kind}</td><td>${identifier.value}</td><td>${when(identifier.linkedAt)}</td></tr>`),
  "No identifiers.",
)}
<h2>Attributes</h2>
${table(
  "Attributes",
  ["Name", "Value", "Type", "Set"],
  profile.attributes.map((attribute) => html`<tr><td>${attribute.name}</td><td class="wrap">${String(attribute.value)}</td><td>${attribute.type}</td><td>${when(attribute.setAt)}</td></tr>`),
  "No attributes.",
)}
<h2>Events</h2>
${table(
  "Events",
  ["When", "Event"],
  timeline.events.map((event) => html`<tr><td>${when(event.occurredAt)}${event.late ? html` <span class="muted">(late)</span>` : ""}</td><td class="wrap">${summary(event)}</td></tr>`),
  "No events.",
)}
${timeline.hasNextPage ? html`<p class="muted">The latest ${TIMELINE_EVENTS} events are shown.</p>` : ""}`;
  return { found: true, html: section };
}
