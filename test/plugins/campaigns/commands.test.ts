import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { cli, dataDirWithCompany } from "../../support/cli.ts";

describe("segments and campaigns CLI commands", () => {
  let dataDir = "";
  let companyId = "";

  before(async () => ({ dataDir, companyId } = await dataDirWithCompany()));

  it("creates and previews a segment, creates a campaign to it, estimates, schedules, cancels and reads its results", async () => {
    const segmentFile = join(dataDir, "segment.json");
    writeFileSync(segmentFile, JSON.stringify({ name: "Gold", rule: { attribute: { name: "tier", op: "eq", value: "gold" } } }));
    const segment = await cli(dataDir, "segments", "create", "--company", companyId, "--file", segmentFile, "--json");
    assert.equal(segment.code, 0, segment.stderr);
    assert.match((await cli(dataDir, "segments", "list", "--company", companyId)).stdout, new RegExp(`${segment.json.id}\\s+Gold`));
    assert.match((await cli(dataDir, "segments", "preview", segment.json.id, "--company", companyId)).stdout, /size:\s+0\n/);
    const campaignFile = join(dataDir, "campaign.json");
    writeFileSync(campaignFile, JSON.stringify({ name: "Sale", segmentId: segment.json.id, channel: "sms", text: "20% off: {link}", link: "https://shop.example.com/sale" }));
    const campaign = await cli(dataDir, "campaigns", "create", "--company", companyId, "--file", campaignFile, "--json");
    assert.equal(campaign.code, 0, campaign.stderr);
    const id: string = campaign.json.id;
    assert.match((await cli(dataDir, "campaigns", "estimate", id, "--company", companyId)).stdout, /audience:\s+0\n/);
    const scheduled = await cli(dataDir, "campaigns", "send", id, "--company", companyId, "--local-time", "2030-01-01T10:00", "--json");
    assert.equal(scheduled.code, 2, "more than 365 days ahead");
    assert.match(scheduled.stderr, /sendAtLocal/);
    const later = new Date(Date.now() + 86_400_000).toISOString();
    assert.equal((await cli(dataDir, "campaigns", "send", id, "--company", companyId, "--at", later, "--json")).json.status, "scheduled");
    assert.match((await cli(dataDir, "campaigns", "list", "--company", companyId)).stdout, new RegExp(`${id}\\s+Sale\\s+sms\\s+scheduled`));
    assert.equal((await cli(dataDir, "campaigns", "cancel", id, "--company", companyId, "--json")).json.status, "cancelled");
    assert.match((await cli(dataDir, "campaigns", "results", id, "--company", companyId)).stdout, /status: cancelled/);
    assert.match((await cli(dataDir, "campaigns", "link-domain", "--company", companyId, "--domain", "https://go.acme.example")).stdout, /https:\/\/go\.acme\.example\/l\/<code>/);
    const gone = await cli(dataDir, "campaigns", "show", "nope", "--company", companyId);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, /no campaign nope/);
  });
});
