import { inject, injectable, STORAGE, type DataSubject, type Storage } from "../../src/index.ts";
import { PROFILES_SERVICE, type Identifier, type ProfilesService } from "../profiles/index.ts";
import type { BackInStock, RequestOutcome } from "./back-in-stock.ts";
import type { JourneyDefinition, TriggerType } from "./definition.ts";
import type { CreateJourneyRequest, JourneyDefinitions, UpdateJourneyRequest } from "./journey-definitions.ts";
import type { JourneyLog, JourneyStats } from "./journey-log.ts";
import type { JourneyTriggers } from "./journey-triggers.ts";
import type { JourneyEngine } from "./journey-engine.ts";
import type { EnrollmentRecord, JourneyRecord } from "./records.ts";
import { JOURNEY_TEMPLATES } from "./templates.ts";
import { BACK_IN_STOCK, JOURNEY_DEFINITIONS, JOURNEY_ENGINE, JOURNEY_LOG_SERVICE, JOURNEY_TRIGGERS } from "./tokens.ts";

/** The most of a person's journey entries `journeysOf` reads (a person enters a journey once per product and window). */
const PERSON_ENROLLMENTS = 100;

/**
 * Journeys in process (`kit.plugin("journeys")`): what `/v1/journeys` and
 * `reachkit journeys` do. Every method is scoped by the company id it is given;
 * another company's journey is not found.
 */
@injectable()
export class JourneysService {
  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(PROFILES_SERVICE) private readonly profiles: ProfilesService,
    @inject(JOURNEY_DEFINITIONS) private readonly definitions: JourneyDefinitions,
    @inject(JOURNEY_LOG_SERVICE) private readonly log: JourneyLog,
    @inject(BACK_IN_STOCK) private readonly backInStock: BackInStock,
    @inject(JOURNEY_TRIGGERS) private readonly triggers: JourneyTriggers,
    @inject(JOURNEY_ENGINE) private readonly engine: JourneyEngine,
  ) {}

  /** The ready journeys, by name (each is also its trigger). */
  templates(): Readonly<Record<TriggerType, JourneyDefinition>> {
    return JOURNEY_TEMPLATES;
  }

  /** Validates like the route (an invalid request throws its 400 naming the fields). */
  create(companyId: string, request: CreateJourneyRequest): Promise<JourneyRecord> {
    return this.definitions.create(companyId, request);
  }

  list(companyId: string): Promise<JourneyRecord[]> {
    return this.definitions.list(companyId);
  }

  get(companyId: string, id: string): Promise<JourneyRecord | undefined> {
    return this.definitions.get(companyId, id);
  }

  update(companyId: string, id: string, request: UpdateJourneyRequest): Promise<JourneyRecord | undefined> {
    return this.definitions.update(companyId, id, request);
  }

  /** Paused, a journey takes nobody in, and its waiting people leave it when their next step comes. */
  pause(companyId: string, id: string): Promise<JourneyRecord | undefined> {
    return this.definitions.setStatus(companyId, id, "paused");
  }

  resume(companyId: string, id: string): Promise<JourneyRecord | undefined> {
    return this.definitions.setStatus(companyId, id, "active");
  }

  /** Deleted, a journey's waiting people leave it when their next step comes; its stats stay readable by no one. */
  delete(companyId: string, id: string): Promise<boolean> {
    return this.definitions.delete(companyId, id);
  }

  async stats(companyId: string, id: string): Promise<JourneyStats | undefined> {
    return (await this.definitions.get(companyId, id)) ? this.log.stats(id) : undefined;
  }

  /**
   * The journeys a person (known by any of these identifiers) is or was in,
   * latest entry first, each with its journey; entries of deleted journeys are left out.
   */
  async journeysOf(companyId: string, person: readonly Identifier[]): Promise<Array<{ journey: JourneyRecord; enrollment: EnrollmentRecord }>> {
    const profileIds = new Set<string>();
    for (const identifier of person) {
      const profileId = await this.profiles.find(companyId, identifier);
      if (profileId !== undefined) profileIds.add(profileId);
    }
    const entries = [];
    for (const profileId of profileIds) {
      for (const enrollment of await this.engine.enrollmentsOf(companyId, profileId, PERSON_ENROLLMENTS)) {
        const journey = await this.definitions.get(companyId, enrollment.journeyId);
        if (journey) entries.push({ journey, enrollment });
      }
    }
    return entries.sort((a, b) => b.enrollment.enteredAt - a.enrollment.enteredAt).slice(0, PERSON_ENROLLMENTS);
  }

  /** A back-in-stock request made in process (as the `back_in_stock_request` custom event makes it). */
  async requestBackInStock(companyId: string, person: Identifier, variantId: string): Promise<RequestOutcome> {
    return this.storage.transaction(async () => this.backInStock.request(companyId, await this.profiles.link(companyId, [person]), variantId));
  }

  /** Removes a subject from every journey (privacy deletion), whichever plugin's hook runs first. */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const profileIds = await this.profiles.subjectProfiles(subject);
    return profileIds.length === 0 ? 0 : this.triggers.forget(subject.companyId, profileIds);
  }
}
