/**
 * Every scope of the interface's scope table, plus the three the reference
 * also uses, then reachkit's own (`journeys:*`, `segments:*`, `campaigns:*`, for its own API).
 */
export const SCOPES = [
  "events:write",
  "ecommerce:write",
  "subscriptions:write",
  "subscriptions:read",
  "attributes:write",
  "privacy_requests:write",
  "privacy_requests:read",
  "product_catalogs:write",
  "product_catalogs:read",
  "identity:write",
  "journeys:write",
  "journeys:read",
  "segments:write",
  "segments:read",
  "campaigns:write",
  "campaigns:read",
  "webhooks:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/** Plain words for each scope, shown on the OAuth consent page and by the CLI. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = {
  "events:write": "Send custom events",
  "ecommerce:write": "Send ecommerce events",
  "subscriptions:write": "Subscribe and unsubscribe people to text and email",
  "subscriptions:read": "See whether a phone number or email address is subscribed",
  "attributes:write": "Set custom attributes on subscribers",
  "privacy_requests:write": "Ask for a subscriber's data to be deleted",
  "privacy_requests:read": "See the status of deletion requests",
  "product_catalogs:write": "Upload your product catalog",
  "product_catalogs:read": "See your product catalog uploads",
  "identity:write": "Link a person's phone, email and ids in other systems",
  "journeys:write": "Create, change, pause and delete your automated journeys (reachkit's own API)",
  "journeys:read": "See your automated journeys and their results (reachkit's own API)",
  "segments:write": "Create, change and delete your audience segments (reachkit's own API)",
  "segments:read": "See your audience segments, their size and a sample of their people (reachkit's own API)",
  "campaigns:write": "Create, send, schedule and cancel your campaigns (reachkit's own API)",
  "campaigns:read": "See your campaigns and their results (reachkit's own API)",
  "webhooks:write": "Receive events at your webhooks, and manage them",
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** Splits a space- or comma-separated list; throws naming the first unknown scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = text.split(/[\s,]+/).filter(Boolean);
  const unknown = scopes.find((scope) => !isScope(scope));
  if (unknown) throw new Error(`unknown scope "${unknown}"; known scopes: ${SCOPES.join(", ")}`);
  return [...new Set(scopes)] as Scope[];
}
