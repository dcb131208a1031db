import { CliUsageError, companyOption, formatFields, formatTable, requiredOption, stringOption, type CliCommand, type CliContext } from "../../src/index.ts";
import type { DeliveryRecord, DeliveryStatus } from "./records.ts";
import { DEFAULT_KEY_OVERLAP_MS, MAX_KEY_OVERLAP_MS } from "./signing-keys.ts";
import { disabledAtText } from "./wire.ts";

const STATUSES: readonly DeliveryStatus[] = ["pending", "delivered", "failed", "cancelled"];
const HOUR = 3_600_000;

async function webhooksOf(context: CliContext) {
  const kit = await context.openKit();
  return { kit, webhooks: kit.plugin("webhooks") };
}

const iso = (time: number | undefined) => (time === undefined ? "" : new Date(time).toISOString());

function deliveryRow(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    event: delivery.event,
    status: delivery.status,
    attempts: delivery.attempts,
    response: delivery.responseStatus ?? "",
    latencyMs: delivery.latencyMs ?? "",
    nextAttempt: delivery.status === "pending" ? iso(delivery.dueAt) : "",
    error: delivery.error ?? "",
    responseBody: (delivery.responseBody ?? "").replace(/\s+/g, " ").slice(0, 60),
  };
}

function positiveWhole(values: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const text = stringOption(values as never, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new CliUsageError(`--${name} must be a whole number from 0 to ${max}`);
  return value;
}

export const webhookCommands: readonly CliCommand[] = [
  {
    name: "webhooks list",
    summary: "List a company's webhooks, every application's, with whether they are disabled and why",
    options: companyOption,
    async run(values, context) {
      const { webhooks } = await webhooksOf(context);
      const list = await webhooks.registry.ofCompany(requiredOption(values, "company"));
      return {
        json: list,
        text: formatTable(
          list.map((webhook) => ({
            id: webhook.id,
            application: webhook.applicationId,
            url: webhook.url,
            events: webhook.events.join(" "),
            disabledAt: disabledAtText(webhook) ?? "",
            reason: webhook.disabledReason ?? "",
          })),
        ),
      };
    },
  },
  {
    name: "webhooks deliveries",
    summary: "The delivery log of a webhook, newest first: status, attempts, response code, latency, the start of the answer",
    options: {
      webhook: { type: "string", description: "Webhook id (from webhooks list)", required: true, placeholder: "ID" },
      status: { type: "string", description: `Only this status: ${STATUSES.join(", ")}`, placeholder: "STATUS" },
      limit: { type: "string", description: "At most this many, the newest (default 50)", placeholder: "N" },
    },
    async run(values, context) {
      const status = stringOption(values, "status");
      if (status !== undefined && !STATUSES.includes(status as DeliveryStatus)) throw new CliUsageError(`--status must be one of ${STATUSES.join(", ")}`);
      const limit = positiveWhole(values, "limit", 50, 10_000) || 50;
      const { webhooks } = await webhooksOf(context);
      const webhookId = requiredOption(values, "webhook");
      if (!(await webhooks.registry.get(webhookId))) throw new CliUsageError(`no webhook ${webhookId}`);
      const log = await webhooks.deliveries.log(webhookId, { limit, ...(status ? { status: status as DeliveryStatus } : {}) });
      return { json: log, text: formatTable(log.map(deliveryRow)) };
    },
  },
  {
    name: "webhooks redeliver",
    summary: "Send a delivery again now, from this command, with the same webhook-id and body; prints the receiver's answer",
    options: { delivery: { type: "string", description: "Delivery id (from webhooks deliveries)", required: true, placeholder: "ID" } },
    async run(values, context) {
      const { webhooks } = await webhooksOf(context);
      const id = requiredOption(values, "delivery");
      const delivery = await webhooks.deliveries.get(id);
      if (!delivery) throw new CliUsageError(`no delivery ${id}`);
      const webhook = await webhooks.registry.get(delivery.webhookId);
      if (!webhook) throw new CliUsageError(`the webhook of delivery ${id} was deleted`);
      if (webhook.disabledAt !== undefined) throw new CliUsageError(`webhook ${webhook.id} is disabled (${webhook.disabledReason ?? ""}); enable it with PUT /v1/webhooks/${webhook.id} {"disabled": false} first`);
      const after = await webhooks.deliveries.redeliver(delivery, webhook);
      const row = deliveryRow(after);
      return { json: after, text: formatFields(row), exitCode: after.lastAttemptAt !== undefined && after.status === "delivered" && after.error === undefined ? 0 : 1 };
    },
  },
  {
    name: "webhooks signing-key",
    summary: "Make a new signing key for an application and print it once; its previous key keeps signing beside it for the overlap",
    options: {
      application: { type: "string", description: "Application id (from applications list)", required: true, placeholder: "ID" },
      "overlap-hours": {
        type: "string",
        description: `Hours the previous key signs beside the new one (default ${DEFAULT_KEY_OVERLAP_MS / HOUR}, 0 to stop it at once, at most ${MAX_KEY_OVERLAP_MS / HOUR})`,
        placeholder: "HOURS",
      },
    },
    async run(values, context) {
      const overlapHours = positiveWhole(values, "overlap-hours", DEFAULT_KEY_OVERLAP_MS / HOUR, MAX_KEY_OVERLAP_MS / HOUR);
      const { kit, webhooks } = await webhooksOf(context);
      const applicationId = requiredOption(values, "application");
      const application = await kit.plugin("accounts").getApplication(applicationId);
      if (!application) throw new CliUsageError(`no application ${applicationId}`);
      const { key, replaced } = await webhooks.signingKeys.rotate(applicationId, overlapHours * HOUR);
      const result = { applicationId, signingKey: key, previousKeysSignUntil: replaced.map((view) => iso(view.expiresAt)) };
      return { json: result, text: `${formatFields({ applicationId, signingKey: key, ...(replaced.length > 0 ? { previousKeySignsUntil: result.previousKeysSignUntil.join(", ") } : {}) })}\nThe signing key is shown once: store it now.` };
    },
  },
];
