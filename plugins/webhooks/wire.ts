import type { WebhookRecord } from "./records.ts";

/** `disabledAt` as the reference writes it: `YYYY-MM-DD hh:mm:ss`, UTC; null while enabled. */
export function disabledAtText(webhook: WebhookRecord): string | null {
  return webhook.disabledAt === undefined ? null : new Date(webhook.disabledAt).toISOString().slice(0, 19).replace("T", " ");
}

/** The create and update answers (CreateWebhookResponseDto): `type` INSTALLED for an installed application's token, CREATOR for the company's own. */
export function webhookView(webhook: WebhookRecord) {
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    type: webhook.credentialKind === "oauth" ? "INSTALLED" : "CREATOR",
    disabledAt: disabledAtText(webhook),
  };
}

/** An item of the list (GetWebhookResponseDto): `type` SUBSCRIPTION, as every webhook made through the API. */
export function listedWebhookView(webhook: WebhookRecord) {
  return { id: webhook.id, url: webhook.url, type: "SUBSCRIPTION", events: webhook.events, companyId: webhook.companyId, disabledAt: disabledAtText(webhook) };
}
