import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Subscriber, SubscriberDirectory } from "../../../plugins/subscriptions/index.ts";
import { startTestKit, type TestKit } from "../../support/test-kit.ts";
import { optIn, textFrom, unsubscribe } from "./support.ts";

const DAY = 86_400_000;

async function everyPage(directory: SubscriberDirectory, companyId: string, search: string | undefined, limit: number): Promise<Subscriber[][]> {
  const pages: Subscriber[][] = [];
  let after: string | undefined;
  do {
    const page = await directory.page(companyId, { search, after, limit });
    pages.push(page.items);
    after = page.nextCursor;
  } while (after);
  return pages;
}

async function subscribe(t: TestKit, phone: string, email?: string): Promise<void> {
  const response = await optIn(t, { user: { phone, ...(email ? { email } : {}) }, singleOptIn: true });
  assert.equal(response.status, 202, response.body);
  await t.scheduler.flush();
  t.clock.advance(1000);
}

describe("the subscriber directory", () => {
  it("pages subscribers newest first, and finds them by phone digits, email beginning or id, within the company only", async () => {
    const t = await startTestKit();
    const companyId = t.company.companyId;
    const directory = t.kit.plugin("subscriptions").directory;
    const phones = ["+13125550100", "+13125550101", "+13125550199", "+14155550100", "+14155550101"];
    for (const [n, phone] of phones.entries()) await subscribe(t, phone, `person${n}@example.com`);
    const other = (await t.kit.provisionCompany({ name: "Globex" })).output as { apiKey: string };
    await optIn(t, { user: { phone: "+13125550102", email: "theirs@example.com" }, singleOptIn: true }, other.apiKey);
    await t.scheduler.flush();

    const pages = await everyPage(directory, companyId, undefined, 2);
    assert.deepEqual(pages.map((page) => page.length), [2, 2, 1]);
    assert.deepEqual(pages.flat().map((subscriber) => subscriber.phone), [...phones].reverse());

    const byDigits = async (search: string) => (await everyPage(directory, companyId, search, 2)).flat().map((subscriber) => subscriber.phone);
    assert.deepEqual(await byDigits("+1312555"), ["+13125550100", "+13125550101", "+13125550199"]);
    assert.deepEqual(await byDigits("+1 (312) 555-01"), ["+13125550100", "+13125550101", "+13125550199"], "a phone written with spaces and punctuation");
    assert.deepEqual(await byDigits("1415"), ["+14155550100", "+14155550101"]);
    assert.deepEqual(await byDigits("+1312555010"), ["+13125550100", "+13125550101"]);
    const byEmail = (await directory.page(companyId, { search: "PERSON3@" })).items;
    assert.deepEqual(byEmail.map((subscriber) => subscriber.email), ["person3@example.com"]);
    assert.deepEqual((await directory.page(companyId, { search: "person" })).items.length, 5);
    assert.deepEqual((await directory.page(companyId, { search: "theirs" })).items, [], "another company's email finds nobody");
    assert.deepEqual((await directory.page(companyId, { search: "+13125550102" })).items, [], "another company's phone finds nobody");
    const first = pages[0]![0]!;
    assert.deepEqual((await directory.page(companyId, { search: first.id.toUpperCase() })).items.map((subscriber) => subscriber.id), [first.id]);
    const theirs = await t.kit.plugin("subscriptions").findSubscriber((other as unknown as { companyId: string }).companyId, { phone: "+13125550102" });
    assert.deepEqual((await directory.page(companyId, { search: theirs!.id })).items, [], "another company's subscriber id finds nobody");
    await t.stop();
  });

  it("counts opt-ins and opt-outs per day", async () => {
    const t = await startTestKit();
    const start = t.clock.now();
    await subscribe(t, "+13125550100");
    await subscribe(t, "+13125550101");
    t.clock.advance(DAY);
    await unsubscribe(t, { user: { phone: "+13125550100" } });
    await textFrom(t, "+13125550101", "STOP");
    await t.scheduler.flush();
    const days = [0, 1].map((n) => ({ start: start + n * DAY, end: start + (n + 1) * DAY }));
    const counts = await t.kit.plugin("subscriptions").directory.dailyChanges(t.company.companyId, days, ["opt_in", "unsubscribed"]);
    assert.deepEqual(
      counts.map((day) => day.counts),
      [
        { opt_in: 2, unsubscribed: 0 },
        { opt_in: 0, unsubscribed: 2 },
      ],
    );
    await t.stop();
  });
});
