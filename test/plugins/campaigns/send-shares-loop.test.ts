import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { CAMPAIGN_SENDER } from "../../../plugins/campaigns/index.ts";
import { turnCounter } from "../../support/event-loop-turns.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";
import { startCampaignsKit, type CampaignsTestKit } from "./support.ts";

const PEOPLE = 24;
const PAGE = 3;
const phoneOf = (i: number) => `+1914844${String(1000 + i)}`;

/**
 * An embedded kit shares its host's event loop: while a campaign sends, the host's own server (and the kit's)
 * must go on answering. Each test counts turns of the event loop or pages, never time: a send that ran its
 * pages in one chain of promises answered nothing until its last page.
 */
describe("a large send shares the event loop", () => {
  let t: CampaignsTestKit;
  let segmentId: string;
  let campaignId: string;
  /** A campaign of the segment, asked to send (its audience not read yet). */
  const startSending = async () => {
    const id = (await t.ok("POST", "/v1/campaigns", { name: "Sale", segmentId, channel: "sms", text: "Sale: {link}", link: "https://shop.example.com/sale" }, 201)).id as string;
    await t.ok("POST", `/v1/campaigns/${id}/send`, {});
    return id;
  };
  beforeEach(async () => {
    t = await startCampaignsKit({ storage: sqliteStorage({ filename: join(temporaryDirectory("send-shares-loop"), "reachkit.db") }), sendPageSize: PAGE });
    for (let i = 0; i < PEOPLE; i++) await t.person(phoneOf(i), { tier: "gold" });
    segmentId = await t.segment({ attribute: { name: "tier", op: "eq", value: "gold" } });
    campaignId = await startSending();
    await t.kit.resolve(CAMPAIGN_SENDER).readAudience({ campaignId });
  });
  afterEach(() => t.stop());

  /** Runs the campaign's send jobs one after the other, as the job runner does, until none is left; calls `paged` after each. */
  async function sendAll(paged: (pages: number) => void): Promise<number> {
    const sender = t.kit.resolve(CAMPAIGN_SENDER);
    let pages = 0;
    while ((await t.kit.plugin("campaigns").get(t.company.companyId, campaignId))?.status === "sending") {
      await sender.send({ campaignId });
      paged(++pages);
    }
    return pages;
  }

  it("gives the loop back within each page: the event loop turns between a page's steps", async () => {
    const sender = t.kit.resolve(CAMPAIGN_SENDER);
    const turnsCounted = turnCounter();
    await sender.send({ campaignId });
    const turns = turnsCounted.stop();
    // Its reads, its links, its texts through the send rules, its recipients' moves: a turn between each.
    assert.ok(turns >= 3, `the event loop turned ${turns} times during one page`);
    assert.equal((await t.ok("GET", `/v1/campaigns/${campaignId}/results`)).sent, PAGE);
  });

  it("reads an audience page's profiles and writes its recipients in turns of their own", async () => {
    const another = await startSending();
    const turnsCounted = turnCounter();
    await t.kit.resolve(CAMPAIGN_SENDER).readAudience({ campaignId: another });
    const turns = turnsCounted.stop();
    assert.ok(turns >= 1, `the event loop turned ${turns} times while a page of the audience was read and stored`);
    assert.equal((await t.ok("GET", `/v1/campaigns/${another}/results`)).audience, PEOPLE);
  });

  it("reads a campaign's results from indexes, one count a turn, without reading any recipient's document", async () => {
    await sendAll(() => {});
    const readResults = () => t.kit.plugin("campaigns").campaignResults(t.company.companyId, campaignId);
    let results: Awaited<ReturnType<typeof readResults>> | undefined;
    const turnsCounted = turnCounter();
    const statements = await statementsOf(async () => (results = await readResults()));
    const turns = turnsCounted.stop();
    assert.equal(results?.sent, PEOPLE);
    const recipientReads = statements.filter((sql) => sql.includes('"campaigns_recipients"'));
    assert.equal(recipientReads.length, 12, recipientReads.join("\n"));
    // Neither the document nor a field parsed out of it: each count is a range of an index.
    for (const sql of recipientReads) assert.doesNotMatch(sql, /\bdoc\b|json_extract/, sql);
    assert.ok(turns >= recipientReads.length, `the event loop turned ${turns} times during ${recipientReads.length} counts`);
  });

  it("answers the host's HTTP request made during the send before the send's last page", async () => {
    const host = createServer((_request, response) => response.end("ok"));
    await new Promise<void>((resolve) => host.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = host.address() as AddressInfo;
      let pagesDone = 0;
      let pagesDoneWhenAnswered: number | undefined;
      const answered = fetch(`http://127.0.0.1:${port}/`).then(async (response) => {
        assert.equal(await response.text(), "ok");
        pagesDoneWhenAnswered = pagesDone;
      });
      const pages = await sendAll((done) => (pagesDone = done));
      await answered;
      assert.equal(pages, PEOPLE / PAGE);
      assert.ok(pagesDoneWhenAnswered! < pages, `answered after ${pagesDoneWhenAnswered} of ${pages} pages`);
      const results = await t.ok("GET", `/v1/campaigns/${campaignId}/results`);
      assert.equal(results.sent, PEOPLE);
      assert.equal(results.status, "sent");
    } finally {
      await new Promise((resolve) => host.close(resolve));
    }
  });
});
