import * as v from "valibot";
import { channelOf, type AnyRoute, type Outbox, type OutboxMessage } from "../../src/index.ts";
import type { AppointmentsService } from "../appointments/index.ts";
import type { JourneysService } from "../journeys/index.ts";
import type { ProfilesService } from "../profiles/index.ts";
import type { Subscriber, SubscriptionsService } from "../subscriptions/index.ts";
import { pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { pageDocs, searchQuery } from "./docs.ts";
import { personJourneys } from "./journeys.ts";
import { profileSection } from "./profile-section.ts";
import { content, pager, searchForm, status, table, when, whyNot, withQuery } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";

export interface SubscriberPagesDeps {
  subscriptions: SubscriptionsService;
  outbox: Outbox;
  /** Absent when the kit has no appointments plugin. */
  appointments?: AppointmentsService;
  /** Absent when the kit has no profiles plugin. */
  profiles?: ProfilesService;
  /** Absent when the kit has no journeys plugin. */
  journeys?: JourneysService;
}

/** The link to a person's page: by phone, else by email. */
export function personLink(base: string, person: { phone?: string; email?: string }): string {
  return withQuery(`${base}/subscriber`, person.phone ? { phone: person.phone } : { email: person.email });
}

/** Messages shown on a person's page, newest first. */
const PERSON_MESSAGES = 50;

const name = (subscriber: Subscriber) => [subscriber.firstName, subscriber.lastName].filter(Boolean).join(" ");

/** The subscriber list (search by phone, email or id; keyset pages) and a person's page. */
export function subscriberRoutes(deps: ConsoleDeps, services: SubscriberPagesDeps): AnyRoute[] {
  const { subscriptions, outbox, appointments, profiles, journeys } = services;
  return [
    pageRoute(deps, {
      path: "/subscribers",
      section: "subscribers",
      summary: "Show the console's subscriber list",
      docs: pageDocs({
        operationId: "showConsoleSubscribers",
        description: "The company's subscribers, newest first, 50 a page, or those a search finds: digits of a phone (`+1312555`), the beginning of an email, or a subscriber id.",
        query: searchQuery("A phone's digits, an email's beginning, or a subscriber id"),
        example: { query: { q: "+1312" } },
      }),
      async render(viewer, context) {
        const q = queryText(context, "q");
        const after = queryText(context, "after");
        const page = await subscriptions.directory.page(viewer.company.id, { search: q, after });
        const rows = page.items.map(
          (subscriber) => html`<tr>
<td><a href="${personLink(viewer.base, subscriber)}">${subscriber.phone ?? subscriber.email ?? subscriber.id}</a></td>
<td>${subscriber.email ?? ""}</td><td>${name(subscriber)}</td><td>${when(subscriber.createdAt)}</td></tr>`,
        );
        const path = `${viewer.base}/subscribers`;
        return {
          title: "Subscribers",
          section: "subscribers",
          body: html`<h1>Subscribers</h1>
${searchForm(path, "Phone, email or id", q, "+1202555…")}
${table("Subscribers", ["Phone", "Email", "Name", "Since"], rows, q ? "Nobody matches this search." : "No subscribers yet.")}
${pager(path, { q, after }, page.nextCursor)}`,
        };
      },
    }),
    pageRoute(deps, {
      path: "/subscriber",
      section: "subscribers",
      summary: "Show a subscriber in the console",
      docs: pageDocs({
        operationId: "showConsoleSubscriber",
        description:
          "One person, by phone or email: their details, subscriptions with their state, the consent history (every opt-in, confirmation and opt-out, with its source), " +
          "their profile (identifiers, custom attributes, latest events), their messages and reminders. 404 when the company knows nobody by them.",
        query: v.object({ phone: v.optional(v.pipe(v.string(), v.description("E.164"))), email: v.optional(v.string()) }),
        example: { query: { phone: "+13125550100" }, after: ["addSubscriptions"] },
      }),
      async render(viewer, context) {
        const companyId = viewer.company.id;
        const phone = queryText(context, "phone");
        const email = queryText(context, "email")?.toLowerCase();
        const subscriber = phone || email ? await subscriptions.findSubscriber(companyId, { phone, email }) : undefined;
        // The person's every address: one looked up by phone has their email's subscriptions too.
        const user = { phone: subscriber?.phone ?? phone, email: subscriber?.email ?? email };
        const [held, changes] = await Promise.all([subscriptions.subscriptions(companyId, user), subscriptions.changes(companyId, user)]);
        const profile = profiles ? await profileSection(profiles, companyId, user) : undefined;
        if (!subscriber && held.length === 0 && changes.length === 0 && !profile?.found) return notFound(viewer.base);
        const messages = await messagesTo(outbox, companyId, [user.phone, user.email]);
        const reminders = appointments && user.phone ? await appointments.reminders.list(companyId, { phone: user.phone, limit: 20 }) : [];
        const who = subscriber ? [name(subscriber), subscriber.phone, subscriber.email].filter(Boolean).join(" · ") : (user.phone ?? user.email ?? "");
        const body = html`<h1>${who}</h1>
${details(subscriber)}
<h2>Subscriptions</h2>
${table(
  "Subscriptions",
  ["Channel", "Type", "Address", "State", "Since", "Source"],
  held.map((s) => html`<tr><td>${s.channel}</td><td>${s.type}</td><td>${s.address}</td><td>${status(s.state)}</td><td>${when(s.updatedAt)}</td><td>${s.source}</td></tr>`),
  "No subscriptions.",
)}
<h2>Consent history</h2>
${table(
  "Consent history",
  ["When", "Channel", "Type", "What", "From", "To", "Source", "Keyword"],
  changes.map(
    (c) => html`<tr><td>${when(c.at)}</td><td>${c.channel}</td><td>${c.type ?? ""}</td><td>${status(c.action)}</td><td>${c.from ?? ""}</td><td>${c.to ?? ""}</td><td>${c.source}</td><td>${c.keyword ?? ""}</td></tr>`,
  ),
  "Nothing recorded.",
)}
${profile?.html ?? ""}
${journeys ? await personJourneys(journeys, viewer, user) : ""}
<h2>Messages</h2>
${table(
  "Messages",
  ["When", "Channel", "What", "Status", "Text"],
  messages.map(
    (m) =>
      html`<tr><td>${when(m.createdAt)}</td><td>${channelOf(m)}</td><td>${m.kind}</td><td>${status(m.status)}${m.reason || m.errorCode ? html`<br><span class="muted">${whyNot(m)}</span>` : ""}</td><td class="wrap">${content(m)}</td></tr>`,
  ),
  "No messages.",
)}
${[user.phone, user.email].map((to) => (to ? html`<p><a href="${withQuery(`${viewer.base}/messages`, { to })}">Every message to ${to}</a></p>` : ""))}
${appointments ? html`<h2>Reminders</h2>
${table(
  "Reminders",
  ["Appointment", "State", "Created"],
  reminders.map((r) => html`<tr><td><a href="${viewer.base}/reminders/${r.uuid}">${r.eventAt}</a></td><td>${status(r.state)}</td><td>${when(r.createdAt)}</td></tr>`),
  "No reminders.",
)}` : ""}`;
        return { title: who || "Subscriber", section: "subscribers", body };
      },
    }),
  ];
}

function details(subscriber: Subscriber | undefined): SafeHtml {
  if (!subscriber) return html`<p class="muted">No subscriber record: only the history below.</p>`;
  const ids = subscriber.externalIdentifiers;
  const fields: Array<[string, string | undefined]> = [
    ["Phone", subscriber.phone],
    ["Email", subscriber.email],
    ["Name", name(subscriber) || undefined],
    ["Locale", subscriber.locale ? `${subscriber.locale.language}-${subscriber.locale.country}` : undefined],
    ["Client user id", ids?.clientUserId],
    ["Storefront id", ids?.shopifyId],
    ["Marketing platform id", ids?.klaviyoId],
    ...(ids?.customIdentifiers ?? []).map((custom): [string, string] => [custom.name, custom.value]),
    ["Subscriber id", subscriber.id],
    ["Since", when(subscriber.createdAt)],
  ];
  return html`<section class="card"><dl class="fields">${fields
    .filter((field): field is [string, string] => field[1] !== undefined)
    .map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl></section>`;
}

/** A person's latest messages to any of their addresses (a phone's texts, an email's emails), newest first. */
async function messagesTo(outbox: Outbox, companyId: string, addresses: readonly (string | undefined)[]): Promise<OutboxMessage[]> {
  const pages = await Promise.all(addresses.filter((to): to is string => to !== undefined).map((to) => outbox.page(companyId, { to, limit: PERSON_MESSAGES })));
  return pages
    .flatMap((page) => page.items)
    .sort((a, b) => b.createdAt - a.createdAt)
    .slice(0, PERSON_MESSAGES);
}

const notFound = (base: string) => ({
  title: "Not found",
  section: "subscribers" as const,
  status: 404,
  body: html`<h1>Not found</h1><p class="alert" role="alert">The company knows nobody by this phone or email.</p><p><a href="${base}/subscribers">Back to subscribers</a></p>`,
});
