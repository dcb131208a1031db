import * as v from "valibot";
import { CLOCK, conflict, inject, injectable, parseOrThrow, plainObject, sortableId, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import type { PagedPerson } from "../profiles/index.ts";
import { SEGMENTS, type SegmentRecord } from "./records.ts";
import type { SegmentAudience } from "./segment-audience.ts";
import { parseSegmentRule } from "./segment-rule.ts";
import { SEGMENT_AUDIENCE } from "./tokens.ts";

export const MAX_SEGMENTS_PER_COMPANY = 200;
/** People a preview shows beside the audience's size. */
export const PREVIEW_SAMPLE = 10;

const segmentName = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters"));
export const createSegmentSchema = plainObject({ name: segmentName, rule: v.unknown() });
export const updateSegmentSchema = plainObject({ name: v.optional(segmentName), rule: v.optional(v.unknown()) });
/** The rule as the API reference shows it: and, or, not, or one condition. */
export const documentedSegmentSchema = plainObject({ name: segmentName, rule: v.record(v.string(), v.unknown()) });

export type CreateSegmentRequest = v.InferInput<typeof createSegmentSchema>;
export type UpdateSegmentRequest = v.InferInput<typeof updateSegmentSchema>;

export type SegmentView = Omit<SegmentRecord, "companyId">;
export const segmentView = ({ companyId: _companyId, ...segment }: SegmentRecord): SegmentView => segment;

/** A preview: the audience's size now and the first people of it. */
export interface SegmentPreview {
  size: number;
  /** Live profiles read to count it. */
  scanned: number;
  sample: Array<{ profileId: string; phone?: string; email?: string }>;
}

/** Each company's segments: stored rules, validated as a whole (400 naming each field), previewed on demand. */
@injectable()
export class Segments {
  private readonly segments: Collection<SegmentRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SEGMENT_AUDIENCE) private readonly audience: SegmentAudience,
  ) {
    this.segments = storage.collection(SEGMENTS);
  }

  async create(companyId: string, request: CreateSegmentRequest): Promise<SegmentRecord> {
    const body = parseOrThrow(createSegmentSchema, request, "body");
    const rule = parseSegmentRule(body.rule);
    if ((await this.segments.count({ companyId })) >= MAX_SEGMENTS_PER_COMPANY) throw conflict(`a company has at most ${MAX_SEGMENTS_PER_COMPANY} segments; delete one first`);
    const now = this.clock.now();
    return this.segments.insert({ id: sortableId(now), companyId, name: body.name, rule, createdAt: now, updatedAt: now });
  }

  async update(companyId: string, id: string, request: UpdateSegmentRequest): Promise<SegmentRecord | undefined> {
    const body = parseOrThrow(updateSegmentSchema, request, "body");
    const rule = body.rule === undefined ? undefined : parseSegmentRule(body.rule);
    if (!(await this.get(companyId, id))) return undefined;
    return this.segments.update(id, { ...(body.name !== undefined ? { name: body.name } : {}), ...(rule ? { rule } : {}), updatedAt: this.clock.now() });
  }

  async get(companyId: string, id: string): Promise<SegmentRecord | undefined> {
    const segment = await this.segments.get(id);
    return segment?.companyId === companyId ? segment : undefined;
  }

  async list(companyId: string): Promise<SegmentRecord[]> {
    return (await this.segments.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] })).items;
  }

  async delete(companyId: string, id: string): Promise<boolean> {
    return (await this.get(companyId, id)) ? this.segments.delete(id) : false;
  }

  /** The segment's size now and a sample of it (a rule is evaluated again at each send). */
  async preview(companyId: string, id: string): Promise<SegmentPreview | undefined> {
    const segment = await this.get(companyId, id);
    if (!segment) return undefined;
    const { size, scanned, sample } = await this.audience.preview(companyId, segment.rule, PREVIEW_SAMPLE);
    return { size, scanned, sample: sample.map(sampleView) };
  }
}

const sampleView = (person: PagedPerson) => ({ profileId: person.id, ...(person.phone !== undefined ? { phone: person.phone } : {}), ...(person.email !== undefined ? { email: person.email } : {}) });
