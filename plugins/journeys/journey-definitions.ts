import * as v from "valibot";
import { CLOCK, conflict, inject, injectable, invalidFields, parseOrThrow, plainObject, sortableId, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { definitionFields, definitionProblems, DEFAULT_PACING, DEFAULT_WINDOW, TRIGGERS, type JourneyDefinition, type TriggerType } from "./definition.ts";
import { JOURNEYS, type JourneyRecord, type JourneyStatus } from "./records.ts";
import { JOURNEY_TEMPLATES } from "./templates.ts";

/** Journeys one company may have. */
export const MAX_JOURNEYS_PER_COMPANY = 100;
/**
 * How long another process's change to a company's journeys may go unseen by
 * this one's triggers. Changes made through this process are seen at once.
 */
export const DEFINITIONS_CACHE_MS = 5_000;

const statusSchema = v.optional(v.picklist(["active", "paused"], "must be active or paused"));

export const createJourneySchema = plainObject({
  template: v.optional(v.picklist(TRIGGERS, `must be one of ${TRIGGERS.join(", ")}`)),
  ...definitionFields,
  status: statusSchema,
});

export const updateJourneySchema = plainObject({ ...definitionFields, status: statusSchema });

export type CreateJourneyRequest = v.InferInput<typeof createJourneySchema>;
export type UpdateJourneyRequest = v.InferInput<typeof updateJourneySchema>;

/** A journey as the API shows it. */
export type JourneyView = Omit<JourneyRecord, "companyId">;

export const journeyView = ({ companyId: _companyId, ...journey }: JourneyRecord): JourneyView => journey;

/**
 * The journeys of each company: created from a definition or a template,
 * validated as a whole (400 naming each field at fault), paused, resumed and
 * deleted. Triggers read the active ones through a short cache.
 */
@injectable()
export class JourneyDefinitions {
  private readonly journeys: Collection<JourneyRecord>;
  private readonly cache = new Map<string, { until: number; journeys: JourneyRecord[] }>();

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.journeys = storage.collection(JOURNEYS);
  }

  async create(companyId: string, request: CreateJourneyRequest): Promise<JourneyRecord> {
    const body = parseOrThrow(createJourneySchema, request, "body");
    const { template, status, ...fields } = body;
    const base: Partial<JourneyDefinition> = template ? structuredClone(JOURNEY_TEMPLATES[template]) : {};
    if (!template) {
      const missing = (["name", "trigger", "steps"] as const).filter((field) => fields[field] === undefined);
      if (missing.length > 0) throw invalidFields(missing.map((path) => ({ path, message: "is required (or give a template)" })));
    }
    const definition = complete({ ...base, ...defined(fields) } as JourneyDefinition);
    if ((await this.journeys.count({ companyId })) >= MAX_JOURNEYS_PER_COMPANY) {
      throw conflict(`a company has at most ${MAX_JOURNEYS_PER_COMPANY} journeys; delete one first`);
    }
    const now = this.clock.now();
    const record: JourneyRecord = { id: sortableId(now), companyId, ...definition, status: status ?? "active", ...(template ? { template } : {}), createdAt: now, updatedAt: now };
    await this.journeys.insert(record);
    this.cache.delete(companyId);
    return record;
  }

  /** Replaces the fields given; the result is validated as a whole. */
  async update(companyId: string, id: string, request: UpdateJourneyRequest): Promise<JourneyRecord | undefined> {
    const { status, ...fields } = parseOrThrow(updateJourneySchema, request, "body");
    const current = await this.get(companyId, id);
    if (!current) return undefined;
    const { companyId: _c, status: _s, template: _t, createdAt: _a, updatedAt: _u, id: _i, ...definition } = current;
    const next = complete({ ...definition, ...defined(fields) });
    const updated = await this.journeys.update(id, { ...next, pacing: next.pacing, ...(status ? { status } : {}), updatedAt: this.clock.now() });
    this.cache.delete(companyId);
    return updated;
  }

  async setStatus(companyId: string, id: string, status: JourneyStatus): Promise<JourneyRecord | undefined> {
    if (!(await this.get(companyId, id))) return undefined;
    const updated = await this.journeys.update(id, { status, updatedAt: this.clock.now() });
    this.cache.delete(companyId);
    return updated;
  }

  async delete(companyId: string, id: string): Promise<boolean> {
    if (!(await this.get(companyId, id))) return false;
    await this.journeys.delete(id);
    this.cache.delete(companyId);
    return true;
  }

  async get(companyId: string, id: string): Promise<JourneyRecord | undefined> {
    const journey = await this.journeys.get(id);
    return journey?.companyId === companyId ? journey : undefined;
  }

  /** Oldest first. */
  async list(companyId: string): Promise<JourneyRecord[]> {
    return (await this.journeys.find({ where: { companyId }, orderBy: [{ field: "createdAt" }], limit: MAX_JOURNEYS_PER_COMPANY })).items;
  }

  /** The company's active journeys of a trigger, as the triggers read them (cached briefly). */
  async active(companyId: string, trigger: TriggerType): Promise<JourneyRecord[]> {
    const now = this.clock.now();
    let cached = this.cache.get(companyId);
    if (!cached || cached.until <= now) {
      cached = { until: now + DEFINITIONS_CACHE_MS, journeys: (await this.list(companyId)).filter((journey) => journey.status === "active") };
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(companyId, cached);
    }
    return cached.journeys.filter((journey) => journey.trigger.type === trigger);
  }
}

/** Defaults applied, then the checks across fields; 400 naming each problem. */
function complete(definition: JourneyDefinition): JourneyDefinition {
  const full: JourneyDefinition = {
    ...definition,
    audience: definition.audience ?? {},
    exitOn: definition.exitOn ?? (definition.trigger.type === "cart_abandonment" || definition.trigger.type === "browse_abandonment" ? ["purchase"] : []),
    window: definition.window ?? DEFAULT_WINDOW,
    ...(definition.trigger.type === "back_in_stock" ? { pacing: definition.pacing ?? { ...DEFAULT_PACING } } : {}),
  };
  const problems = definitionProblems(full);
  if (problems.length > 0) throw invalidFields(problems);
  return full;
}

function defined<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
