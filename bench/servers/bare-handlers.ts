// The baselines' work, written once for every framework: bare better-sqlite3 doing what reachkit does per request.
import { createHash } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { indexedStatement } from "./baseline-sql.ts";

export interface BareAnswer {
  status: number;
  json: unknown;
}

/** A credential as the bare handlers read it. */
export interface BareCredential {
  companyId: string;
  applicationId: string;
  scopes: string[];
  revokedAt?: number;
}

/** The credential of a bearer token: its SHA-256 hash looked up through the unique index on it. */
export function bareCredentials(db: Database.Database): (authorization: string | undefined) => BareCredential | undefined {
  const credentialByHash = indexedStatement(db, `SELECT doc FROM accounts_credentials WHERE "f_tokenHash" = ?`).pluck();
  return (authorization) => {
    const match = /^Bearer (\S+)$/.exec(authorization ?? "");
    const doc = match ? (credentialByHash.get(createHash("sha256").update(match[1]!).digest("hex")) as string | undefined) : undefined;
    return doc ? (JSON.parse(doc) as BareCredential) : undefined;
  };
}

/** One benchmarked request done by hand: the Authorization header and the query in, status and JSON out. */
export type BareHandler = (authorization: string | undefined, query: URLSearchParams) => BareAnswer;

/**
 * The bare handlers by path, on the bench database (read only). They read the indexed columns reachkit
 * reads (`f_<field>`, see docs/architecture.md), through the same indexes. Add a path here and in
 * bench/http-adapters.ts to measure another request.
 */
export function bareHandlers(dataDir: string): Record<string, BareHandler> {
  const db = new Database(join(dataDir, "reachkit.db"), { readonly: true });
  const byId = (table: string) => indexedStatement(db, `SELECT doc FROM ${table} WHERE id = ?`).pluck();
  const companyById = byId("accounts_companies");
  const applicationById = byId("accounts_applications");
  const subscriptionsOf = indexedStatement(
    db,
    `SELECT doc FROM subscriptions_subscriptions WHERE "f_companyId" = ? AND "f_channel" = ? AND "f_address" = ?`,
  ).pluck();
  const credentialOf = bareCredentials(db);

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
