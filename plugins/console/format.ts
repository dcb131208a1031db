import type { OutboxMessage } from "../../src/index.ts";
import { html, type SafeHtml } from "./html.ts";

/** A time as people read it, in UTC (the kit keeps no zone per company). */
export function when(at: number | string | undefined): string {
  if (at === undefined) return "";
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return String(at);
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const GOOD = new Set(["sent", "delivered", "active", "completed", "opt_in", "confirmed", "resubscribed", "owner", "for sale", "enabled"]);
const BAD = new Set(["failed", "undelivered", "unsubscribed", "expired", "canceled", "no_show", "skipped", "not for sale", "cancelled", "disabled"]);
const WAITING = new Set(["queued", "pending", "scheduled", "initialized", "validating", "validated", "processing", "sending"]);

/** A status as a labelled badge: the word carries the meaning, the colour only repeats it. */
export function status(value: string): SafeHtml {
  const tone = GOOD.has(value) ? "good" : BAD.has(value) ? "bad" : WAITING.has(value) ? "wait" : "none";
  return html`<span class="status ${tone}">${value.replace(/_/g, " ")}</span>`;
}

/** A link with the query of a list page (empty values left out). */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(name, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** A table in a scrolling frame, with a caption for screen readers and an empty state. */
export function table(caption: string, head: readonly string[], rows: readonly SafeHtml[], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  // Focusable, so that a table wider than the screen scrolls from the keyboard too.
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption}"><table>
<caption class="skip">${caption}</caption>
<thead><tr>${head.map((cell) => html`<th scope="col">${cell}</th>`)}</tr></thead>
<tbody>
${rows}
</tbody>
</table></div>`;
}

/** "Next page" and "first page" links of a keyset list. */
export function pager(path: string, query: Record<string, string | undefined>, nextCursor: string | undefined): SafeHtml {
  const links = [
    query.after ? html`<a href="${withQuery(path, { ...query, after: undefined })}">First page</a>` : "",
    nextCursor ? html`<a href="${withQuery(path, { ...query, after: nextCursor })}" rel="next">Next page</a>` : "",
  ];
  return html`<nav class="pager" aria-label="Pages">${links}</nav>`;
}

/** UTC days ending today, oldest first: `[start, end)` each. */
export function lastDays(now: number, count: number): Array<{ start: number; end: number }> {
  const DAY = 86_400_000;
  const today = Math.floor(now / DAY) * DAY;
  return Array.from({ length: count }, (_, index) => {
    const start = today - (count - 1 - index) * DAY;
    return { start, end: start + DAY };
  });
}

/** The search box of a list page: a GET form, so a search is a link like any page. */
export function searchForm(path: string, label: string, value: string | undefined, placeholder = ""): SafeHtml {
  return html`<form method="get" action="${path}" class="filters" role="search">
<div><label for="q">${label}</label><input type="search" id="q" name="q" value="${value ?? ""}"${placeholder ? html` placeholder="${placeholder}"` : ""}></div>
<div><button type="submit">Search</button></div>
</form>`;
}

/** The provider's error code and why a message failed, was not delivered or was suppressed. */
export const whyNot = (message: OutboxMessage): SafeHtml =>
  html`${message.errorCode ? html`<code>${message.errorCode}</code> ` : ""}${message.reason ?? ""}`;

/** What was sent: an email's subject above its text. */
export const content = (message: OutboxMessage): SafeHtml => html`${message.subject !== undefined ? html`<strong>${message.subject}</strong><br>` : ""}${message.body}`;

export const sumOf = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
export const words = (value: string) => value.replace(/_/g, " ");
/** Order totals by currency. */
export const money = (revenue: Record<string, number>) =>
  Object.entries(revenue)
    .map(([currency, total]) => `${total.toFixed(2)} ${currency}`)
    .join(", ") || "none";

/** The counts of one kind (skipped, exited) by reason: every reason, so a zero reads as none. */
export const byReason = (caption: string, counts: Record<string, number>) =>
  table(
    caption,
    ["Reason", "People"],
    Object.entries(counts).map(([reason, count]) => html`<tr><td>${words(reason)}</td><td class="num">${count}</td></tr>`),
    "None.",
  );
