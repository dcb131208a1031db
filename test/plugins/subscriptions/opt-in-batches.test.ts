import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { join } from "node:path";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { profilesPlugin } from "../../../plugins/profiles/index.ts";
import type { SubscriptionEvent } from "../../../plugins/subscriptions/index.ts";
import type { Storage } from "../../../src/index.ts";
import { withCollectionMethod } from "../../support/storage-wrappers.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit } from "../../support/test-kit.ts";
import { testStorage } from "../../support/test-storage.ts";
import { optIn, textsTo } from "./support.ts";

const PHONES = ["+19148440101", "+19148440102", "+19148440103", "+19148440104", "+19148440105", "+19148440106"];
const EMAILS = ["one@example.com", "two@example.com"];

/**
 * Opt-ins that take each path of a batch: fresh phones and emails, a phone twice in one batch, a phone and
 * an email another subscriber already holds, a single opt-in, names and identifiers, another company's
 * opt-in of the same phone.
 */
const MIXED: Array<{ body: Json; otherCompany?: boolean }> = [
  { body: { user: { phone: PHONES[0] } } },
  { body: { user: { phone: PHONES[1], email: EMAILS[0], firstName: "Ada" }, externalIdentifiers: { clientUserId: "u-1" } } },
  { body: { user: { email: EMAILS[1] } } },
  { body: { user: { phone: PHONES[0] } } },
  { body: { user: { phone: PHONES[2] }, singleOptIn: true } },
  { body: { user: { phone: PHONES[3], email: EMAILS[1] } } },
  { body: { user: { phone: PHONES[4] } }, otherCompany: true },
  { body: { user: { phone: PHONES[0] } }, otherCompany: true },
  { body: { user: { phone: PHONES[5], lastName: "Lovelace" }, singleOptIn: true } },
  // Repeats: of both addresses of one subscriber, and of a phone with another kind of text due.
  { body: { user: { phone: PHONES[1], email: EMAILS[0], firstName: "Ada" }, externalIdentifiers: { clientUserId: "u-1" } } },
  { body: { user: { phone: PHONES[2] } } },
  // A subscriber's locale changed through its email, then a repeat through its phone that changes it back.
  { body: { user: { email: EMAILS[0] }, locale: { language: "fr", country: "CA" } } },
  { body: { user: { phone: PHONES[1] } } },
];

/** Posts `MIXED` (once one phone is already subscribed) and processes it: what it stored, texted and emitted, without ids. */
async function processMixed(options: { batches: boolean; storage: () => Promise<Storage> }) {
  let batchWrites = 0;
  const storage: Storage = withCollectionMethod(await options.storage(), "upsertMany", (upsertMany, collection) => (docs) => {
    if (collection === "subscriptions_subscriptions") batchWrites++;
    return upsertMany(docs);
  });
  const t = await startTestKit({ storage, plugins: [...defaultPlugins(), profilesPlugin()], config: { rateLimits: { "opt-in": 100 } } });
  const other = await t.kit.provisionCompany({ name: "Other" });
  await t.kit.plugin("subscriptions").signUpUnits.create({ companyId: t.company.companyId, type: "MARKETING", language: "fr", country: "CA" });
  const events: Array<[string, SubscriptionEvent]> = [];
  for (const name of ["subscription.created", "subscription.confirmed"] as const) t.kit.events.on(name, (event) => void events.push([name, event]));
  await optIn(t, { user: { phone: PHONES[3] } });
  await t.scheduler.flush();
  for (const { body, otherCompany } of MIXED) {
    assert.equal((await optIn(t, body, otherCompany ? (other.output.apiKey as string) : undefined)).status, 202);
    // Processed before the next is posted, its job runs alone (a batch of one: the job type's handler).
    if (!options.batches) await t.scheduler.flush();
  }
  await t.scheduler.flush();
  const state = await snapshot(t, [t.company.companyId, other.company.id]);
  const seen = events.map(([name, { subscriptionId: _s, subscriberId: _r, ...event }]) => [name, { ...event, companyId: event.companyId === t.company.companyId ? "first" : "other" }]);
  // Two companies' texts to one phone leave through two senders' drains, in either order where they run side by side.
  const texts = PHONES.map((phone) => textsTo(t, phone).sort());
  await t.stop();
  return { batchWrites, state, events: seen, texts };
}

/** Each company's subscribers, subscriptions, change records, outbox messages and profiles, in a stable order and with ids named by address. */
async function snapshot(t: TestKit, companyIds: string[]) {
  const all = async <T>(name: string) => (await t.kit.storage.collection<T & { id: string }>(name).find({ orderBy: [{ field: "id" }] })).items;
  const subscribers = await all<{ companyId: string; phone?: string; email?: string }>("subscriptions_subscribers");
  const company = (id: string) => `company ${companyIds.indexOf(id)}`;
  const holder = (id: string | undefined) => {
    const subscriber = subscribers.find((each) => each.id === id);
    return subscriber ? `${subscriber.phone ?? ""}/${subscriber.email ?? ""}` : id;
  };
  const sorted = (rows: unknown[]) => rows.map((row) => JSON.stringify(row)).sort();
  const identifiers = await all<{ companyId: string; key: string; profileId: string }>("profiles_identifiers");
  return {
    subscribers: sorted(subscribers.map(({ id: _, companyId, ...subscriber }) => ({ ...subscriber, company: company(companyId) }))),
    subscriptions: sorted(
      (await all<{ companyId: string; subscriberId: string; signUpUnitId: string }>("subscriptions_subscriptions")).map(({ id: _, companyId, subscriberId, signUpUnitId: _u, ...subscription }) => ({
        ...subscription,
        company: company(companyId),
        holder: holder(subscriberId),
      })),
    ),
    changes: sorted(
      (await all<{ companyId: string; subscriberId?: string; subscriptionId?: string; key: string; signUpUnitId?: string }>("subscriptions_changes")).map(
        ({ id: _, key: _k, companyId, subscriberId, subscriptionId: _s, signUpUnitId: _u, ...change }) => ({ ...change, company: company(companyId), holder: holder(subscriberId) }),
      ),
    ),
    outbox: sorted(
      (await all<{ companyId: string; to: string; kind: string; status: string; body?: string; reason?: string }>("reachkit_outbox")).map(({ companyId, to, kind, status, body, reason }) => ({
        company: company(companyId),
        to,
        kind,
        status,
        body,
        reason,
      })),
    ),
    // Which identifiers share a profile: each identifier with the others of its profile.
    profiles: sorted(identifiers.map(({ companyId, key, profileId }) => [company(companyId), key, identifiers.filter((other) => other.profileId === profileId).map((other) => other.key).sort()])),
  };
}

const storages = {
  "the test storage": testStorage,
  sqlite: async () => sqliteStorage({ filename: join(temporaryDirectory("opt-in-batches"), "kit.db") }),
};

describe("opt-in jobs in a batch (OptIns.processMany)", () => {
  for (const [name, storage] of Object.entries(storages)) it(`${name}: store, text and emit what the same opt-ins processed one at a time do, the fresh ones and the repeats written together`, async () => {
    const batched = await processMixed({ batches: true, storage });
    const alone = await processMixed({ batches: false, storage });
    assert.ok(batched.batchWrites > 0, "the batch wrote its fresh opt-ins' subscriptions together");
    assert.equal(alone.batchWrites, 0);
    assert.deepEqual(batched.state, alone.state);
    assert.deepEqual(batched.events, alone.events);
    assert.deepEqual(batched.texts, alone.texts);
    // What both did: nine subscriptions (seven of the first company), each created once; the first phone texted
    // once by each company, its repeats recorded only, but for the third phone's already-subscribed text; the
    // subscriber's locale back to en-US.
    assert.deepEqual(batched.state.subscriptions.map((row) => JSON.parse(row).company).sort(), [...Array<string>(7).fill("company 0"), "company 1", "company 1"]);
    assert.deepEqual(batched.events.map(([name]) => name), Array<string>(9).fill("subscription.created"));
    assert.deepEqual(batched.texts.map((texts) => texts.length), [2, 1, 2, 1, 1, 1]);
    assert.equal(batched.state.changes.filter((row) => JSON.parse(row).action === "opt_in_repeated").length, 8);
    const subscriber = batched.state.subscribers.map((row) => JSON.parse(row)).find((each) => each.email === EMAILS[0]);
    assert.deepEqual(subscriber?.locale, { language: "en", country: "US" });
  });
});
