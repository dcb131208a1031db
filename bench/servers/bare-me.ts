// The baseline: bare node:http and better-sqlite3 doing the same work for GET /v1/me:
// hash the bearer token, look the credential up by hash, read company and application, answer JSON.
import "./cpu-probe.ts";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";

const db = new Database(join(process.env.BENCH_DATA_DIR!, "reachkit.db"), { readonly: true });
const credentialByHash = db.prepare("SELECT doc FROM accounts_credentials WHERE json_extract(doc, '$.tokenHash') = ?").pluck();
const byId = (table: string) => db.prepare(`SELECT doc FROM ${table} WHERE id = ?`).pluck();
const companyById = byId("accounts_companies");
const applicationById = byId("accounts_applications");

const server = createServer((request, response) => {
  const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "");
  const hash = match ? createHash("sha256").update(match[1]!).digest("hex") : "";
  const credentialDoc = credentialByHash.get(hash) as string | undefined;
  if (!credentialDoc) {
    response.writeHead(401, { "content-type": "application/json" });
    response.end('{"error":"unauthorized"}');
    return;
  }
  const credential = JSON.parse(credentialDoc);
  const company = JSON.parse(companyById.get(credential.companyId) as string);
  const application = JSON.parse(applicationById.get(credential.applicationId) as string);
  response.writeHead(200, { "content-type": "application/json" });
  response.end(
    JSON.stringify({
      applicationName: application.name,
      attentiveDomainName: company.domain,
      companyName: company.name,
      contactEmail: company.contactEmail,
      companyId: company.id,
    }),
  );
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`PORT ${typeof address === "object" && address ? address.port : 0}`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
