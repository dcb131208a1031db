// The baselines' work, written once for every framework: bare better-sqlite3 doing what reachkit does per request.
import { createHash } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";

export interface BareAnswer {
  status: number;
  json: unknown;
}

/** One benchmarked request done by hand: the Authorization header and the query in, status and JSON out. */
export type BareHandler = (authorization: string | undefined, query: URLSearchParams) => BareAnswer;

/** The bare handlers by path, on the bench database (read only). Add a path here and in bench/http-adapters.ts to measure another request. */
export function bareHandlers(dataDir: string): Record<string, BareHandler> {
  const db = new Database(join(dataDir, "reachkit.db"), { readonly: true });
  const credentialByHash = db.prepare("SELECT doc FROM accounts_credentials WHERE json_extract(doc, '$.tokenHash') = ?").pluck();
  const byId = (table: string) => db.prepare(`SELECT doc FROM ${table} WHERE id = ?`).pluck();
  const companyById = byId("accounts_companies");
  const applicationById = byId("accounts_applications");
  const subscriptionsOf = db
    .prepare(
      "SELECT doc FROM subscriptions_subscriptions WHERE json_extract(doc, '$.companyId') = ? AND json_extract(doc, '$.channel') = ? AND json_extract(doc, '$.address') = ?",
    )
    .pluck();
  const credentialOf = (authorization: string | undefined): { companyId: string; applicationId: string; scopes: string[] } | undefined => {
    const match = /^Bearer (\S+)$/.exec(authorization ?? "");
    const hash = match ? createHash("sha256").update(match[1]!).digest("hex") : "";
    const doc = credentialByHash.get(hash) as string | undefined;
    return doc ? JSON.parse(doc) : undefined;
  };

  // GET /v1/me: hash the bearer token, look the credential up by hash, read company and application.
  const me: BareHandler = (authorization) => {
    const credential = credentialOf(authorization);
    if (!credential) return { status: 401, json: { error: "unauthorized" } };
    const company = JSON.parse(companyById.get(credential.companyId) as string);
    const application = JSON.parse(applicationById.get(credential.applicationId) as string);
    return {
      status: 200,
      json: {
        applicationName: application.name,
        attentiveDomainName: company.domain,
        companyName: company.name,
        contactEmail: company.contactEmail,
        companyId: company.id,
      },
    };
  };

  // GET /v1/subscriptions?phone=: token and scope, the E.164 check, the phone's TEXT subscriptions as eligibilities.
  const subscriptions: BareHandler = (authorization, query) => {
    const credential = credentialOf(authorization);
    if (!credential || !credential.scopes.some((scope) => scope === "subscriptions:read" || scope === "subscriptions:write")) {
      return { status: 401, json: { error: "unauthorized" } };
    }
    const phone = query.get("phone") ?? "";
    if (!/^\+[1-9]\d{6,14}$/.test(phone)) return { status: 400, json: { error: "phone" } };
    const eligibilities = (subscriptionsOf.all(credential.companyId, "TEXT", phone) as string[]).map((doc) => {
      const subscription = JSON.parse(doc);
      return { subscription: { type: subscription.type, channel: subscription.channel }, eligibility: { isEligible: subscription.state === "active" } };
    });
    return { status: 200, json: { subscriptionEligibilities: eligibilities } };
  };
  return { "/v1/me": me, "/v1/subscriptions": subscriptions };
}
