import * as v from "valibot";
import { OUTBOX_STATUSES, type AnyRoute, type Outbox, type OutboxStatus } from "../../src/index.ts";
import { pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { pageDocs } from "./docs.ts";
import { pager, status, table, when } from "./format.ts";
import { html } from "./html.ts";
import { personLink } from "./subscribers.ts";

const isStatus = (value: string | undefined): value is OutboxStatus => OUTBOX_STATUSES.includes(value as OutboxStatus);

/** The outbox: every text of the company, newest first, by status or recipient, with the provider's error of each failure. */
export function messageRoutes(deps: ConsoleDeps, outbox: Outbox): AnyRoute[] {
  return [
    pageRoute(deps, {
      path: "/messages",
      section: "messages",
      summary: "Show the console's messages",
      docs: pageDocs({
        operationId: "showConsoleMessages",
        description: "The company's texts, newest first, 50 a page: all, or in one status (queued, sent, failed, suppressed), or to one phone, each with why it failed or was suppressed.",
        query: v.object({
          status: v.optional(v.picklist(OUTBOX_STATUSES)),
          to: v.optional(v.pipe(v.string(), v.description("E.164"))),
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
<td>${when(message.createdAt)}</td><td><a href="${personLink(viewer.base, { phone: message.to })}">${message.to}</a></td><td>${message.kind}</td>
<td>${status(message.status)}</td><td class="wrap">${message.reason ?? ""}</td><td class="wrap">${message.body}</td>
<td>${message.sentAt ? when(message.sentAt) : ""}${message.providerMessageId ? html`<br><code>${message.providerMessageId}</code>` : ""}</td></tr>`,
        );
        const path = `${viewer.base}/messages`;
        const options = ["", ...OUTBOX_STATUSES].map((value) => html`<option value="${value}"${value === (statusFilter ?? "") ? " selected" : ""}>${value || "any"}</option>`);
        return {
          title: "Messages",
          section: "messages",
          body: html`<h1>Messages</h1>
<form method="get" action="${path}" class="filters" role="search">
<div><label for="status">Status</label><select id="status" name="status">${options}</select></div>
<div><label for="to">To</label><input type="tel" id="to" name="to" value="${to ?? ""}" placeholder="+12025550123"></div>
<div><button type="submit">Filter</button></div>
</form>
${table("Messages", ["Created", "To", "What", "Status", "Provider error or reason", "Text", "Sent"], rows, "No messages match.")}
${pager(path, { status: statusFilter, to, after }, page.nextCursor)}`,
        };
      },
    }),
  ];
}
