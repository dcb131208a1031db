import * as v from "valibot";
import { channelOf, OUTBOX_STATUSES, type AnyRoute, type Outbox, type OutboxMessage, type OutboxStatus } from "../../src/index.ts";
import { pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { pageDocs } from "./docs.ts";
import { content, pager, status, table, when, whyNot } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { personLink } from "./subscribers.ts";

const isStatus = (value: string | undefined): value is OutboxStatus => OUTBOX_STATUSES.includes(value as OutboxStatus);

/** A recipient as a link to their page: a phone's or an email's. */
const recipientLink = (base: string, message: OutboxMessage): SafeHtml =>
  html`<a href="${personLink(base, channelOf(message) === "email" ? { email: message.to } : { phone: message.to })}">${message.to}</a>`;

/** The outbox: every text and email of the company, newest first, by status or recipient, with the provider's error of each failure. */
export function messageRoutes(deps: ConsoleDeps, outbox: Outbox): AnyRoute[] {
  return [
    pageRoute(deps, {
      path: "/messages",
      section: "messages",
      summary: "Show the console's messages",
      docs: pageDocs({
        operationId: "showConsoleMessages",
        description:
          "The company's texts and emails, newest first, 50 a page: all, or in one delivery status (queued, sent, delivered, undelivered, failed, suppressed), or to one phone or email address, " +
          "each with its channel, an email's subject, and the provider's error code and reason when it failed, was not delivered or was suppressed.",
        query: v.object({
          status: v.optional(v.picklist(OUTBOX_STATUSES)),
          to: v.optional(v.pipe(v.string(), v.description("E.164, or an email address"))),
          after: v.optional(v.pipe(v.string(), v.description("The cursor of the next page"))),
        }),
        example: { query: { status: "sent" } },
      }),
      async render(viewer, context) {
        const chosen = queryText(context, "status");
        const statusFilter = isStatus(chosen) ? chosen : undefined;
        const to = queryText(context, "to");
        const after = queryText(context, "after");
        const page = await outbox.page(viewer.company.id, { status: statusFilter, to, after });
        const rows = page.items.map(
          (message) => html`<tr>
<td>${when(message.createdAt)}</td><td>${recipientLink(viewer.base, message)}</td><td>${channelOf(message)}<br><span class="muted">${message.kind}</span></td>
<td>${status(message.status)}</td><td class="wrap">${whyNot(message)}</td><td class="wrap">${content(message)}</td>
<td>${message.sentAt ? when(message.sentAt) : ""}${message.deliveredAt ? html`<br>delivered ${when(message.deliveredAt)}` : ""}${message.providerMessageId ? html`<br><code>${message.providerMessageId}</code>` : ""}</td></tr>`,
        );
        const path = `${viewer.base}/messages`;
        const options = ["", ...OUTBOX_STATUSES].map((value) => html`<option value="${value}"${value === (statusFilter ?? "") ? " selected" : ""}>${value || "any"}</option>`);
        return {
          title: "Messages",
          section: "messages",
          body: html`<h1>Messages</h1>
<form method="get" action="${path}" class="filters" role="search">
<div><label for="status">Status</label><select id="status" name="status">${options}</select></div>
<div><label for="to">To (phone or email)</label><input type="text" id="to" name="to" value="${to ?? ""}" placeholder="+12025550123"></div>
<div><button type="submit">Filter</button></div>
</form>
${table("Messages", ["Created", "To", "Channel and kind", "Status", "Provider error or reason", "Subject and text", "Sent"], rows, "No messages match.")}
${pager(path, { status: statusFilter, to, after }, page.nextCursor)}`,
        };
      },
    }),
  ];
}
