import { legacyPlugin } from "../../../plugins/legacy/index.ts";
import type { HostGroup, InjectResponse, NeutralResponse } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

/** A valid US number (New York), and a second one. */
export const PHONE = "+19148440001";
export const OTHER_PHONE = "+19148440002";

/** A test kit with the legacy plugin, rate limits lifted (the tests send bursts). */
export function startLegacyKit(options: TestKitOptions = {}): Promise<TestKit> {
  return startTestKit({
    plugins: [...defaultPlugins(), legacyPlugin()],
    ...options,
    config: { rateLimits: { default: Infinity }, ...options.config },
  });
}

/** A POST with the company's legacy token (or the token given; null: none). */
export function post(t: TestKit, url: string, body: Json, token: string | null = t.company.legacyToken): Promise<InjectResponse> {
  return t.request({ method: "POST", url, body, token });
}

/** Adds an active subscriber through the legacy route and clears the texts the sign-up sent. */
export async function addSubscriber(t: TestKit, phone: string, extra: Json = {}): Promise<Json> {
  const response = await post(t, "/1/add-subscribers", { phone, ...extra });
  if (response.status !== 201 && response.status !== 200) throw new Error(`add-subscribers answered ${response.status}: ${response.body}`);
  await t.scheduler.flush();
  t.sms.clear();
  return t.json(response);
}

/** The bodies of the texts the memory provider delivered to a number. */
export const textsTo = (t: TestKit, phone: string): string[] => t.sms.sentTo(phone).map((message) => message.body);

/** A JSON POST with a bearer token, served only by the listeners of `groups` (a deployment with a listener per host). */
export function postToHosts(t: TestKit, groups: HostGroup[], url: string, body: Json, token: string): Promise<NeutralResponse> {
  return t.kit.http.handle(
    {
      method: "POST",
      url,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: { kind: "buffer", buffer: Buffer.from(JSON.stringify(body)) },
    },
    { groups },
  );
}
