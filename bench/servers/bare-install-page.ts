// The baseline: bare node:http and better-sqlite3 doing the same work as the consent page:
// read the cookies, look up the client, its application, the session by token hash, the
// company and the user, sign the CSRF token, and render the same HTML with the same headers.
import { createHash, createHmac } from "node:crypto";
import { createServer } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";
import { consentPage, pageHeaders } from "../../plugins/oauth/install-pages.ts";
import { indexedStatement } from "./baseline-sql.ts";

const db = new Database(join(process.env.BENCH_DATA_DIR!, "reachkit.db"), { readonly: true });
// Indexed fields are read from their columns, as reachkit reads them.
const byField = (table: string, field: string) => indexedStatement(db, `SELECT doc FROM ${table} WHERE "f_${field}" = ?`).pluck();
const byId = (table: string) => indexedStatement(db, `SELECT doc FROM ${table} WHERE id = ?`).pluck();
const clientByClientId = byField("oauth_clients", "clientId");
const sessionByHash = byField("oauth_login_sessions", "tokenHash");
const applicationById = byId("accounts_applications");
const companyById = byId("accounts_companies");
const userById = byId("oauth_dashboard_users");
const secret = process.env.BENCH_SECRET!;

const server = createServer((request, response) => {
  const url = new URL(request.url ?? "/", "http://localhost");
  const cookies = new Map((request.headers.cookie ?? "").split(";").map((pair) => pair.trim().split("=") as [string, string]));
  const client = JSON.parse(clientByClientId.get(url.searchParams.get("client_id")) as string);
  const redirectUri = url.searchParams.get("redirect_uri")!;
  if (!client.redirectUris.includes(redirectUri)) {
    response.writeHead(400);
    return void response.end();
  }
  const application = JSON.parse(applicationById.get(client.id) as string);
  const session = JSON.parse(sessionByHash.get(createHash("sha256").update(cookies.get("rk_session")!).digest("hex")) as string);
  const company = JSON.parse(companyById.get(session.companyId) as string);
  const user = JSON.parse(userById.get(session.userId) as string);
  const csrfToken = createHmac("sha256", secret).update(`reachkit oauth-install csrf\n${cookies.get("rk_csrf")}`).digest("base64url");
  const html = consentPage({
    action: "http://localhost/integrations/oauth-install",
    applicationName: application.name,
    companyName: company.name,
    userEmail: user.email,
    scopes: application.scopes,
    parameters: { client_id: client.clientId, redirect_uri: redirectUri, state: url.searchParams.get("state") ?? undefined },
    csrfToken,
  });
  response.writeHead(200, { ...pageHeaders(redirectUri), "content-type": "text/html; charset=utf-8" });
  response.end(html);
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`PORT ${typeof address === "object" && address ? address.port : 0}`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
