import { profilesPlugin, type ProfilesPluginOptions } from "../../../plugins/profiles/index.ts";
import type { InjectResponse, Scope } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

export const PHONE = "+19148440001";
export const EMAIL = "ada@example.com";

/** A test kit with the accounts, subscriptions and profiles plugins; rate limits lifted unless `config` sets them. */
export function startProfilesKit(options: TestKitOptions & { profiles?: ProfilesPluginOptions } = {}): Promise<TestKit> {
  return startTestKit({ plugins: [...defaultPlugins(), profilesPlugin(options.profiles)], config: { rateLimits: { default: Infinity, identity: Infinity } }, ...options });
}

export const post = (t: TestKit, url: string, body: Json, token?: string | null): Promise<InjectResponse> => t.request({ method: "POST", url, body, token });

/** The profile of an identifier as the service shows it. */
export async function profileOf(t: TestKit, kind: "phone" | "email" | "clientUserId", value: string) {
  return t.kit.plugin("profiles").show(t.company.companyId, { kind, value });
}

/** A profile's events, newest first, as the timeline reads them. */
export async function eventsOf(t: TestKit, kind: "phone" | "email" | "clientUserId", value: string) {
  const profile = await profileOf(t, kind, value);
  if (!profile) return [];
  return (await t.kit.plugin("profiles").events(t.company.companyId, profile.id, { first: 100 })).events;
}

/** Everything the profiles plugin stores, by collection: a refused request must leave these counts as they were. */
export async function storedCounts(t: TestKit): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const name of ["profiles_profiles", "profiles_identifiers", "profiles_attributes", "profiles_attribute_types", "profiles_events", "profiles_event_keys"]) {
    counts[name] = await t.kit.storage.collection(name).count();
  }
  return counts;
}

/** An API key of the test company holding exactly these scopes. */
export async function tokenWith(t: TestKit, scopes: Scope[]): Promise<string> {
  const accounts = t.kit.plugin("accounts");
  const application = await accounts.createApplication({ companyId: t.company.companyId, name: `only ${scopes.join(" ")}`, scopes });
  return (await accounts.issueCredential({ companyId: t.company.companyId, kind: "api_key", applicationId: application.id })).token;
}
