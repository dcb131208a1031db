import { DateTime } from "luxon";
import * as v from "valibot";
import { CLOCK, conflict, inject, injectable, invalidFields, parseOrThrow, placeholdersOf, plainObject, sortableId, STORAGE, type Clock, type Collection, type ErrorDetail, type Page, type Storage } from "../../src/index.ts";
import { CAMPAIGNS, type CampaignChannel, type CampaignRecord, type CampaignVariant } from "./records.ts";

export const CAMPAIGN_CHANNELS = ["sms", "mms", "email"] as const;
export const CAMPAIGN_MACROS = ["firstName", "lastName", "companyName", "link"] as const;
export const MAX_CAMPAIGNS_PER_COMPANY = 1000;
export const MAX_VARIANTS = 5;
export const MAX_CAMPAIGN_TEXT = 1600;
export const MAX_EMAIL_TEXT = 10_000;
/** How far ahead a campaign may be scheduled. */
export const MAX_SCHEDULE_AHEAD_DAYS = 365;

const text = (max: number) => v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(max, `must be at most ${max} characters`));
const url = v.pipe(v.string("must be a string"), v.maxLength(2048, "must be at most 2048 characters"), v.check(isHttpUrl, "must be an http or https URL"));

const variantSchema = plainObject({
  name: v.optional(text(50)),
  text: text(MAX_EMAIL_TEXT),
  subject: v.optional(text(200)),
  mediaUrl: v.optional(url),
  weight: v.optional(v.pipe(v.number("must be a number"), v.integer("must be a whole number"), v.minValue(1, "must be from 1 to 100"), v.maxValue(100, "must be from 1 to 100")), 1),
});

const fields = {
  name: text(200),
  segmentId: text(100),
  channel: v.picklist(CAMPAIGN_CHANNELS, `must be one of ${CAMPAIGN_CHANNELS.join(", ")}`),
  text: v.optional(text(MAX_EMAIL_TEXT)),
  subject: v.optional(text(200)),
  mediaUrl: v.optional(url),
  link: v.optional(url),
  variants: v.optional(v.pipe(v.array(variantSchema, "must be a list"), v.minLength(2, "an A/B split needs 2 or more variants"), v.maxLength(MAX_VARIANTS, `must have at most ${MAX_VARIANTS} variants`))),
};

export const createCampaignSchema = plainObject(fields);
export const updateCampaignSchema = plainObject({ ...fields, name: v.optional(fields.name), segmentId: v.optional(fields.segmentId), channel: v.optional(fields.channel) });
export const sendCampaignSchema = plainObject({
  sendAt: v.optional(v.pipe(v.string("must be an ISO 8601 instant"), v.check((value) => DateTime.fromISO(value, { setZone: true }).isValid && /(Z|[+-]\d\d:?\d\d)$/.test(value), "must be an ISO 8601 instant with its offset, such as 2026-03-05T15:00:00Z"))),
  sendAtLocal: v.optional(v.pipe(v.string("must be a local date and time"), v.regex(/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/, "must be a local date and time without offset, such as 2026-03-05T10:00"), v.check((value) => DateTime.fromISO(value, { zone: "UTC" }).isValid, "must be a real date and time"))),
});

export type CreateCampaignRequest = v.InferInput<typeof createCampaignSchema>;
export type UpdateCampaignRequest = v.InferInput<typeof updateCampaignSchema>;
export type SendCampaignRequest = v.InferInput<typeof sendCampaignSchema>;

export type CampaignView = Omit<CampaignRecord, "companyId" | "audienceCursor">;
export const campaignView = ({ companyId: _companyId, audienceCursor: _cursor, ...campaign }: CampaignRecord): CampaignView => campaign;

/** When a send asks to start: an instant, or a wall-clock time in each person's zone. */
export type SendTime = { sendAt: number } | { sendAtLocal: string };

/**
 * Each company's campaigns: their definition (validated as a whole, 400
 * naming each field), and the moves of their status. The send itself is the
 * CampaignSender's.
 */
@injectable()
export class Campaigns {
  private readonly campaigns: Collection<CampaignRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.campaigns = storage.collection(CAMPAIGNS);
  }

  async create(companyId: string, request: CreateCampaignRequest, segmentExists: (id: string) => Promise<boolean>): Promise<CampaignRecord> {
    const body = parseOrThrow(createCampaignSchema, request, "body");
    const definition = checkDefinition(body);
    if (!(await segmentExists(definition.segmentId))) throw invalidFields([{ path: "segmentId", message: "names no segment of the company" }]);
    if ((await this.campaigns.count({ companyId })) >= MAX_CAMPAIGNS_PER_COMPANY) throw conflict(`a company has at most ${MAX_CAMPAIGNS_PER_COMPANY} campaigns; delete one first`);
    const now = this.clock.now();
    return this.campaigns.insert({ id: sortableId(now), companyId, ...definition, status: "draft", createdAt: now, updatedAt: now });
  }

  /** Changes a draft (409 once scheduled: cancel it first); the result is validated as a whole. */
  async update(companyId: string, id: string, request: UpdateCampaignRequest, segmentExists: (id: string) => Promise<boolean>): Promise<CampaignRecord | undefined> {
    const body = parseOrThrow(updateCampaignSchema, request, "body");
    const current = await this.get(companyId, id);
    if (!current) return undefined;
    if (current.status !== "draft") throw conflict(`the campaign is ${current.status}; only a draft changes`);
    const given = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
    const merged = { name: current.name, segmentId: current.segmentId, channel: current.channel, ...(current.link !== undefined ? { link: current.link } : {}), ...("text" in given || "variants" in given ? {} : { variants: current.variants }), ...given };
    const definition = checkDefinition(merged as v.InferOutput<typeof createCampaignSchema>);
    if (!(await segmentExists(definition.segmentId))) throw invalidFields([{ path: "segmentId", message: "names no segment of the company" }]);
    // Fenced: a schedule that committed since the read keeps the definition it scheduled.
    const updated = await this.campaigns.update(id, { ...definition, link: definition.link, updatedAt: this.clock.now() }, { where: { status: "draft" } });
    if (!updated) throw conflict(`the campaign is ${(await this.campaigns.get(id))?.status ?? "deleted"}; only a draft changes`);
    return updated;
  }

  async get(companyId: string, id: string): Promise<CampaignRecord | undefined> {
    const campaign = await this.campaigns.get(id);
    return campaign?.companyId === companyId ? campaign : undefined;
  }

  async list(companyId: string): Promise<CampaignRecord[]> {
    return (await this.campaigns.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] })).items;
  }

  /** A page of the company's campaigns, newest first, and the cursor of the next. */
  page(companyId: string, options: { limit: number; after?: string }): Promise<Page<CampaignRecord>> {
    return this.campaigns.find({ where: { companyId }, orderBy: [{ field: "createdAt", direction: "desc" }, { field: "id", direction: "desc" }], limit: options.limit, ...(options.after !== undefined ? { after: options.after } : {}) });
  }

  /** Deletes a draft, a sent or a cancelled campaign (409 while scheduled or sending). */
  async delete(companyId: string, id: string): Promise<boolean> {
    const campaign = await this.get(companyId, id);
    if (!campaign) return false;
    if (campaign.status === "scheduled" || campaign.status === "sending") throw conflict(`the campaign is ${campaign.status}; cancel it first`);
    // Fenced: a schedule that committed since the read is not deleted from under its jobs.
    if ((await this.campaigns.deleteWhere({ id, status: { in: ["draft", "sent", "cancelled"] } })) > 0) return true;
    const now = await this.campaigns.get(id);
    if (!now) return false;
    throw conflict(`the campaign is ${now.status}; cancel it first`);
  }

  /** Reads a send request: now, an instant, or a local time (400 naming the field). */
  sendTime(request: SendCampaignRequest): SendTime {
    const body = parseOrThrow(sendCampaignSchema, request ?? {}, "body");
    const now = this.clock.now();
    if (body.sendAt !== undefined && body.sendAtLocal !== undefined) throw invalidFields([{ path: "sendAtLocal", message: "give sendAt or sendAtLocal, not both" }]);
    const latest = now + MAX_SCHEDULE_AHEAD_DAYS * 86_400_000;
    if (body.sendAtLocal !== undefined) {
      if (DateTime.fromISO(body.sendAtLocal, { zone: "UTC" }).toMillis() > latest) throw invalidFields([{ path: "sendAtLocal", message: `must be within ${MAX_SCHEDULE_AHEAD_DAYS} days` }]);
      return { sendAtLocal: body.sendAtLocal };
    }
    const at = body.sendAt === undefined ? now : DateTime.fromISO(body.sendAt).toMillis();
    if (at > latest) throw invalidFields([{ path: "sendAt", message: `must be within ${MAX_SCHEDULE_AHEAD_DAYS} days` }]);
    return { sendAt: Math.max(at, now) };
  }
}

/** A definition's cross-field rules: text or variants, the channel's fields, known macros. */
function checkDefinition(body: v.InferOutput<typeof createCampaignSchema>): Omit<CampaignRecord, "id" | "companyId" | "status" | "createdAt" | "updatedAt"> {
  const errors: ErrorDetail[] = [];
  const channel: CampaignChannel = body.channel;
  if (body.text !== undefined && body.variants !== undefined) errors.push({ path: "variants", message: "give text or variants, not both" });
  if (body.text === undefined && body.variants === undefined) errors.push({ path: "text", message: "is required (or give variants)" });
  const variants: CampaignVariant[] =
    body.variants?.map((variant, index) => ({ name: variant.name ?? String.fromCharCode(65 + index), text: variant.text, weight: variant.weight, ...pick(variant, body) })) ??
    (body.text !== undefined ? [{ name: "A", text: body.text, weight: 1, ...pick(body, body) }] : []);
  const names = new Set<string>();
  variants.forEach((variant, index) => {
    const at = body.variants ? `variants.${index}.` : "";
    if (names.has(variant.name)) errors.push({ path: `${at}name`, message: "must differ from the other variants' names" });
    names.add(variant.name);
    if (channel !== "email" && variant.text.length > MAX_CAMPAIGN_TEXT) errors.push({ path: `${at}text`, message: `must be at most ${MAX_CAMPAIGN_TEXT} characters in a text` });
    if (channel === "email" && variant.subject === undefined) errors.push({ path: `${at}subject`, message: "is required for an email" });
    if (channel === "mms" && variant.mediaUrl === undefined) errors.push({ path: `${at}mediaUrl`, message: "is required for an MMS" });
    const unknown = placeholdersOf(`${variant.text} ${variant.subject ?? ""}`).filter((name) => !(CAMPAIGN_MACROS as readonly string[]).includes(name));
    if (unknown.length > 0) errors.push({ path: `${at}text`, message: `uses unknown macros ${unknown.map((name) => `{${name}}`).join(", ")}; known: ${CAMPAIGN_MACROS.map((name) => `{${name}}`).join(", ")}` });
    if (variant.text.includes("{link}") && body.link === undefined) errors.push({ path: "link", message: "is required when a text uses {link}" });
  });
  if (errors.length > 0) throw invalidFields(errors);
  return { name: body.name, segmentId: body.segmentId, channel, variants, ...(body.link !== undefined ? { link: body.link } : {}) };
}

/** A variant's subject and media, else the campaign's. */
function pick(own: { subject?: string; mediaUrl?: string }, campaign: { subject?: string; mediaUrl?: string }): Pick<CampaignVariant, "subject" | "mediaUrl"> {
  const subject = own.subject ?? campaign.subject;
  const mediaUrl = own.mediaUrl ?? campaign.mediaUrl;
  return { ...(subject !== undefined ? { subject } : {}), ...(mediaUrl !== undefined ? { mediaUrl } : {}) };
}

export function isHttpUrl(value: string): boolean {
  try {
    const parsed = new URL(value);
    return parsed.protocol === "http:" || parsed.protocol === "https:";
  } catch {
    return false;
  }
}
