import * as v from "valibot";
import { notFound, type AnyRoute } from "../../src/index.ts";
import {
  CAMPAIGN_CHANNELS,
  EXAMPLE_CAMPAIGN_ID,
  EXAMPLE_SEGMENT_ID,
  type CampaignRecord,
  type CampaignResultsView,
  type CampaignsService,
  type SegmentRecord,
  type VariantResults,
} from "../campaigns/index.ts";
import { actionRoute, pageRoute, queryText, type ConsoleDeps, type Form } from "./console-routes.ts";
import { actionDocs, pageDocs } from "./docs.ts";
import { byReason, money, pager, status, sumOf, table, when } from "./format.ts";
import { html, type SafeHtml } from "./html.ts";
import { actionForm, type Viewer } from "./layout.ts";
import { personLink } from "./subscribers.ts";

const CAMPAIGN_PARAM = { campaignId: "The campaign's id" };
const PAGE_SIZE = 50;

const NOTICES: Readonly<Record<string, string>> = {
  created: "The campaign is created as a draft: send it now or at a time below.",
  sent: "The campaign is scheduled: it reads its segment and sends when its time comes.",
  cancelled: "The campaign is cancelled: what was not sent yet is not sent.",
};

/** A form's text field, trimmed; undefined when empty (the API's "not given"). */
const given = (form: Form, name: string) => (form[name]?.trim() ? form[name]!.trim() : undefined);

/** Campaigns (list, results per variant, an owner's create, send and cancel) and segments with their preview. */
export function campaignRoutes(deps: ConsoleDeps, campaigns: CampaignsService): AnyRoute[] {
  const ownCampaign = async (viewer: Viewer, campaignId: string | undefined): Promise<CampaignRecord> => {
    const campaign = await campaigns.get(viewer.company.id, campaignId ?? "");
    if (!campaign) throw notFound();
    return campaign;
  };
  const back = (viewer: Viewer, campaign: CampaignRecord, done: string) => ({ redirect: `${viewer.base}/campaigns/${encodeURIComponent(campaign.id)}?done=${done}` });
  /** An owner's send or cancel of a campaign, back to its page. */
  const change = (
    action: "send" | "cancel",
    spec: { operationId: string; summary: string; description: string; fields: v.ObjectEntries; body: Record<string, string>; done: string; act(companyId: string, id: string, form: Form): Promise<unknown> },
  ) =>
    actionRoute(deps, {
      path: `/campaigns/:campaignId/${action}`,
      section: "campaigns",
      role: "owner",
      summary: spec.summary,
      docs: actionDocs({
        operationId: spec.operationId,
        description: spec.description,
        params: CAMPAIGN_PARAM,
        exampleParams: { campaignId: EXAMPLE_CAMPAIGN_ID },
        after: ["createSegment", "createCampaign", "showConsoleCampaign"],
        fields: v.object({ csrf_token: v.string(), ...spec.fields }),
        body: spec.body,
        success: { status: 303, location: `/console/campaigns/${EXAMPLE_CAMPAIGN_ID}?done=${spec.done}`, description: "Done: back to the campaign" },
      }),
      async run(viewer, form, context) {
        const campaign = await ownCampaign(viewer, context.params.campaignId);
        await spec.act(viewer.company.id, campaign.id, form);
        return back(viewer, campaign, spec.done);
      },
    });
  return [
    pageRoute(deps, {
      path: "/campaigns",
      section: "campaigns",
      summary: "Show the console's campaigns",
      docs: pageDocs({
        operationId: "showConsoleCampaigns",
        description: "The company's campaigns, newest first, 50 a page: channel, status, when they send or sent, and their segment. An owner creates a draft here.",
        query: v.object({ after: v.optional(v.pipe(v.string(), v.description("The cursor of the next page"))) }),
        example: { after: ["createSegment", "createCampaign"] },
      }),
      async render(viewer, context) {
        const after = queryText(context, "after");
        const [page, segments] = await Promise.all([campaigns.page(viewer.company.id, { limit: PAGE_SIZE, after }), campaigns.listSegments(viewer.company.id)]);
        const segmentName = new Map(segments.map((segment) => [segment.id, segment.name]));
        const rows = page.items.map(
          (campaign) => html`<tr><td><a href="${viewer.base}/campaigns/${campaign.id}">${campaign.name}</a></td><td>${campaign.channel}</td><td>${status(campaign.status)}</td><td>${schedule(campaign)}</td>
<td>${segmentName.has(campaign.segmentId) ? html`<a href="${viewer.base}/segments/${campaign.segmentId}">${segmentName.get(campaign.segmentId)}</a>` : html`<span class="muted">deleted segment</span>`}</td><td class="num">${campaign.variants.length}</td><td>${when(campaign.createdAt)}</td></tr>`,
        );
        const path = `${viewer.base}/campaigns`;
        return {
          title: "Campaigns",
          section: "campaigns",
          body: html`<h1>Campaigns</h1>
<p><a href="${viewer.base}/segments">Segments</a>: the audiences campaigns send to, with their size now.</p>
${table("Campaigns", ["Campaign", "Channel", "Status", "Sends", "Segment (audience)", "Variants", "Created"], rows, "No campaigns yet.")}
${pager(path, { after }, page.nextCursor)}
${viewer.user.role === "owner" ? createForm(viewer, segments) : ""}`,
        };
      },
    }),
    actionRoute(deps, {
      path: "/campaigns",
      section: "campaigns",
      role: "owner",
      summary: "Create a campaign from the console",
      docs: actionDocs({
        operationId: "createConsoleCampaign",
        description: "Creates a draft campaign with one text, as POST /v1/campaigns does, with the same checks (a segment of the company, the channel's fields, known macros); a refusal names the field.",
        after: ["createSegment", "showConsoleCampaigns"],
        fields: v.object({ csrf_token: v.string(), name: v.string(), segmentId: v.string(), channel: v.picklist(CAMPAIGN_CHANNELS), text: v.string(), subject: v.optional(v.string()), mediaUrl: v.optional(v.string()), link: v.optional(v.string()) }),
        body: { name: "Spring sale", segmentId: EXAMPLE_SEGMENT_ID, channel: "sms", text: "Spring sale at {companyName}: 20% off today. {link}", link: "https://shop.example.com/sale" },
        success: { status: 303, location: `/console/campaigns/${EXAMPLE_CAMPAIGN_ID}?done=created`, description: "Created: to the campaign's page" },
      }),
      async run(viewer, form) {
        const request = { name: form.name ?? "", segmentId: form.segmentId ?? "", channel: form.channel as CampaignRecord["channel"], text: form.text ?? "", subject: given(form, "subject"), mediaUrl: given(form, "mediaUrl"), link: given(form, "link") };
        return back(viewer, await campaigns.create(viewer.company.id, request), "created");
      },
    }),
    pageRoute(deps, {
      path: "/campaigns/:campaignId",
      section: "campaigns",
      summary: "Show a campaign and its results in the console",
      docs: pageDocs({
        operationId: "showConsoleCampaign",
        description:
          "One campaign: its segment, schedule and variants, and its results per A/B variant and in total (as GET /v1/campaigns/{id}/results): audience, sent, still to send, skipped by reason, delivered and failed, clicks and unique clickers, opt-outs within 24 hours, purchases within 7 days of a click and their revenue.",
        params: CAMPAIGN_PARAM,
        example: { params: { campaignId: EXAMPLE_CAMPAIGN_ID }, after: ["createSegment", "createCampaign"] },
      }),
      async render(viewer, context) {
        const campaign = await ownCampaign(viewer, context.params.campaignId);
        const [results, segment] = await Promise.all([campaigns.campaignResults(viewer.company.id, campaign.id), campaigns.getSegment(viewer.company.id, campaign.segmentId)]);
        const done = queryText(context, "done");
        return { title: campaign.name, section: "campaigns", notice: done ? NOTICES[done] : undefined, body: campaignBody(viewer, campaign, segment, results!) };
      },
    }),
    change("send", {
      operationId: "sendConsoleCampaign",
      summary: "Send or schedule a campaign from the console",
      description: "Sends a draft now (sendAt empty) or at `sendAt`, an instant with its offset, as POST /v1/campaigns/{id}/send does (400 naming sendAt, 409 unless a draft).",
      fields: { sendAt: v.optional(v.string()) },
      body: { sendAt: "2026-03-05T16:00:00Z" },
      done: "sent",
      act: (companyId, id, form) => {
        const sendAt = given(form, "sendAt");
        return campaigns.send(companyId, id, sendAt ? { sendAt } : {});
      },
    }),
    change("cancel", {
      operationId: "cancelConsoleCampaign",
      summary: "Cancel a campaign from the console",
      description: "Cancels a draft, scheduled or sending campaign, as POST /v1/campaigns/{id}/cancel does: what was not sent yet is not sent (409 once sent).",
      fields: {},
      body: {},
      done: "cancelled",
      act: (companyId, id) => campaigns.cancel(companyId, id),
    }),
    pageRoute(deps, {
      path: "/segments",
      section: "campaigns",
      summary: "Show the console's segments",
      docs: pageDocs({
        operationId: "showConsoleSegments",
        description: "The company's segments (at most 200), oldest first, with their rules; each links to its preview.",
        example: { after: ["createSegment"] },
      }),
      async render(viewer) {
        const segments = await campaigns.listSegments(viewer.company.id);
        const rows = segments.map(
          (segment) => html`<tr><td><a href="${viewer.base}/segments/${segment.id}">${segment.name}</a></td><td class="wrap"><code>${JSON.stringify(segment.rule)}</code></td><td>${when(segment.updatedAt)}</td></tr>`,
        );
        return {
          title: "Segments",
          section: "campaigns",
          body: html`<h1>Segments</h1>
${table("Segments", ["Segment", "Rule", "Changed"], rows, "No segments: create one with POST /v1/segments or reachkit segments create.")}
<p class="muted">A segment's size is counted when its page is opened (it reads every profile of the company), and again when a campaign sends.</p>
<p><a href="${viewer.base}/campaigns">All campaigns</a></p>`,
        };
      },
    }),
    pageRoute(deps, {
      path: "/segments/:segmentId",
      section: "campaigns",
      summary: "Show a segment and its preview in the console",
      docs: pageDocs({
        operationId: "showConsoleSegment",
        description: "One segment: its rule, the number of people it matches now and the first of them (as GET /v1/segments/{id}/preview).",
        params: { segmentId: "The segment's id" },
        example: { params: { segmentId: EXAMPLE_SEGMENT_ID }, after: ["createSegment"] },
      }),
      async render(viewer, context) {
        const segmentId = context.params.segmentId ?? "";
        const [segment, preview] = await Promise.all([campaigns.getSegment(viewer.company.id, segmentId), campaigns.previewSegment(viewer.company.id, segmentId)]);
        if (!segment || !preview) throw notFound();
        const sample = preview.sample.map((person) => {
          const address = person.phone ?? person.email;
          return html`<tr><td>${address ? html`<a href="${personLink(viewer.base, person)}">${address}</a>` : ""}</td><td><code>${person.profileId}</code></td></tr>`;
        });
        return {
          title: segment.name,
          section: "campaigns",
          body: html`<h1>${segment.name}</h1>
<div class="grid"><section class="card"><h2>People now</h2><p class="figure">${preview.size}</p><p class="muted">of ${preview.scanned} profiles read</p></section></div>
<h2>Rule</h2>
<pre class="card"><code>${JSON.stringify(segment.rule, null, 2)}</code></pre>
<h2>The first of them</h2>
${table("The first of them", ["Phone or email", "Profile"], sample, "Nobody matches now.")}
<p><a href="${viewer.base}/segments">All segments</a></p>`,
        };
      },
    }),
  ];
}

function schedule(campaign: CampaignRecord): string {
  if (campaign.finishedAt !== undefined) return `sent ${when(campaign.finishedAt)}`;
  if (campaign.cancelledAt !== undefined) return `cancelled ${when(campaign.cancelledAt)}`;
  if (campaign.sendAtLocal !== undefined) return `${campaign.sendAtLocal.replace("T", " ")} in each person's zone`;
  if (campaign.sendAt !== undefined) return when(campaign.sendAt);
  return campaign.status === "draft" ? "not scheduled" : "";
}

function createForm(viewer: Viewer, segments: readonly SegmentRecord[]): SafeHtml {
  const field = (id: string, label: string, input: SafeHtml) => html`<div><label for="${id}">${label}</label>${input}</div>`;
  return html`<h2>New campaign</h2>
${actionForm(
  viewer,
  "/campaigns",
  html`${field("campaign-name", "Name", html`<input type="text" id="campaign-name" name="name" required maxlength="200">`)}
${field("campaign-segment", "Segment", html`<select id="campaign-segment" name="segmentId">${segments.map((segment) => html`<option value="${segment.id}">${segment.name}</option>`)}</select>`)}
${field("campaign-channel", "Channel", html`<select id="campaign-channel" name="channel">${CAMPAIGN_CHANNELS.map((channel) => html`<option>${channel}</option>`)}</select>`)}
${field("campaign-text", "Text ({firstName}, {lastName}, {companyName}, {link})", html`<textarea id="campaign-text" name="text" rows="3" required></textarea>`)}
${field("campaign-subject", "Subject (email)", html`<input type="text" id="campaign-subject" name="subject" maxlength="200">`)}
${field("campaign-media", "Media URL (MMS)", html`<input type="text" id="campaign-media" name="mediaUrl">`)}
${field("campaign-link", "Link ({link} shortens it for each person)", html`<input type="text" id="campaign-link" name="link" placeholder="https://shop.example/sale">`)}
<div><button type="submit">Create a draft</button></div>`,
  { class: "stack card", label: "New campaign" },
)}`;
}

/** The results' measures, one a row, so that the variants (at most five) and the total are the columns: it fits a phone. */
const MEASURES: ReadonlyArray<[string, (results: VariantResults) => number | string]> = [
  ["Audience", (results) => results.audience],
  ["Sent", (results) => results.sent],
  ["To send", (results) => results.pending],
  ["Skipped", (results) => sumOf(results.skipped)],
  ["Delivered", (results) => results.delivered],
  ["Failed", (results) => results.failed],
  ["Clicks", (results) => results.clicks],
  ["Unique clickers", (results) => results.uniqueClickers],
  ["Opt-outs (24 h)", (results) => results.optOuts],
  ["Purchases (7 days)", (results) => results.purchases],
  ["Revenue", (results) => money(results.revenue)],
];

function resultsTable(results: CampaignResultsView): SafeHtml {
  const columns: Array<[string, VariantResults]> = [...Object.entries(results.variants), ["All", results]];
  const rows = MEASURES.map(([label, figure]) => html`<tr><th scope="row">${label}</th>${columns.map(([, variant]) => html`<td class="num">${figure(variant)}</td>`)}</tr>`);
  return table("Results", ["", ...columns.map(([name]) => (name === "All" ? "All variants" : `Variant ${name}`))], rows, "No results.");
}

function campaignBody(viewer: Viewer, campaign: CampaignRecord, segment: SegmentRecord | undefined, results: CampaignResultsView): SafeHtml {
  const owner = viewer.user.role === "owner";
  const live = campaign.status === "draft" || campaign.status === "scheduled" || campaign.status === "sending";
  const sendForm =
    owner && campaign.status === "draft"
      ? actionForm(
          viewer,
          `/campaigns/${campaign.id}/send`,
          html`<div><label for="sendAt">Send at (an instant such as 2026-03-05T15:00:00Z; empty: now)</label><input type="text" id="sendAt" name="sendAt"></div><div><button type="submit">Send the campaign</button></div>`,
          { class: "filters", label: "Send the campaign" },
        )
      : "";
  const cancelForm = owner && live ? actionForm(viewer, `/campaigns/${campaign.id}/cancel`, html`<button type="submit" class="danger">Cancel the campaign</button>`, { class: "inline" }) : "";
  const variants = campaign.variants.map(
    (variant) => html`<tr><td>${variant.name}</td><td class="num">${variant.weight}</td><td class="wrap">${variant.subject !== undefined ? html`<strong>${variant.subject}</strong><br>` : ""}${variant.text}${variant.mediaUrl ? html`<br><code>${variant.mediaUrl}</code>` : ""}</td></tr>`,
  );
  return html`<h1>${campaign.name}</h1>
<section class="card"><dl class="fields">
<dt>Status</dt><dd>${status(campaign.status)}</dd>
<dt>Channel</dt><dd>${campaign.channel}</dd>
<dt>Segment</dt><dd>${segment ? html`<a href="${viewer.base}/segments/${segment.id}">${segment.name}</a>` : "deleted"}</dd>
<dt>Sends</dt><dd>${schedule(campaign)}</dd>
${campaign.link ? html`<dt>Link</dt><dd><code>${campaign.link}</code></dd>` : ""}
${campaign.startedAt !== undefined ? html`<dt>Started</dt><dd>${when(campaign.startedAt)}</dd>` : ""}
<dt>Created</dt><dd>${when(campaign.createdAt)}</dd>
<dt>Id</dt><dd><code>${campaign.id}</code></dd>
</dl></section>
${sendForm || cancelForm ? html`<div class="card">${sendForm}${cancelForm}</div>` : ""}
<h2>Variants</h2>
${table("Variants", ["Variant", "Weight", "Text"], variants, "No variants.")}
<h2>Results</h2>
${resultsTable(results)}
<p class="muted">Delivered and failed come from the provider's receipts; an opt-out counts within 24 hours of the person's message, a purchase within 7 days of a click on its link.</p>
<h3>Skipped, by reason</h3>
${byReason("Skipped, by reason", results.skipped)}
<p><a href="${viewer.base}/campaigns">All campaigns</a></p>`;
}
