import { readFile } from "node:fs/promises";
import { CliUsageError, companyOption, formatFields, formatTable, openCompanyKit, refusalsAsUsageErrors, requiredOption, stringOption, type CliCommand, type CliValues, type Reachkit } from "../../src/index.ts";
import type { CampaignResultsView, VariantResults } from "./campaign-results.ts";
import { campaignView } from "./campaigns.ts";
import type { CampaignRecord, SegmentRecord } from "./records.ts";
import { segmentView } from "./segments.ts";

const segmentArgument = [{ name: "segment", description: "The segment's id" }];
const campaignArgument = [{ name: "campaign", description: "The campaign's id" }];
const fileOption = { file: { type: "string", description: "The body of the matching POST route, JSON", required: true, placeholder: "FILE" } } as const;

async function jsonFile(values: CliValues): Promise<unknown> {
  const file = requiredOption(values, "file");
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new CliUsageError(`cannot read ${file} as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const segmentShown = (segment: SegmentRecord) => ({ json: segmentView(segment), text: formatFields({ id: segment.id, name: segment.name, rule: JSON.stringify(segment.rule) }) });
const campaignRow = (campaign: CampaignRecord) => ({
  id: campaign.id,
  name: campaign.name,
  channel: campaign.channel,
  status: campaign.status,
  variants: campaign.variants.map((variant) => variant.name).join(", "),
  sendAt: campaign.sendAtLocal !== undefined ? `${campaign.sendAtLocal} local` : campaign.sendAt !== undefined ? new Date(campaign.sendAt).toISOString() : "",
});
const campaignShown = (campaign: CampaignRecord) => ({ json: campaignView(campaign), text: formatFields({ ...campaignRow(campaign), segment: campaign.segmentId, texts: campaign.variants.map((variant) => `${variant.name}: ${variant.text}`) }) });

function resultsText(results: CampaignResultsView): string {
  const line = (name: string, figures: VariantResults) => ({
    variant: name,
    audience: figures.audience,
    sent: figures.sent,
    delivered: figures.delivered,
    failed: figures.failed,
    skipped: Object.values(figures.skipped).reduce((sum, count) => sum + count, 0),
    clicks: figures.clicks,
    clickers: figures.uniqueClickers,
    optOuts: figures.optOuts,
    purchases: figures.purchases,
    revenue: Object.entries(figures.revenue).map(([currency, total]) => `${total.toFixed(2)} ${currency}`).join(", ") || "0",
  });
  return `status: ${results.status}\n${formatTable([...Object.entries(results.variants).map(([name, figures]) => line(name, figures)), line("all", results)])}`;
}

/** A command on one campaign or segment, by id; an unknown id is a usage error. */
function onOne<T>(name: string, summary: string, argument: typeof campaignArgument, act: (kit: Reachkit, companyId: string, id: string) => Promise<T | undefined>, shown: (value: T) => { json: unknown; text: string }): CliCommand {
  return {
    name,
    summary,
    options: { ...companyOption },
    arguments: argument,
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const id = requiredOption(values, argument[0]!.name);
      const value = await refusalsAsUsageErrors(() => act(kit, companyId, id));
      if (value === undefined) throw new CliUsageError(`no ${argument[0]!.name} ${id} at company ${companyId}`);
      return shown(value);
    },
  };
}

export const campaignsCommands: readonly CliCommand[] = [
  {
    name: "segments create",
    summary: "Creates a segment from a JSON file ({name, rule}, the body of POST /v1/segments)",
    options: { ...companyOption, ...fileOption },
    async run(values, context) {
      const body = await jsonFile(values);
      const { kit, companyId } = await openCompanyKit(values, context);
      return segmentShown(await refusalsAsUsageErrors(() => kit.plugin("campaigns").createSegment(companyId, body as never)));
    },
  },
  {
    name: "segments list",
    summary: "A company's segments",
    options: { ...companyOption },
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const segments = await kit.plugin("campaigns").listSegments(companyId);
      return { json: segments.map(segmentView), text: formatTable(segments.map((segment) => ({ id: segment.id, name: segment.name }))) };
    },
  },
  onOne("segments show", "One segment and its rule", segmentArgument, (kit, companyId, id) => kit.plugin("campaigns").getSegment(companyId, id), segmentShown),
  onOne("segments preview", "A segment's size now and its first people", segmentArgument, (kit, companyId, id) => kit.plugin("campaigns").previewSegment(companyId, id), (preview) => ({
    json: preview,
    text: `${formatFields({ size: preview.size, scanned: preview.scanned })}\n${formatTable(preview.sample.map((person) => ({ profile: person.profileId, phone: person.phone ?? "", email: person.email ?? "" })))}`,
  })),
  onOne("segments delete", "Deletes a segment", segmentArgument, async (kit, companyId, id) => ((await kit.plugin("campaigns").deleteSegment(companyId, id)) ? id : undefined), (id) => ({ json: { deleted: id }, text: `deleted segment ${id}` })),
  {
    name: "campaigns create",
    summary: "Creates a draft campaign from a JSON file (the body of POST /v1/campaigns)",
    options: { ...companyOption, ...fileOption },
    async run(values, context) {
      const body = await jsonFile(values);
      const { kit, companyId } = await openCompanyKit(values, context);
      return campaignShown(await refusalsAsUsageErrors(() => kit.plugin("campaigns").create(companyId, body as never)));
    },
  },
  {
    name: "campaigns list",
    summary: "A company's campaigns",
    options: { ...companyOption },
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const campaigns = await kit.plugin("campaigns").list(companyId);
      return { json: campaigns.map(campaignView), text: formatTable(campaigns.map(campaignRow)) };
    },
  },
  onOne("campaigns show", "One campaign: status, variants and texts", campaignArgument, (kit, companyId, id) => kit.plugin("campaigns").get(companyId, id), campaignShown),
  {
    name: "campaigns send",
    summary: "Sends a draft campaign now, at --at (an instant), or at --local-time in each person's zone",
    options: {
      ...companyOption,
      at: { type: "string", description: "An ISO 8601 instant with its offset", placeholder: "TIME" },
      "local-time": { type: "string", description: "A local date and time (2026-03-05T10:00), in each person's time zone", placeholder: "TIME" },
    },
    arguments: campaignArgument,
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const id = requiredOption(values, "campaign");
      const at = stringOption(values, "at");
      const local = stringOption(values, "local-time");
      const campaign = await refusalsAsUsageErrors(() => kit.plugin("campaigns").send(companyId, id, { ...(at !== undefined ? { sendAt: at } : {}), ...(local !== undefined ? { sendAtLocal: local } : {}) }));
      if (!campaign) throw new CliUsageError(`no campaign ${id} at company ${companyId}`);
      return campaignShown(campaign);
    },
  },
  onOne("campaigns cancel", "Cancels a campaign: what was not sent yet is not sent", campaignArgument, (kit, companyId, id) => kit.plugin("campaigns").cancel(companyId, id), campaignShown),
  onOne("campaigns estimate", "How long a campaign takes at the sender's rate, and whether it runs into quiet hours", campaignArgument, (kit, companyId, id) => kit.plugin("campaigns").estimate(companyId, id), (estimate) => ({
    json: estimate,
    text: formatFields({ audience: estimate.audience, messagesPerSecond: estimate.messagesPerSecond ?? "not paced", seconds: estimate.seconds, startsAt: estimate.startsAt, endsAt: estimate.endsAt, warnings: estimate.warnings.join("; ") || "none" }),
  })),
  onOne("campaigns results", "Per variant: audience, sent, delivered, failed, clicks, opt-outs, purchases and revenue", campaignArgument, (kit, companyId, id) => kit.plugin("campaigns").campaignResults(companyId, id), (results) => ({ json: results, text: resultsText(results) })),
  {
    name: "campaigns link-domain",
    summary: "Shows or sets the company's own domain for its short links (--domain off: the server's short host)",
    options: { ...companyOption, domain: { type: "string", description: "An origin that reaches this server's /l/ paths, such as https://go.example.com, or off", placeholder: "URL" } },
    async run(values, context) {
      const { kit, companyId } = await openCompanyKit(values, context);
      const domain = stringOption(values, "domain");
      const links = kit.plugin("campaigns").links;
      const base = domain === undefined ? await links.base(companyId) : await refusalsAsUsageErrors(() => links.setDomain(companyId, domain === "off" ? null : domain));
      return { json: { linkDomain: base }, text: `short links: ${base}/l/<code>` };
    },
  },
];
