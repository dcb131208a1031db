// The baseline: bare node:http and better-sqlite3 doing the same reads and writes as reachkit for
// GET /v1/subscriptions (token lookup, scope check, subscriptions of the phone/email), POST /v1/subscriptions
// (token, body checks, sign-up unit, existing subscriptions, one job row written) and a POST /v1/graphql
// of aliased users (token, one subscriptions lookup per alias, the nested answer).
import "./cpu-probe.ts";
import { createHash, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import Database from "better-sqlite3";

const E164 = /^\+[1-9]\d{6,14}$/;
const db = new Database(join(process.env.BENCH_DATA_DIR!, "reachkit.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.pragma("busy_timeout = 5000");
const where = (table: string, fields: string[]) =>
  db.prepare(`SELECT doc FROM ${table} WHERE ${fields.map((f) => `json_extract(doc, '$.${f}') = ?`).join(" AND ")}`).pluck();
const credentialByHash = where("accounts_credentials", ["tokenHash"]);
const subscriptionsOf = where("subscriptions_subscriptions", ["companyId", "channel", "address"]);
const subscriptionOf = where("subscriptions_subscriptions", ["companyId", "channel", "address", "type"]);
const unitsMatching = where("subscriptions_sign_up_units", ["companyId", "type", "language", "country"]);
const insertJob = db.prepare("INSERT INTO reachkit_jobs (id, doc) VALUES (?, ?)");

interface Credential {
  companyId: string;
  scopes: string[];
  revokedAt?: number;
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function authenticate(request: IncomingMessage, scopes: string[]): Credential | undefined {
  const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "");
  const doc = match ? (credentialByHash.get(createHash("sha256").update(match[1]!).digest("hex")) as string | undefined) : undefined;
  const credential = doc ? (JSON.parse(doc) as Credential) : undefined;
  return credential && credential.revokedAt === undefined && scopes.some((s) => credential.scopes.includes(s)) ? credential : undefined;
}

function readJson(request: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
  });
}

interface Subscription {
  type: string;
  channel: string;
  state: string;
}

function eligibilities(companyId: string, phone: string | undefined, email: string | undefined) {
  const rows: Subscription[] = [];
  if (phone) for (const doc of subscriptionsOf.all(companyId, "TEXT", phone)) rows.push(JSON.parse(doc as string));
  if (email) for (const doc of subscriptionsOf.all(companyId, "EMAIL", email)) rows.push(JSON.parse(doc as string));
  return rows.map((s) => ({ subscription: { type: s.type, channel: s.channel }, eligibility: { isEligible: s.state === "active" } }));
}

function getSubscriptions(request: IncomingMessage, response: ServerResponse): void {
  const credential = authenticate(request, ["subscriptions:read", "subscriptions:write"]);
  if (!credential) return send(response, 401, { error: "unauthorized" });
  const query = new URL(request.url!, "http://localhost").searchParams;
  let phone = query.get("phone") ?? undefined;
  if (phone?.startsWith(" ")) phone = `+${phone.slice(1)}`;
  const email = query.get("email") === "undefined" ? undefined : (query.get("email")?.toLowerCase() ?? undefined);
  if ((!phone && !email) || (phone && !E164.test(phone))) return send(response, 400, { error: "phone" });
  send(response, 200, { subscriptionEligibilities: eligibilities(credential.companyId, phone, email) });
}

async function postSubscription(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const credential = authenticate(request, ["subscriptions:write"]);
  if (!credential) return send(response, 401, { error: "unauthorized" });
  const body = (await readJson(request)) as { user?: { phone?: string }; locale?: { language: string; country: string }; subscriptionType?: string };
  const phone = body.user?.phone;
  if (typeof phone !== "string" || !E164.test(phone) || !body.locale || !body.subscriptionType) return send(response, 400, { error: "body" });
  const units = unitsMatching.all(credential.companyId, body.subscriptionType, body.locale.language, body.locale.country);
  if (units.length !== 1) return send(response, 400, { error: "locale" });
  const unit = JSON.parse(units[0] as string) as { id: string; type: string; language: string; country: string };
  const existing = subscriptionOf.get(credential.companyId, "TEXT", phone, unit.type) as string | undefined;
  const status = existing && (JSON.parse(existing) as Subscription).state !== "unsubscribed" ? "PREVIOUSLY_CREATED" : "NEWLY_CREATED";
  const now = Date.now();
  const id = `${now.toString(36)}${randomUUID()}`;
  const payload = { requestId: randomUUID(), companyId: credential.companyId, signUpUnitId: unit.id, type: unit.type, user: { phone }, locale: body.locale, singleOptIn: false, source: "api" };
  const job = {
    id, type: "subscriptions.opt-in", key: null, activeKey: null, companyId: credential.companyId, payload, status: "queued",
    runAt: now, attempts: 0, maxAttempts: 5, leaseUntil: null, lastError: null, createdAt: now, updatedAt: now, finishedAt: null,
  };
  insertJob.run(id, JSON.stringify(job));
  send(response, 202, { user: { phone }, subscriptionResponses: [{ subscription: { type: unit.type, channel: "TEXT" }, subscriptionCreationStatus: status }] });
}

async function postGraphql(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const credential = authenticate(request, ["subscriptions:read", "subscriptions:write"]);
  if (!credential) return send(response, 401, { error: "unauthorized" });
  const { query } = (await readJson(request)) as { query: string };
  const company: Record<string, unknown> = {};
  for (const [, alias, phone] of query.matchAll(/(\w+): user\(phone: "([^"]+)"\)/g)) {
    const rows = eligibilities(credential.companyId, phone, undefined).map(({ subscription, eligibility }) => ({
      subscription: { channel: `CHANNEL_${subscription.channel}`, type: `TYPE_${subscription.type}` },
      eligibility,
    }));
    company[alias!] = { subscriptions: { subscriptionEligibilities: rows } };
  }
  send(response, 200, { data: { viewer: { installedApplication: { installerCompany: company } } }, extensions: { traceId: randomUUID() } });
}

const server = createServer((request, response) => {
  const path = request.url!.split("?", 1)[0];
  const done = (error: unknown) => send(response, 400, { error: String(error) });
  if (request.method === "GET" && path === "/v1/subscriptions") return getSubscriptions(request, response);
  if (request.method === "POST" && path === "/v1/subscriptions") return void postSubscription(request, response).catch(done);
  if (request.method === "POST" && path === "/v1/graphql") return void postGraphql(request, response).catch(done);
  send(response, 404, { error: "not found" });
});
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`PORT ${typeof address === "object" && address ? address.port : 0}`);
});
process.once("SIGTERM", () => server.close(() => process.exit(0)));
