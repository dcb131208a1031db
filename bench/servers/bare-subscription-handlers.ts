// The bare work of bench/servers/bare-subscriptions.ts: better-sqlite3 doing the reads and writes reachkit
// does for GET /v1/subscriptions (token, scope, the subscriptions of the phone or email), POST
// /v1/subscriptions (token, body checks, sign-up unit, existing subscription, the job row with the columns
// reachkit's job runner reads) and POST /v1/graphql of aliased users (token, one lookup per alias), through
// the indexes reachkit uses.
import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { sortableId } from "../../src/kernel/ids.ts";
import { bareCredentials, type BareAnswer, type BareCredential } from "./bare-handlers.ts";
import { indexedStatement } from "./baseline-sql.ts";

const E164 = /^\+[1-9]\d{6,14}$/;
const OPT_IN_JOB = "subscriptions.opt-in";

interface Subscription {
  type: string;
  channel: string;
  state: string;
}

export interface BareSubscriptions {
  eligibility(authorization: string | undefined, query: URLSearchParams): BareAnswer;
  optIn(authorization: string | undefined, body: unknown): BareAnswer;
  graphql(authorization: string | undefined, body: unknown): BareAnswer;
}

export function bareSubscriptions(db: Database.Database): BareSubscriptions {
  const credentialOf = bareCredentials(db);
  const subscriptionsOf = indexedStatement(
    db,
    `SELECT doc FROM subscriptions_subscriptions WHERE "f_companyId" = ? AND "f_channel" = ? AND "f_address" = ?`,
  ).pluck();
  const subscriptionOf = indexedStatement(
    db,
    `SELECT doc FROM subscriptions_subscriptions WHERE "f_companyId" = ? AND "f_channel" = ? AND "f_address" = ? AND "f_type" = ?`,
  ).pluck();
  const unitsMatching = indexedStatement(
    db,
    `SELECT doc FROM subscriptions_sign_up_units WHERE "f_companyId" = ? AND "f_type" = ? AND "f_language" = ? AND "f_country" = ?`,
  ).pluck();
  // The row reachkit's Jobs.enqueue writes: the document and its indexed fields' columns, a queued job has no lease or key,
  // and an opt-in runs in the job runner's own slots (no lane).
  const insertJob = indexedStatement(
    db,
    `INSERT INTO reachkit_jobs (id, doc, "f_status", "f_runAt", "f_leaseUntil", "f_activeKey", "f_key", "f_companyId", "f_lane") VALUES (?, ?, 'queued', ?, NULL, NULL, NULL, ?, NULL)`,
  );

  const authorized = (authorization: string | undefined, scopes: string[]): BareCredential | undefined => {
    const credential = credentialOf(authorization);
    return credential && credential.revokedAt === undefined && scopes.some((s) => credential.scopes.includes(s)) ? credential : undefined;
  };
  const eligibilities = (companyId: string, phone: string | undefined, email: string | undefined) => {
    const rows: Subscription[] = [];
    if (phone) for (const doc of subscriptionsOf.all(companyId, "TEXT", phone)) rows.push(JSON.parse(doc as string));
    if (email) for (const doc of subscriptionsOf.all(companyId, "EMAIL", email)) rows.push(JSON.parse(doc as string));
    return rows.map((s) => ({ subscription: { type: s.type, channel: s.channel }, eligibility: { isEligible: s.state === "active" } }));
  };
  const unauthorized: BareAnswer = { status: 401, json: { error: "unauthorized" } };

  return {
    eligibility(authorization, query) {
      const credential = authorized(authorization, ["subscriptions:read", "subscriptions:write"]);
      if (!credential) return unauthorized;
      let phone = query.get("phone") ?? undefined;
      if (phone?.startsWith(" ")) phone = `+${phone.slice(1)}`;
      const email = query.get("email") === "undefined" ? undefined : (query.get("email")?.toLowerCase() ?? undefined);
      if ((!phone && !email) || (phone && !E164.test(phone))) return { status: 400, json: { error: "phone" } };
      return { status: 200, json: { subscriptionEligibilities: eligibilities(credential.companyId, phone, email) } };
    },

    optIn(authorization, input) {
      const credential = authorized(authorization, ["subscriptions:write"]);
      if (!credential) return unauthorized;
      const body = input as { user?: { phone?: string }; locale?: { language: string; country: string }; subscriptionType?: string };
      const phone = body.user?.phone;
      if (typeof phone !== "string" || !E164.test(phone) || !body.locale || !body.subscriptionType) return { status: 400, json: { error: "body" } };
      const units = unitsMatching.all(credential.companyId, body.subscriptionType, body.locale.language, body.locale.country);
      if (units.length !== 1) return { status: 400, json: { error: "locale" } };
      const unit = JSON.parse(units[0] as string) as { id: string; type: string };
      const existing = subscriptionOf.get(credential.companyId, "TEXT", phone, unit.type) as string | undefined;
      const status = existing && (JSON.parse(existing) as Subscription).state !== "unsubscribed" ? "PREVIOUSLY_CREATED" : "NEWLY_CREATED";
      const now = Date.now();
      const id = sortableId(now);
      const payload = { requestId: sortableId(now), companyId: credential.companyId, signUpUnitId: unit.id, type: unit.type, user: { phone }, locale: body.locale, singleOptIn: false, source: "api" };
      const job = {
        id, type: OPT_IN_JOB, key: null, activeKey: null, companyId: credential.companyId, payload, status: "queued",
        runAt: now, attempts: 0, maxAttempts: 5, leaseUntil: null, lastError: null, createdAt: now, updatedAt: now, finishedAt: null,
      };
      insertJob.run(id, JSON.stringify(job), BigInt(now), credential.companyId);
      return { status: 202, json: { user: { phone }, subscriptionResponses: [{ subscription: { type: unit.type, channel: "TEXT" }, subscriptionCreationStatus: status }] } };
    },

    graphql(authorization, input) {
      const credential = authorized(authorization, ["subscriptions:read", "subscriptions:write"]);
      if (!credential) return unauthorized;
      const { query } = input as { query: string };
      const company: Record<string, unknown> = {};
      for (const [, alias, phone] of query.matchAll(/(\w+): user\(phone: "([^"]+)"\)/g)) {
        const rows = eligibilities(credential.companyId, phone, undefined).map(({ subscription, eligibility }) => ({
          subscription: { channel: `CHANNEL_${subscription.channel}`, type: `TYPE_${subscription.type}` },
          eligibility,
        }));
        company[alias!] = { subscriptions: { subscriptionEligibilities: rows } };
      }
      return { status: 200, json: { data: { viewer: { installedApplication: { installerCompany: company } } }, extensions: { traceId: randomUUID() } } };
    },
  };
}
