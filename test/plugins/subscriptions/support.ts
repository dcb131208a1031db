import type { InjectResponse } from "../../../src/index.ts";
import type { Json, TestKit } from "../../support/test-kit.ts";

export const PHONE = "+19148440001";
export const EMAIL = "ada@example.com";

/** POST /v1/subscriptions with the company's MARKETING en-US unit unless the body says otherwise. */
export function optIn(t: TestKit, body: Json, token?: string): Promise<InjectResponse> {
  return t.request({ method: "POST", url: "/v1/subscriptions", body: { locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", ...body }, token });
}

export function unsubscribe(t: TestKit, body: Json): Promise<InjectResponse> {
  return t.request({ method: "POST", url: "/v1/subscriptions/unsubscribe", body });
}

/** GET /v1/subscriptions for a phone: `[type, channel, isEligible]` rows. */
export async function eligibilityRows(t: TestKit, query: string): Promise<Array<[string, string, boolean]>> {
  const response = await t.request({ url: `/v1/subscriptions?${query}` });
  if (response.status !== 200) throw new Error(`GET /v1/subscriptions?${query} answered ${response.status}: ${response.body}`);
  return t.json(response).subscriptionEligibilities.map((e: Json) => [e.subscription.type, e.subscription.channel, e.eligibility.isEligible]);
}

/** The bodies of the texts the memory provider delivered to a number. */
export const textsTo = (t: TestKit, phone: string): string[] => t.sms.sentTo(phone).map((message) => message.body);

/** A subscriber's text to the company's sender number, through the memory adapter. */
export async function textFrom(t: TestKit, from: string, body: string): Promise<void> {
  const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
  await t.sms.deliverInbound({ from, to: company!.senderNumber!, body });
  await t.scheduler.flush();
}
