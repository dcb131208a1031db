import assert from "node:assert/strict";
import type { MemorySms } from "../../../adapters/sms/memory/index.ts";
import { SmsSendError, type InjectResponse, type Reachkit } from "../../../src/index.ts";
import type { Json } from "../../support/test-kit.ts";

/** What a company's console shows, made through the API as a merchant would. */
export interface ConsoleWorld {
  companyId: string;
  phones: string[];
  emails: string[];
  /** A catalog upload whose file had bad lines, processed. */
  uploadId: string;
  /** Its product; a second upload changed its variant's price and stock. */
  productId: string;
  reminderUuid: string;
  /** The phone whose texts failed at the provider. */
  failingPhone: string;
  /** A welcome journey every subscriber entered; the first bought within its attribution window. */
  journeyId: string;
}

const tee = (id: string, amount: string, inventoryQuantity: number) =>
  JSON.stringify({
    id,
    name: "Classic tee",
    link: `https://shop.example/p/${id}`,
    lastUpdated: "2026-03-01T12:00:00Z",
    variants: [{ id: `${id}-s`, name: "Classic tee, small", link: `https://shop.example/p/${id}`, prices: [{ currencyCode: "USD", amount }], availableForPurchase: true, inventoryQuantity, lastUpdated: "2026-03-01T12:00:00Z" }],
  });

/** A catalog file with a good product, a line that is not JSON, and a product with errors. */
export const catalogFile = (productId: string) => [tee(productId, "19.00", 12), '{"id": "broken", "name": ', JSON.stringify({ id: "mug-1", name: "Mug", lastUpdated: "2026-03-01T12:00:00Z", variants: [] }), ""].join("\n");
export const CATALOG_FILE = catalogFile("tee-1");

function ok(response: InjectResponse, what: string): Json {
  assert.ok(response.status < 300, `${what}: ${response.status} ${response.body}`);
  return response.body === "" ? {} : response.json<Json>();
}

/**
 * Subscribers (one opted out), texts (some to a number the provider refuses),
 * a catalog upload with errors, a reminder, a privacy request, a welcome
 * journey with its texts and a purchase, receipts and an email, for the
 * company of these credentials, on the manual scheduler (whose clock it moves 5 hours).
 */
export async function seedConsoleWorld(
  kit: Reachkit,
  sms: MemorySms,
  company: { companyId: string; apiKey: string; legacyToken: string },
  scheduler: { flush(): Promise<void>; advance(ms: number): Promise<void> },
  prefix = "+1312555",
  emailDomain = "example.com",
): Promise<ConsoleWorld> {
  const settle = () => scheduler.flush();
  const send = (method: string, url: string, token: string, body?: unknown) => kit.inject({ method, url, body, headers: { authorization: `Bearer ${token}` } });
  const phones = [0, 1, 2, 3].map((n) => `${prefix}010${n}`);
  const emails = ["ada", "grace", "alan", "edsger"].map((name) => `${name}@${emailDomain}`);
  const names = [["Ada", "Lovelace"], ["Grace", "Hopper"], ["Alan", "Turing"], ["Edsger", "Dijkstra"]];
  const journey = ok(await send("POST", "/v1/journeys", company.apiKey, { template: "welcome", steps: [{ type: "wait", duration: "PT1H" }, { type: "sms", text: "Welcome to {companyName} texts, {firstName}!" }] }), "journey");
  for (const [index, phone] of phones.entries()) {
    const user = { phone, email: emails[index], firstName: names[index]![0], lastName: names[index]![1] };
    ok(await send("POST", "/v1/subscriptions", company.apiKey, { user, locale: { language: "en", country: "US" }, subscriptionType: "MARKETING", singleOptIn: true, externalIdentifiers: { clientUserId: `u-${index}` } }), "opt-in");
  }
  await settle();
  ok(await send("POST", "/v1/subscriptions/unsubscribe", company.apiKey, { user: { phone: phones[3] } }), "unsubscribe");
  // Ada's profile: an attribute and an event.
  ok(await send("POST", "/v1/attributes/custom", company.apiKey, { properties: { tier: "gold" }, user: { phone: phones[0] } }), "attribute");
  ok(await send("POST", "/v1/events/custom", company.apiKey, { type: "Order Shipped", properties: { orderId: "1001" }, user: { phone: phones[0] } }), "event");
  for (const phone of phones.slice(0, 3)) {
    // The provider refuses the third number.
    if (phone === phones[2]) sms.failNext(new SmsSendError("invalid_number", "The 'To' number is not a valid phone number", { providerCode: "21211" }));
    ok(await send("POST", "/1/messages", company.legacyToken, { to: phone, body: `Your order to ${phone} has shipped.`, type: "TRANSACTIONAL" }), "message");
    await settle();
  }
  const productId = `tee-${prefix.slice(2, 5)}`;
  const sendCatalog = async (file: string) => {
    const upload = ok(await send("POST", "/v1/product-catalog/uploads", company.apiKey, {}), "upload");
    const target = new URL(upload.uploadUrl);
    ok(await kit.inject({ method: "PUT", url: `${target.pathname}${target.search}`, body: file, headers: { "content-type": "application/x-ndjson" } }), "catalog file");
    await settle();
    return upload.uploadId as string;
  };
  const uploadId = await sendCatalog(catalogFile(productId));
  // Cheaper and fewer: the variant's history has one change.
  await sendCatalog(`${tee(productId, "15.00", 3)}\n`);
  const type = ok(await send("POST", "/events/types", company.legacyToken, { type: "Haircut" }), "type");
  ok(await send("POST", "/events/types/messages", company.legacyToken, { eventType: { uuid: type.uuid }, messageType: "REMINDER", text: "See you at {eventTime}, {firstName}!" }), "message");
  const reminder = ok(
    await send("POST", "/events/reminders", company.legacyToken, { eventType: { uuid: type.uuid }, phone: phones[0], firstName: "Ada", eventDateTime: "2026-03-08T15:00:00", subscriberTimeZone: "America/New_York" }),
    "reminder",
  );
  ok(await send("POST", "/v1/privacy/delete-request", company.apiKey, { subjectEmail: "gone@example.com" }), "privacy request");
  await settle();
  // The welcome texts go after their hour's wait, or at 11:00 in the company's zone (New York) when the wait ends in quiet hours; Edsger, unsubscribed since, is skipped.
  await scheduler.advance(5 * 3_600_000);
  // Ada buys within the welcome journey's attribution window.
  ok(await send("POST", "/v1/events/ecommerce/purchase", company.apiKey, { user: { phone: phones[0] }, items: [{ productId: "mug", productVariantId: "mug-blue", name: "Mug", price: [{ value: 24.5, currency: "USD" }] }] }), "purchase");
  // Receipts: Ada's order text delivered, Grace's not (the provider's error code 30005).
  const orderText = (phone: string) => sms.sent.find((text) => text.to === phone && text.body.includes("Your order to"))!.providerMessageId;
  await sms.reportStatus(orderText(phones[0]!), "delivered");
  await sms.reportStatus(orderText(phones[1]!), "undelivered", "30005");
  // An email to Ada.
  await kit.outbox.sendEmail({ companyId: company.companyId, to: emails[0]!, subject: "Your receipt", text: "Thanks for your order.", kind: "receipt" });
  await settle();
  return { companyId: company.companyId, phones, emails, uploadId, productId, reminderUuid: reminder.uuid, failingPhone: phones[2]!, journeyId: journey.id };
}
