import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { MAX_PAGE_SIZE, timelineCursor } from "../../../plugins/profiles/index.ts";
import { HttpError } from "../../../src/index.ts";
import { cli, newDataDir, openServerKit } from "../../support/cli.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { EMAIL, PHONE, profileOf, startProfilesKit } from "./support.ts";

describe("a profile's timeline", () => {
  it("reads newest first by when the events occurred, in pages that follow one another without gaps or repeats", async () => {
    const t = await startProfilesKit();
    const profiles = t.kit.plugin("profiles");
    const companyId = t.company.companyId;
    // Sent out of order: occurredAt, not arrival, orders the timeline; two events share each minute.
    const minutes = Array.from({ length: 60 }, (_, i) => (i * 37) % 60);
    for (const minute of minutes) {
      for (const n of [1, 2]) {
        const occurredAt = new Date(t.clock.now() - (60 - minute) * 60_000).toISOString();
        await profiles.recordCustomEvent(companyId, { type: `m${String(minute).padStart(2, "0")}`, properties: { n }, occurredAt, user: { phone: PHONE } });
      }
    }
    const profile = (await profileOf(t, "phone", PHONE))!;
    const seen: string[] = [];
    let after: string | undefined;
    const pages: number[] = [];
    for (;;) {
      const page = await profiles.events(companyId, profile.id, { first: 50, after });
      pages.push(page.events.length);
      seen.push(...page.events.map((event) => `${event.type}/${(event.properties as { n: number }).n}`));
      if (!page.hasNextPage) break;
      after = timelineCursor(page.events.at(-1)!);
    }
    assert.deepEqual(pages, [50, 50, 20]);
    const expected = Array.from({ length: 60 }, (_, i) => 59 - i).flatMap((minute) => [2, 1].map((n) => `m${String(minute).padStart(2, "0")}/${n}`));
    assert.deepEqual(seen, expected);
    assert.deepEqual(await profiles.events(companyId, profile.id, { first: 0 }), { events: [], hasNextPage: false });
    await assert.rejects(profiles.events(companyId, profile.id, { first: MAX_PAGE_SIZE + 1 }), RangeError);
    await t.stop();
  });

  it("reads a page on SQLite by walking the (profileId, seq) index backwards: no sort step, and no condition outside the index", async () => {
    const file = join(temporaryDirectory("timeline-plan"), "reachkit.db");
    const t = await startProfilesKit({ storage: sqliteStorage({ filename: file }) });
    const profiles = t.kit.plugin("profiles");
    const companyId = t.company.companyId;
    for (const minute of [3, 1, 2]) {
      await profiles.recordCustomEvent(companyId, { type: `m${minute}`, occurredAt: new Date(t.clock.now() - minute * 60_000).toISOString(), user: { phone: PHONE } });
    }
    const profile = (await profileOf(t, "phone", PHONE))!;
    const prepared: string[] = [];
    const prepare = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, sql: string) {
      prepared.push(sql);
      return prepare.call(this, sql);
    } as typeof prepare;
    let page;
    try {
      page = await profiles.events(companyId, profile.id, { first: 2 });
    } finally {
      Database.prototype.prepare = prepare;
    }
    assert.deepEqual(page.events.map((event) => event.type), ["m1", "m2"]);
    const [read, ...others] = prepared.filter((sql) => sql.includes(`FROM "profiles_events"`));
    assert.equal(others.length, 0);
    const db = new Database(file, { readonly: true });
    // Any value will do for each parameter: the plan does not depend on them.
    const parameters = Array.from({ length: read!.split("?").length - 1 }, () => profile.id);
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${read}`).all(...parameters) as Array<{ detail: string }>;
    db.close();
    assert.deepEqual(
      plan.map((step) => step.detail),
      ['SEARCH profiles_events USING INDEX ix_profiles_events__profileId__seq (f_profileId=?)'],
    );
    await t.stop();
  });

  it("validates in-process calls like the routes: an invalid request throws the route's 400", async () => {
    const t = await startProfilesKit();
    const profiles = t.kit.plugin("profiles");
    const refused = await profiles.recordCustomEvent(t.company.companyId, { type: "a(b)", user: { phone: PHONE } }).then(
      () => undefined,
      (error: HttpError) => error,
    );
    assert.ok(refused instanceof HttpError);
    assert.deepEqual([refused.status, refused.details.map((detail) => detail.path)], [400, ["type"]]);
    await profiles.identify(t.company.companyId, { phone: PHONE, email: EMAIL });
    await profiles.recordEcommerceEvent(t.company.companyId, "purchase", { items: [{ productId: "p", productVariantId: "v", price: [{ value: 1 }] }], orderId: "o-1", user: { email: EMAIL } });
    await profiles.setAttributes(t.company.companyId, { properties: { tier: "gold" }, user: { phone: PHONE } });
    const profile = (await profileOf(t, "email", EMAIL))!;
    assert.deepEqual(profile.attributes.map(({ name, value, type }) => [name, value, type]), [["tier", "gold", "string"]]);
    assert.equal((await profiles.events(t.company.companyId, profile.id, { first: 10 })).events[0]?.orderId, "o-1");
    await t.stop();
  });
});

describe("reachkit profiles show", () => {
  it("prints one profile by phone, email or clientUserId: identifiers, attributes and newest events", async () => {
    const dataDir = newDataDir();
    const kit = await openServerKit(dataDir);
    const { company } = await kit.provisionCompany({ name: "Acme" });
    const profiles = kit.plugin("profiles");
    await profiles.identify(company.id, { phone: PHONE, email: EMAIL, clientUserId: "u-1" });
    await profiles.setAttributes(company.id, { properties: { tier: "gold" }, user: { phone: PHONE } });
    for (const type of ["Signed up", "Order Shipped"]) await profiles.recordCustomEvent(company.id, { type, user: { phone: PHONE } });
    await kit.stop();

    const byPhone = await cli(dataDir, "profiles", "show", "--company", company.id, "--phone", PHONE);
    assert.equal(byPhone.code, 0, byPhone.stderr);
    assert.match(byPhone.stdout, /identifiers:\n {2}- phone {2}\+19148440001\n {2}- email {2}ada@example\.com\n {2}- clientUserId {2}u-1/);
    assert.match(byPhone.stdout, /attributes: *\n {2}- tier {2}"gold" {2}string/);
    assert.match(byPhone.stdout, /events \(newest first\):\noccurredAt +kind +type +detail\n.*custom +Order Shipped.*\n.*custom +Signed up/);
    const byEmail = await cli(dataDir, "profiles", "show", "--company", company.id, "--email", "ADA@example.com", "--events", "1", "--json");
    assert.equal(byEmail.json.id, (await cli(dataDir, "profiles", "show", "--company", company.id, "--client-user-id", "u-1", "--json")).json.id);
    assert.deepEqual(byEmail.json.events.map((event: { type: string }) => event.type), ["Order Shipped"]);

    const unknown = await cli(dataDir, "profiles", "show", "--company", company.id, "--phone", "+19148440002");
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no profile with phone \+19148440002/);
    for (const args of [["--phone", PHONE, "--email", EMAIL], [], ["--phone", PHONE, "--events", "101"]]) {
      const refused = await cli(dataDir, "profiles", "show", "--company", company.id, ...args);
      assert.equal(refused.code, 2, args.join(" "));
    }
  });
});
