import * as v from "valibot";
import { conflict, invalidFields, notFound, type AnyRoute } from "../../src/index.ts";
import type { AccountsService } from "../accounts/index.ts";
import {
  DEFAULT_KEY_OVERLAP_MS,
  EXAMPLE_WEBHOOK_ID,
  MAX_KEY_OVERLAP_MS,
  SENT_EVENTS,
  type Deliveries,
  type DeliveryRecord,
  type DeliveryStatus,
  type SigningKeys,
  type WebhookRecord,
  type WebhookRegistry,
} from "../webhooks/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { pager, status, table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";
import { EXAMPLE_APPLICATION_ID } from "./settings.ts";

export interface WebhookServices {
  registry: WebhookRegistry;
  deliveries: Deliveries;
  signingKeys: SigningKeys;
  accounts: AccountsService;
}

const STATUSES: readonly DeliveryStatus[] = ["pending", "delivered", "failed", "cancelled"];
const isStatus = (value: string | undefined): value is DeliveryStatus => STATUSES.includes(value as DeliveryStatus);
const HOUR = 3_600_000;
/** The delivery of the examples: the first the example webhook got (the examples' story reads it from the log). */
export const EXAMPLE_DELIVERY_ID = "msg_0mm7p6zg00000f6e5d4c3b2a1";
const WEBHOOK_PARAM = { webhookId: "The webhook's id" };

const NOTICES: Readonly<Record<string, string>> = {
  created: "The webhook is created: the events it names are sent to it from now on.",
  disabled: "The webhook is disabled: nothing is sent to it, and what is queued for it is cancelled.",
  enabled: "The webhook is enabled again; what it missed while disabled is not sent.",
  deleted: "The webhook is deleted.",
  redelivered: "The delivery was sent again, with the same webhook-id and body: its row shows the receiver's answer.",
};

/** The company's webhooks and their delivery log; an owner's create, disable, enable, delete, redeliver and signing-key rotation. */
export function webhookRoutes(deps: ConsoleDeps, services: WebhookServices): AnyRoute[] {
  const { registry, deliveries } = services;
  const ownWebhook = async (viewer: Viewer, webhookId: string | undefined): Promise<WebhookRecord> => {
    const webhook = await registry.get(webhookId ?? "");
    if (!webhook || webhook.companyId !== viewer.company.id) throw notFound();
    return webhook;
  };
  const back = (viewer: Viewer, webhook: WebhookRecord, done: string) => ({ redirect: `${viewer.base}/webhooks/${encodeURIComponent(webhook.id)}?done=${done}` });
  const csrfOnly = v.object({ csrf_token: v.string() });
  const change = (action: "disable" | "enable" | "delete", operationId: string, description: string) =>
    actionRoute(deps, {
      path: `/webhooks/:webhookId/${action}`,
      section: "webhooks",
      role: "owner",
      summary: `${action[0]!.toUpperCase()}${action.slice(1)} a webhook from the console`,
      docs: actionDocs({
        operationId,
        description,
        params: WEBHOOK_PARAM,
        exampleParams: { webhookId: EXAMPLE_WEBHOOK_ID },
        after: ["createWebhook", "showConsoleWebhook"],
        fields: csrfOnly,
        body: {},
        success:
          action === "delete"
            ? { status: 303, location: "/console/webhooks?done=deleted", description: "Done: back to the webhooks" }
            : { status: 303, location: `/console/webhooks/${EXAMPLE_WEBHOOK_ID}?done=${action}d`, description: "Done: back to the webhook" },
      }),
      async run(viewer, _form, context) {
        const webhook = await ownWebhook(viewer, context.params.webhookId);
        const owner = { companyId: webhook.companyId, applicationId: webhook.applicationId };
        if (action === "delete") {
          await registry.delete(owner, webhook.id);
          return { redirect: `${viewer.base}/webhooks?done=deleted` };
        }
        await registry.update(owner, webhook.id, { disabled: action === "disable" });
        return back(viewer, webhook, `${action}d`);
      },
    });
  return [
    pageRoute(deps, {
      path: "/webhooks",
      section: "webhooks",
      summary: "Show the console's webhooks",
      docs: pageDocs({
        operationId: "showConsoleWebhooks",
        description: "The company's webhooks, every application's: URL, events, enabled or disabled (since when and why), the last delivery; the signing keys of the company's own applications. An owner creates webhooks and rotates keys here.",
        query: v.object({ done: v.optional(v.pipe(v.string(), v.description("The action just done (its message is shown)"))) }),
        example: { after: ["createWebhook"] },
      }),
      async render(viewer, context) {
        const chosen = queryText(context, "done");
        return { title: "Webhooks", section: "webhooks", notice: chosen ? NOTICES[chosen] : undefined, body: await webhooksBody(viewer, services) };
      },
    }),
    actionRoute(deps, {
      path: "/webhooks",
      section: "webhooks",
      role: "owner",
      summary: "Create a webhook from the console",
      docs: actionDocs({
        operationId: "createConsoleWebhook",
        description: "Creates a webhook of one of the company's own applications, as POST /v1/webhooks does with its API key, with the same checks (an http or https URL the server may reach, one or more known events); a refusal names the field.",
        after: ["showConsoleWebhooks"],
        fields: v.object({ csrf_token: v.string(), applicationId: v.string(), url: v.string(), "event:sms.subscribed": v.optional(v.literal("yes")) }),
        body: { applicationId: EXAMPLE_APPLICATION_ID, url: "https://shop.example/hooks/console", "event:sms.subscribed": "yes" },
        success: { status: 303, location: `/console/webhooks/${EXAMPLE_WEBHOOK_ID}?done=created`, description: "Created: to the webhook's page" },
      }),
      async run(viewer, form) {
        const application = await ownApplication(services, viewer, form.applicationId);
        const events = Object.keys(form).flatMap((name) => (name.startsWith("event:") && form[name] === "yes" ? [name.slice("event:".length)] : []));
        const webhook = await registry.create({ companyId: viewer.company.id, applicationId: application.id, credentialKind: "api_key" }, { url: form.url?.trim() ?? "", events });
        return back(viewer, webhook, "created");
      },
    }),
    pageRoute(deps, {
      path: "/webhooks/:webhookId",
      section: "webhooks",
      summary: "Show a webhook and its delivery log in the console",
      docs: pageDocs({
        operationId: "showConsoleWebhook",
        description: "One webhook and its delivery log, newest first, 50 a page, all or in one status: each delivery's event, status, attempts, the receiver's last status code, latency and answer, when it was made and last tried. An owner sends a delivery again here.",
        params: WEBHOOK_PARAM,
        query: v.object({ status: v.optional(v.picklist(STATUSES)), after: v.optional(v.pipe(v.string(), v.description("The cursor of the next page"))) }),
        example: { params: { webhookId: EXAMPLE_WEBHOOK_ID }, after: ["createWebhook"] },
      }),
      async render(viewer, context) {
        const webhook = await ownWebhook(viewer, context.params.webhookId);
        const chosen = queryText(context, "status");
        const query = { status: isStatus(chosen) ? chosen : undefined, after: queryText(context, "after") };
        const log = await deliveries.logPage(webhook.id, query);
        const done = queryText(context, "done");
        return { title: "Webhook", section: "webhooks", notice: done ? NOTICES[done] : undefined, body: webhookBody(viewer, webhook, log.items, query, log.nextCursor) };
      },
    }),
    change("disable", "disableConsoleWebhook", "Disables the webhook, as PUT /v1/webhooks/{webhookId} with `disabled: true` does: nothing more is sent to it."),
    change("enable", "enableConsoleWebhook", "Enables a disabled webhook, as PUT /v1/webhooks/{webhookId} with `disabled: false` does; what it missed is not sent again."),
    change("delete", "deleteConsoleWebhook", "Deletes the webhook, as DELETE /v1/webhooks/{webhookId} does."),
    actionRoute(deps, {
      path: "/webhooks/:webhookId/deliveries/:deliveryId/redeliver",
      section: "webhooks",
      role: "owner",
      summary: "Send a webhook delivery again from the console",
      docs: actionDocs({
        operationId: "redeliverConsoleWebhookDelivery",
        description: "Sends a delivery again now, as reachkit webhooks redeliver does: one attempt with the same webhook-id and body, signed anew, recorded in the log. Refused (409) while the webhook is disabled.",
        params: { ...WEBHOOK_PARAM, deliveryId: "The delivery's id (msg_…)" },
        exampleParams: { webhookId: EXAMPLE_WEBHOOK_ID, deliveryId: EXAMPLE_DELIVERY_ID },
        after: ["createWebhook", "addSubscriptions", "showConsoleWebhook"],
        fields: csrfOnly,
        body: {},
        success: { status: 303, location: `/console/webhooks/${EXAMPLE_WEBHOOK_ID}?done=redelivered`, description: "Sent: back to the webhook's log" },
      }),
      async run(viewer, _form, context) {
        const webhook = await ownWebhook(viewer, context.params.webhookId);
        const delivery = await deliveries.get(context.params.deliveryId ?? "");
        if (!delivery || delivery.webhookId !== webhook.id) throw notFound();
        if (webhook.disabledAt !== undefined) throw conflict("the webhook is disabled: enable it first, then send the delivery again");
        await deliveries.redeliver(delivery, webhook);
        return back(viewer, webhook, "redelivered");
      },
    }),
    actionRoute(deps, {
      path: "/webhooks/signing-keys/:applicationId/rotate",
      section: "webhooks",
      role: "owner",
      summary: "Make a new webhook signing key from the console",
      docs: actionDocs({
        operationId: "rotateConsoleSigningKey",
        description:
          "Makes a new signing key for one of the company's own applications, as reachkit webhooks signing-key does, and shows it once; the previous key signs beside it for the overlap " +
          `(hours, default ${DEFAULT_KEY_OVERLAP_MS / HOUR}, 0 to ${MAX_KEY_OVERLAP_MS / HOUR}).`,
        params: { applicationId: "An application of the company" },
        exampleParams: { applicationId: EXAMPLE_APPLICATION_ID },
        after: ["showConsoleWebhooks"],
        fields: v.object({ csrf_token: v.string(), overlapHours: v.optional(v.string()) }),
        body: { overlapHours: "24" },
        success: { status: 200, description: "The webhooks page with the new key, shown once" },
      }),
      async run(viewer, form, context) {
        const application = await ownApplication(services, viewer, context.params.applicationId);
        const text = form.overlapHours?.trim() || String(DEFAULT_KEY_OVERLAP_MS / HOUR);
        const hours = Number(text);
        if (!/^\d+$/.test(text) || hours * HOUR > MAX_KEY_OVERLAP_MS) throw invalidFields([{ path: "overlapHours", message: `must be a whole number of hours from 0 to ${MAX_KEY_OVERLAP_MS / HOUR}` }]);
        const { key } = await services.signingKeys.rotate(application.id, hours * HOUR);
        const secret = html`<section class="secret" role="status"><h2>New signing key of ${application.name}</h2><p>It is shown once: store it now. The previous key signs beside it for ${hours} hours.</p><p><code>${key}</code></p></section>`;
        return { title: "Webhooks", section: "webhooks", body: html`${secret}${await webhooksBody(viewer, services)}` };
      },
    }),
  ];
}

/** An application the company owns (not one it installed): 404 otherwise, as for an id nobody has. */
async function ownApplication(services: WebhookServices, viewer: Viewer, applicationId: string | undefined) {
  if (!applicationId) throw invalidFields([{ path: "applicationId", message: "choose one of the company's applications" }]);
  const application = await services.accounts.getApplication(applicationId);
  if (!application || application.companyId !== viewer.company.id) throw notFound();
  return application;
}

const enabledState = (webhook: WebhookRecord): SafeHtml =>
  webhook.disabledAt === undefined
    ? html`${status("enabled")}${webhook.failingSince !== undefined ? html`<br><span class="muted">failing since ${when(webhook.failingSince)}</span>` : ""}`
    : html`${status("disabled")}<br><span class="muted">since ${when(webhook.disabledAt)}: ${webhook.disabledReason ?? ""}</span>`;

const lastDelivery = (delivery: DeliveryRecord | undefined): SafeHtml =>
  delivery ? html`${status(delivery.status)} ${delivery.event}<br><span class="muted">${when(delivery.lastAttemptAt ?? delivery.createdAt)}${delivery.responseStatus !== undefined ? `, answered ${delivery.responseStatus}` : ""}</span>` : html`<span class="muted">none yet</span>`;

async function webhooksBody(viewer: Viewer, services: WebhookServices): Promise<SafeHtml> {
  const companyId = viewer.company.id;
  const [webhooks, applications] = await Promise.all([services.registry.ofCompany(companyId), services.accounts.listApplications(companyId)]);
  const appName = new Map(applications.map((application) => [application.id, application.name]));
  const rows = [];
  for (const webhook of webhooks) {
    const [latest] = await services.deliveries.log(webhook.id, { limit: 1 });
    rows.push(html`<tr><td class="wrap"><a href="${viewer.base}/webhooks/${webhook.id}">${webhook.url}</a></td><td>${appName.get(webhook.applicationId) ?? html`<span class="muted">installed application</span>`}</td>
<td class="wrap">${webhook.events.join(", ")}</td><td>${enabledState(webhook)}</td><td>${lastDelivery(latest)}</td></tr>`);
  }
  const owner = viewer.user.role === "owner";
  const keys = [];
  for (const application of applications) {
    for (const key of await services.signingKeys.list(application.id)) {
      keys.push(html`<tr><td>${application.name}</td><td><code>${key.id}</code></td><td>${when(key.createdAt)}</td><td>${key.expiresAt !== undefined ? html`signs until ${when(key.expiresAt)}` : "signs"}</td></tr>`);
    }
  }
  const options = applications.map((application) => html`<option value="${application.id}">${application.name}</option>`);
  const createForm = actionForm(
    viewer,
    "/webhooks",
    html`<div><label for="webhook-application">Application (its signing key signs the deliveries)</label><select id="webhook-application" name="applicationId">${options}</select></div>
<div><label for="webhook-url">URL</label><input type="text" id="webhook-url" name="url" required placeholder="https://shop.example/hooks/reachkit"></div>
<fieldset><legend>Events</legend>${SENT_EVENTS.map((name) => html`<label><input type="checkbox" name="event:${name}" value="yes"> <code>${name}</code></label> `)}</fieldset>
<div><button type="submit">Create the webhook</button></div>`,
    { class: "stack card", label: "New webhook" },
  );
  const rotateForms = applications.map((application) =>
    actionForm(
      viewer,
      `/webhooks/signing-keys/${application.id}/rotate`,
      html`<div><label for="overlap-${application.id}">Hours the old key of ${application.name} still signs</label><input type="text" id="overlap-${application.id}" name="overlapHours" value="${DEFAULT_KEY_OVERLAP_MS / HOUR}" inputmode="numeric" size="4"></div>
<div><button type="submit" class="secondary">New signing key for ${application.name}</button></div>`,
      { class: "filters", label: `Signing key of ${application.name}` },
    ),
  );
  return html`<h1>Webhooks</h1>
${table("Webhooks", ["URL", "Application", "Events", "State", "Last delivery"], rows, "No webhooks: create one below, with POST /v1/webhooks, or with an installed application.")}
${owner ? html`<h2>New webhook</h2>${createForm}` : ""}
<h2>Signing keys</h2>
<p class="muted">Each delivery is signed with its application's newest key (and, during an overlap, the one it replaced). Keys are shown once, when made.</p>
${table("Signing keys", ["Application", "Key id", "Made", "State"], keys, "No signing keys yet: an application gets one with its first webhook.")}
${owner ? html`<section class="card">${rotateForms}</section>` : ""}`;
}

function webhookBody(viewer: Viewer, webhook: WebhookRecord, log: readonly DeliveryRecord[], query: { status?: DeliveryStatus; after?: string }, nextCursor: string | undefined): SafeHtml {
  const owner = viewer.user.role === "owner";
  const enabled = webhook.disabledAt === undefined;
  const path = `${viewer.base}/webhooks/${webhook.id}`;
  const redeliver = (delivery: DeliveryRecord) =>
    actionForm(viewer, `/webhooks/${webhook.id}/deliveries/${delivery.id}/redeliver`, html`<button type="submit" class="secondary" aria-label="Send again ${delivery.id}">Send again</button>`, { class: "inline" });
  const rows = log.map(
    (delivery) => html`<tr><td><code>${delivery.id}</code>${owner && enabled ? html`<br>${redeliver(delivery)}` : ""}</td><td>${delivery.event}</td><td>${status(delivery.status)}</td><td class="num">${delivery.attempts}</td>
<td class="num">${delivery.responseStatus ?? ""}</td><td class="num">${delivery.latencyMs !== undefined ? `${delivery.latencyMs} ms` : ""}</td><td>${when(delivery.createdAt)}</td><td>${when(delivery.lastAttemptAt)}</td>
<td class="wrap">${delivery.error ?? ""}${delivery.responseBody ? html`<br><code>${delivery.responseBody.slice(0, 200)}</code>` : ""}${delivery.status === "pending" && delivery.dueAt !== undefined ? html`<br>next attempt ${when(delivery.dueAt)}` : ""}</td></tr>`,
  );
  const actions = owner
    ? html`<div class="card">${actionForm(viewer, `/webhooks/${webhook.id}/${enabled ? "disable" : "enable"}`, html`<button type="submit" class="secondary">${enabled ? "Disable" : "Enable"} the webhook</button>`, { class: "inline" })}
${actionForm(viewer, `/webhooks/${webhook.id}/delete`, html`<button type="submit" class="danger">Delete the webhook</button>`, { class: "inline" })}</div>`
    : "";
  const options = ["", ...STATUSES].map((value) => html`<option value="${value}"${value === (query.status ?? "") ? " selected" : ""}>${value || "any"}</option>`);
  return html`<h1>Webhook</h1>
<section class="card"><dl class="fields">
<dt>URL</dt><dd><code>${webhook.url}</code></dd>
<dt>Events</dt><dd>${webhook.events.join(", ")}</dd>
<dt>State</dt><dd>${enabledState(webhook)}</dd>
<dt>Made with</dt><dd>${webhook.credentialKind === "oauth" ? "an installed application's OAuth token" : "the company's own API key"}</dd>
<dt>Created</dt><dd>${when(webhook.createdAt)}</dd>
<dt>Id</dt><dd><code>${webhook.id}</code></dd>
</dl></section>
${actions}
<h2>Delivery log</h2>
<form method="get" action="${path}" class="filters" role="search">
<div><label for="status">Status</label><select id="status" name="status">${options}</select></div>
<div><button type="submit">Filter</button></div>
</form>
${table("Delivery log", ["Delivery", "Event", "Status", "Attempts", "Answer", "Took", "Made", "Last tried", "Error or answer"], rows, "No deliveries match.")}
${pager(path, query, nextCursor)}
${owner && !enabled ? html`<p class="muted">Enable the webhook to send a delivery again.</p>` : ""}
<p><a href="${viewer.base}/webhooks">All webhooks</a></p>`;
}
