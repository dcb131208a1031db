import { legacyPlugin } from "../../../plugins/legacy/index.ts";
import { privacyPlugin, type PrivacyPluginOptions } from "../../../plugins/privacy/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import type { InjectResponse, ReachkitPlugin } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

export const PHONE = "+19148440001";
export const EMAIL = "ada@example.com";
/** The reference's timestamp shape: 2020-09-02T17:44:23.875+0000. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;

export const privacyKitPlugins = (options: PrivacyPluginOptions = {}, extra: ReachkitPlugin[] = []): ReachkitPlugin[] => [
  ...defaultPlugins(),
  legacyPlugin(),
  privacyPlugin(options),
  profilesPlugin(),
  ...extra,
];

/** A test kit with the subscriptions, legacy, privacy and profiles plugins. */
export function startPrivacyKit(options: TestKitOptions & { privacy?: PrivacyPluginOptions } = {}): Promise<TestKit> {
  return startTestKit({ plugins: privacyKitPlugins(options.privacy), config: { rateLimits: { default: Infinity } }, ...options });
}

export function createRequest(t: TestKit, body: Json, token?: string | null): Promise<InjectResponse> {
  return t.request({ method: "POST", url: "/v1/privacy/delete-request", body, token });
}

export function fetchRequest(t: TestKit, id: string, token?: string | null): Promise<InjectResponse> {
  return t.request({ url: `/v1/privacy/delete-request/${encodeURIComponent(id)}`, token });
}

/**
 * The subject's data at a company: a subscriber with phone and email (legacy
 * add-subscriber: a sign-up record too), `messages` transactional texts to the phone.
 */
export async function seedSubject(t: TestKit, legacyToken: string, messages = 2): Promise<void> {
  const post = (url: string, body: Json) => t.request({ method: "POST", url, body, token: legacyToken });
  const added = await post("/1/add-subscribers", { phone: PHONE, email: EMAIL, first_name: "Ada", visitorId: "v-1" });
  if (added.status !== 201) throw new Error(`add-subscribers answered ${added.status}: ${added.body}`);
  for (let i = 0; i < messages; i++) {
    const sent = await post("/1/messages", { to: PHONE, body: `Order ${i} shipped.`, type: "TRANSACTIONAL" });
    if (sent.status !== 200) throw new Error(`/1/messages answered ${sent.status}: ${sent.body}`);
  }
  await t.scheduler.flush();
}

/** Everything the kit holds about PHONE and EMAIL at a company. */
export async function subjectData(t: TestKit, companyId: string) {
  const subscriptions = t.kit.plugin("subscriptions");
  const user = { phone: PHONE, email: EMAIL };
  return {
    subscriber: (await subscriptions.findSubscriber(companyId, user)) !== undefined,
    subscriptions: (await subscriptions.subscriptions(companyId, user)).length,
    changes: (await subscriptions.changes(companyId, user)).length,
    signUps: (await t.kit.plugin("legacy").signUps(companyId, PHONE)).length,
    messages: (await t.kit.outbox.list({ companyId, to: PHONE })).length,
  };
}

/** A person's profile at a company: identifiers linked together, an attribute, a custom and a purchase event. */
export async function seedProfile(t: TestKit, companyId: string, user: { phone: string; email?: string; clientUserId?: string }): Promise<void> {
  const profiles = t.kit.plugin("profiles");
  await profiles.identify(companyId, user);
  await profiles.setAttributes(companyId, { properties: { tier: "gold" }, user: { phone: user.phone } });
  await profiles.recordCustomEvent(companyId, { type: "Order Shipped", properties: { orderId: "1001" }, user: { phone: user.phone } });
  await profiles.recordEcommerceEvent(companyId, "purchase", { items: [{ productId: "p-1", productVariantId: "v-1", price: [{ value: 20 }] }], user: { phone: user.phone } });
}

/** How many records of each kind the profiles plugin holds for a company. */
export async function profileRecords(t: TestKit, companyId: string): Promise<Record<string, number>> {
  const count = (name: string) => t.kit.storage.collection<{ id: string; companyId: string }>(`profiles_${name}`).count({ companyId });
  return { profiles: await count("profiles"), identifiers: await count("identifiers"), attributes: await count("attributes"), events: await count("events") };
}
