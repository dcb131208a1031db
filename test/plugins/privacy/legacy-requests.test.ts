import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { postToHosts } from "../legacy/support.ts";
import { EMAIL, fetchRequest, PHONE, seedSubject, startPrivacyKit, subjectData, TIMESTAMP } from "./support.ts";

describe("POST /privacy/delete-request on the tactical host (legacy)", () => {
  it("answers 202 in the legacy form: integer id and affiliateUserId, the phone under subjectphone", async () => {
    const t = await startPrivacyKit();
    const post = (body: unknown, token: string | null = t.company.legacyToken) => t.request({ method: "POST", url: "/privacy/delete-request", body, token });
    const first = await post({ subjectPhone: "+1 914 844 0001", requestMsg: "asked by phone" });
    assert.equal(first.status, 202);
    const body = t.json(first);
    assert.deepEqual(body, {
      id: 1,
      affiliateUserId: body.affiliateUserId,
      processed: false,
      type: "DELETE",
      subjectphone: PHONE,
      requestMsg: "asked by phone",
      requestDateTime: "2026-03-01T12:00:00.000+0000",
    });
    assert.ok(Number.isInteger(body.affiliateUserId));
    assert.match(body.requestDateTime, TIMESTAMP);

    const second = t.json(await post({ subjectEmail: EMAIL }));
    assert.deepEqual([second.id, second.affiliateUserId, second.subjectEmail], [2, body.affiliateUserId, EMAIL]);
    const other = await t.kit.provisionCompany({ name: "Other" });
    const theirs = t.json(await post({ subjectEmail: EMAIL }, other.output.legacyToken as string));
    assert.equal(theirs.id, 1, "numbered per company: nothing tells of another company's requests");
    assert.notEqual(theirs.affiliateUserId, body.affiliateUserId, "one affiliate id per company");
    await t.scheduler.flush();
    assert.equal(t.json(await fetchRequest(t, "1")).processed, true, "the v1 fetch takes the integer id; processed at once");
    await t.stop();
  });

  it("processes like the v1 request: the subject's data at the company is gone", async () => {
    const t = await startPrivacyKit();
    await seedSubject(t, t.company.legacyToken);
    const response = await t.request({ method: "POST", url: "/privacy/delete-request", body: { subjectPhone: PHONE }, token: t.company.legacyToken });
    assert.equal(response.status, 202);
    await t.scheduler.flush();
    assert.deepEqual(await subjectData(t, t.company.companyId), { subscriber: false, subscriptions: 0, changes: 0, signUps: 0, messages: 0 });
    await t.stop();
  });

  it("answers 400 for improperly formatted requests and 401 for a token that is not the company's legacy token", async () => {
    const t = await startPrivacyKit();
    const post = (body: unknown, token: string | null = t.company.legacyToken) => t.request({ method: "POST", url: "/privacy/delete-request", body, token });
    for (const body of [{}, { requestMsg: "nobody" }, { subjectPhone: "12" }, { subjectEmail: "@" }, { subjectPhone: true }, [EMAIL]]) {
      assert.equal((await post(body)).status, 400, JSON.stringify(body));
    }
    for (const token of [t.company.apiKey, "not-a-token", null]) assert.equal((await post({ subjectEmail: EMAIL }, token)).status, 401);
    assert.deepEqual(await t.kit.plugin("privacy").list(t.company.companyId), []);
    await t.stop();
  });

  it("belongs to the tactical host group", async () => {
    const t = await startPrivacyKit();
    const request = (groups: Array<"api" | "tactical">) => postToHosts(t, groups, "/privacy/delete-request", { subjectEmail: EMAIL }, t.company.legacyToken);
    assert.equal((await request(["api"])).status, 404);
    assert.equal((await request(["tactical"])).status, 202);
    await t.stop();
  });
});
