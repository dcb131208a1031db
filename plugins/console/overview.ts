import * as v from "valibot";
import type { AnyRoute, Clock, Outbox, OutboxStatus } from "../../src/index.ts";
import type { CatalogApi } from "../catalog/index.ts";
import type { SubscriptionsService } from "../subscriptions/index.ts";
import { pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { pageDocs } from "./docs.ts";
import { lastDays, table } from "./format.ts";
import { html, SafeHtml } from "./html.ts";

/** The periods the overview offers, in days. */
export const PERIODS = [7, 30, 90] as const;

export interface OverviewDeps {
  subscriptions: SubscriptionsService;
  outbox: Outbox;
  clock: Clock;
  catalog?: CatalogApi;
}

interface Chart {
  id: string;
  title: string;
  series: string[];
  /** Day starts, epoch ms. */
  days: number[];
  /** One list per series, a value per day. */
  values: number[][];
  bars?: boolean;
}

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * A chart drawn by uPlot from the JSON beside it, and the same numbers as a
 * table (for a browser without script, and for screen readers).
 */
function chart(data: Chart): SafeHtml {
  // Safe inside a script element: no "<" can close it.
  const json = JSON.stringify({ series: data.series, days: data.days.map((at) => at / 1000), values: data.values, bars: data.bars ?? false }).replace(/</g, "\\u003c");
  const rows = data.days.map((at, index) => html`<tr><th scope="row">${day(at)}</th>${data.values.map((values) => html`<td class="num">${values[index]}</td>`)}</tr>`);
  return html`<section class="card" data-chart aria-labelledby="${data.id}-title">
<h2 id="${data.id}-title">${data.title}</h2>
<div class="chart" aria-hidden="true"></div>
<script type="application/json">${new SafeHtml(json)}</script>
<details><summary>The numbers</summary>
${table(data.title, ["Day", ...data.series], rows, "")}
</details>
</section>`;
}

/** The statuses of the messages chart: those a message ends in or waits in. */
const CHART_STATUSES = ["delivered", "sent", "undelivered", "failed", "queued", "suppressed"] as const satisfies readonly OutboxStatus[];

/**
 * The share of messages that reached their recipient: delivered by receipt,
 * or taken by the provider without a receipt (yet), over those and the ones
 * undelivered by receipt or refused by the provider.
 */
export function deliveryRate(counts: { delivered: number; sent: number; undelivered: number; failed: number }) {
  const reached = counts.delivered + counts.sent;
  const handedOver = reached + counts.undelivered;
  const tried = handedOver + counts.failed;
  return { handedOver, delivered: counts.delivered, undelivered: counts.undelivered, shown: tried === 0 ? "none sent" : `${((100 * reached) / tried).toFixed(1)}%` };
}

/** Opt-ins and opt-outs, messages by status, the delivery rate and catalog uploads over a chosen period. */
export function overviewRoutes(deps: ConsoleDeps, services: OverviewDeps): AnyRoute[] {
  return [
    pageRoute(deps, {
      path: "",
      section: "overview",
      summary: "Show the console's overview",
      docs: pageDocs({
        operationId: "showConsoleOverview",
        description: "Charts over the last 7, 30 or 90 days (UTC): opt-ins and opt-outs per day, messages per day by status, the delivery rate, and catalog uploads per day.",
        query: v.object({ days: v.optional(v.pipe(v.picklist(PERIODS.map(String)), v.description("The period in days (default 30)"))) }),
        example: { query: { days: "30" } },
      }),
      async render(viewer, context) {
        const companyId = viewer.company.id;
        const chosen = Number(queryText(context, "days"));
        const period = (PERIODS as readonly number[]).includes(chosen) ? chosen : 30;
        const days = lastDays(services.clock.now(), period);
        const starts = days.map((range) => range.start);
        const changes = await services.subscriptions.directory.dailyChanges(companyId, days, ["opt_in", "unsubscribed"]);
        const messages = await services.outbox.dailyCounts(companyId, days);
        const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
        const total = (status: OutboxStatus) => sum(messages.map((entry) => entry.counts[status]));
        const rate = deliveryRate({ delivered: total("delivered"), sent: total("sent"), undelivered: total("undelivered"), failed: total("failed") });
        const charts = [
          chart({ id: "consent", title: "Opt-ins and opt-outs", series: ["Opt-ins", "Opt-outs"], days: starts, values: [changes.map((entry) => entry.counts.opt_in ?? 0), changes.map((entry) => entry.counts.unsubscribed ?? 0)] }),
          chart({
            id: "messages",
            title: "Messages by status",
            series: CHART_STATUSES.map((status) => status[0]!.toUpperCase() + status.slice(1)),
            days: starts,
            values: CHART_STATUSES.map((status) => messages.map((entry) => entry.counts[status])),
          }),
        ];
        if (services.catalog) {
          const uploads = await services.catalog.listUploads(companyId, { limit: 1000 });
          const perDay = days.map((range) => uploads.filter((upload) => Date.parse(upload.createdAt) >= range.start && Date.parse(upload.createdAt) < range.end).length);
          charts.push(chart({ id: "uploads", title: "Catalog uploads", series: ["Uploads"], days: starts, values: [perDay], bars: true }));
        }
        const periods = PERIODS.map((count) => (count === period ? html`<strong aria-current="true">${count} days</strong>` : html`<a href="${viewer.base}?days=${count}">${count} days</a>`));
        const totals = [
          ["Opt-ins", sum(changes.map((entry) => entry.counts.opt_in ?? 0))],
          ["Opt-outs", sum(changes.map((entry) => entry.counts.unsubscribed ?? 0))],
          ["Messages sent", rate.handedOver],
          ["Delivery rate", rate.shown],
        ] as const;
        return {
          title: "Overview",
          section: "overview",
          scripts: ["charts", "console"],
          body: html`<h1>Overview</h1>
<p>Period: ${periods.map((link, index) => html`${index > 0 ? " · " : ""}${link}`)}</p>
<div class="grid">${totals.map(([label, value]) => html`<section class="card"><h2>${label}</h2><p class="figure">${value}</p></section>`)}</div>
<p class="muted">The delivery rate is the messages of the period that reached their recipient over those that went or failed: a message with the provider's receipt counts as its receipt says (delivered or undelivered); one without a receipt yet, or whose provider sends none (most emails), counts once the provider took it; a message the provider refused is failed. Of the ${rate.handedOver} sent, receipts say ${rate.delivered} delivered and ${rate.undelivered} undelivered.</p>
${charts}`,
        };
      },
    }),
  ];
}
