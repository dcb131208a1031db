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

  // GET /v1/me: hash the bearer token, look the credential up by hash, read company and application.
  const me: BareHandler = (authorization) => {
    const match = /^Bearer (\S+)$/.exec(authorization ?? "");
    const hash = match ? createHash("sha256").update(match[1]!).digest("hex") : "";
    const credentialDoc = credentialByHash.get(hash) as string | undefined;
    if (!credentialDoc) return { status: 401, json: { error: "unauthorized" } };
    const credential = JSON.parse(credentialDoc);
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
  return { "/v1/me": me };
}
