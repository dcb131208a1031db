import {
  ACCOUNTS,
  CLOCK,
  fillTemplate,
  inject,
  injectable,
  JOBS,
  LINK_SHORTENER,
  STORAGE,
  UniqueConstraintError,
  type Accounts,
  type Clock,
  type Collection,
  type Jobs,
  type LinkShortener,
  type Storage,
} from "../../src/index.ts";
import { PROFILES_SERVICE, type PersonView, type ProfilesService } from "../profiles/index.ts";
import { SEND_RULES, type SendRules } from "../send-rules/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import { durationMs, type JourneyStep } from "./definition.ts";
import type { JourneyDefinitions } from "./journey-definitions.ts";
import type { JourneyLog } from "./journey-log.ts";
import { ENROLLMENTS, enrollmentId, type EnrollmentRecord, type EnrollmentState, type JourneyRecord, type Subject } from "./records.ts";
import { abandonedProduct } from "./subjects.ts";
import { JOURNEY_DEFINITIONS, JOURNEY_LOG_SERVICE } from "./tokens.ts";

export const STEP_JOB = "journeys.step";
export const stepJobKey = (enrollmentId: string) => `journeys:step:${enrollmentId}`;

/** What a step job carries: the enrollment, and the step and due time it was scheduled for (an older job finds them moved on and does nothing). */
export interface StepJob {
  enrollmentId: string;
  step: number;
  dueAt: number;
}

/**
 * Runs people through journeys. An enrollment is entered once per person,
 * journey and product within the journey's window; each wait is a durable
 * job; each send passes the shared send rules and goes to the outbox with an
 * idempotency key of the enrollment and step, in the transaction that moves
 * the enrollment on: a crash at any moment loses no step and sends nothing twice.
 */
@injectable()
export class JourneyEngine {
  private readonly enrollments: Collection<EnrollmentRecord>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(PROFILES_SERVICE) private readonly profiles: ProfilesService,
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
    @inject(SEND_RULES) private readonly sendRules: SendRules,
    @inject(JOURNEY_DEFINITIONS) private readonly definitions: JourneyDefinitions,
    @inject(JOURNEY_LOG_SERVICE) private readonly log: JourneyLog,
    @inject(LINK_SHORTENER) private readonly links: LinkShortener,
  ) {
    this.enrollments = storage.collection(ENROLLMENTS);
  }

  /**
   * Puts a person in a journey, about a product or none, unless they are in
   * it or entered it within its window. `now`: the first steps run in this
   * call (a wave of back-in-stock messages); otherwise a job runs them. Call
   * it inside a storage transaction. True when the person entered.
   */
  async enter(journey: JourneyRecord, profileId: string, subject: Subject | undefined, options: { now?: boolean } = {}): Promise<boolean> {
    const id = enrollmentId(journey.id, profileId, subject?.variantId ?? "");
    const now = this.clock.now();
    const existing = await this.enrollments.get(id);
    if (existing && (existing.state === "waiting" || now - existing.enteredAt < durationMs(journey.window)!)) return false;
    // Fenced, where transactions run side by side (PostgreSQL): of two entries at once (two events of the
    // person), the second finds the enrollment taken (it waits for the first's commit) and enters nobody.
    if (existing && !(await this.enrollments.update(id, { updatedAt: now }, { where: { updatedAt: existing.updatedAt } }))) return false;
    // A job is due when the waits the journey starts with are over, at the step after them.
    const start = options.now ? { step: 0, at: now } : leadingWaits(journey.steps, now);
    const enrollment: EnrollmentRecord = {
      id,
      companyId: journey.companyId,
      journeyId: journey.id,
      profileId,
      ...(subject ? { subject } : {}),
      state: "waiting",
      step: start.step,
      ...(options.now ? {} : { jobAt: start.at }),
      enteredAt: now,
      updatedAt: now,
    };
    if (existing) await this.enrollments.upsert(enrollment);
    else if (!(await this.#insertNew(enrollment))) return false;
    await this.log.add({ companyId: journey.companyId, journeyId: journey.id, profileId, kind: "entered" });
    if (options.now) await this.#advance(enrollment, journey);
    else await this.#schedule(enrollment, start.at);
    return true;
  }

  /** The step job: runs the enrollment's due steps, in one transaction with what they change. */
  async run(job: StepJob): Promise<void> {
    await this.storage.transaction(async () => {
      // Held to the commit: an exit on a purchase at the same time waits for these steps and then sees where
      // they left the person.
      const enrollment = await this.enrollments.getForUpdate(job.enrollmentId);
      if (enrollment?.state !== "waiting" || enrollment.step !== job.step || enrollment.jobAt !== job.dueAt) return;
      const journey = await this.definitions.get(enrollment.companyId, enrollment.journeyId);
      if (!journey) return this.#end(enrollment, "exited", "journey_deleted");
      if (journey.status !== "active") return this.#end(enrollment, "exited", "journey_paused");
      await this.#advance(enrollment, journey);
    });
  }

  /** Ends the waiting enrollments of a person in journeys that exit on a purchase (a purchase event). */
  async exitOnPurchase(companyId: string, profileId: string): Promise<void> {
    const waiting = (await this.enrollments.find({ where: { companyId, profileId, state: "waiting" } })).items;
    for (const found of waiting) {
      const journey = await this.definitions.get(companyId, found.journeyId);
      if (!journey?.exitOn.includes("purchase")) continue;
      // As it is now (a step job that moved it meanwhile has committed; see run), if still waiting.
      const enrollment = await this.enrollments.getForUpdate(found.id);
      if (enrollment?.state === "waiting") await this.#end(enrollment, "exited", "purchased");
    }
  }

  /** The enrollments of a person that sent a message since `since` (purchases within 7 days of one count for its journey). */
  async sentSince(companyId: string, profileId: string, since: number): Promise<EnrollmentRecord[]> {
    return (await this.enrollments.find({ where: { companyId, profileId, sentAt: { gte: since } } })).items;
  }

  /** A person's enrollments, ended ones too (at most `limit`): the journeys on their page in the console. */
  async enrollmentsOf(companyId: string, profileId: string, limit: number): Promise<EnrollmentRecord[]> {
    return (await this.enrollments.find({ where: { companyId, profileId }, limit })).items;
  }

  /** Removes people from every journey (privacy deletion): their enrollments, and the jobs of those still waiting. */
  async forget(companyId: string, profileIds: readonly string[]): Promise<number> {
    const enrollments = (await this.enrollments.find({ where: { companyId, profileId: { in: [...profileIds] } } })).items;
    for (const enrollment of enrollments) if (enrollment.state === "waiting") await this.jobs.cancel(stepJobKey(enrollment.id));
    return this.enrollments.deleteWhere({ companyId, profileId: { in: [...profileIds] } });
  }

  async #advance(enrollment: EnrollmentRecord, journey: JourneyRecord): Promise<void> {
    const person = await this.profiles.person(enrollment.companyId, enrollment.profileId);
    if (!person) return this.#end(enrollment, "exited", "person_unknown");
    let subject = enrollment.subject;
    if (journey.trigger.type === "cart_abandonment" || journey.trigger.type === "browse_abandonment") {
      const found = await abandonedProduct(this.profiles, enrollment.companyId, person.id, journey.trigger.type === "cart_abandonment" ? "add_to_cart" : "product_view");
      if (found === "purchased") return this.#end(enrollment, "exited", "purchased");
      if (!found) return this.#end(enrollment, "exited", "no_product");
      subject = found;
    }
    for (const [name, value] of Object.entries(journey.audience.attributes ?? {})) {
      if (person.attributes[name] !== value) return this.#end(enrollment, "skipped", "audience");
    }
    let sentAt = enrollment.sentAt;
    for (let step = enrollment.step; step < journey.steps.length; step++) {
      const definition = journey.steps[step]!;
      if (definition.type === "wait") return this.#wait(enrollment, step + 1, this.clock.now() + durationMs(definition.duration)!, sentAt);
      if (definition.type === "email") {
        // Email sending is not in reachkit yet: the step is passed over and counted, and the journey goes on.
        await this.#logFor(enrollment, "skipped", "email_unavailable");
        continue;
      }
      const message = await this.#message(definition, journey, person, subject);
      if ("missing" in message) return this.#end(enrollment, "skipped", message.missing);
      const outcome = await this.sendRules.send({
        companyId: enrollment.companyId,
        to: message.to,
        messageType: "MARKETING",
        body: message.body,
        ...(message.mediaUrl !== undefined ? { mediaUrl: message.mediaUrl } : {}),
        kind: "journey",
        idempotencyKey: `journey:${enrollment.id}:${enrollment.enteredAt}:${step}`,
        tags: { journeyId: journey.id },
        attributes: person.attributes,
      });
      if (outcome.status === "skipped") return this.#end(enrollment, "skipped", outcome.reason);
      if (outcome.status === "deferred") {
        await this.#logFor(enrollment, "deferred", outcome.reason);
        return this.#wait(enrollment, step, outcome.until, sentAt);
      }
      await this.#logFor(enrollment, "sent");
      sentAt = this.clock.now();
    }
    await this.#end({ ...enrollment, ...(sentAt !== undefined ? { sentAt } : {}) }, "completed");
  }

  async #message(
    step: Exclude<JourneyStep, { type: "wait" | "email" }>,
    journey: JourneyRecord,
    person: PersonView,
    subject: Subject | undefined,
  ): Promise<{ to: string; body: string; mediaUrl?: string } | { missing: string }> {
    if (person.phone === undefined) return { missing: "no_phone" };
    const values: Record<string, string | undefined> = {
      firstName: text(person.attributes.firstName),
      lastName: text(person.attributes.lastName),
      productName: subject?.name,
      productLink: subject?.link,
      price: subject?.price,
    };
    if (step.text.includes("{companyName}")) values.companyName = (await this.accounts.getCompany(journey.companyId))?.name;
    if ((step.text.includes("{firstName}") && !values.firstName) || (step.text.includes("{lastName}") && !values.lastName)) {
      const subscriber = await this.subscriptions.findSubscriber(journey.companyId, { phone: person.phone });
      values.firstName ??= subscriber?.firstName;
      values.lastName ??= subscriber?.lastName;
    }
    const filled = fillTemplate(step.text, values);
    if (filled.missing) return { missing: "missing_macro" };
    // Tracked short links where the campaigns plugin runs (one per journey, person and URL), else the links as written.
    const body = await this.links.shortenText(journey.companyId, filled.text, { source: "journey", recipientId: `${journey.id}:${person.id}`, profileId: person.id, address: person.phone, channel: "sms" });
    const mediaUrl = step.type === "mms" ? (subject?.imageUrl ?? step.mediaUrl) : undefined;
    if (step.type === "mms" && mediaUrl === undefined) return { missing: "missing_macro" };
    return { to: person.phone, body, ...(mediaUrl !== undefined ? { mediaUrl } : {}) };
  }

  /** Inserts a first enrollment; false when another transaction inserted it first (it committed meanwhile). */
  async #insertNew(enrollment: EnrollmentRecord): Promise<boolean> {
    try {
      await this.enrollments.insert(enrollment);
      return true;
    } catch (error) {
      if (error instanceof UniqueConstraintError) return false;
      throw error;
    }
  }

  async #wait(enrollment: EnrollmentRecord, step: number, dueAt: number, sentAt: number | undefined): Promise<void> {
    const moved = { ...enrollment, step, jobAt: dueAt, updatedAt: this.clock.now(), ...(sentAt !== undefined ? { sentAt } : {}) };
    await this.enrollments.upsert(moved);
    await this.#schedule(moved, dueAt);
  }

  async #schedule(enrollment: EnrollmentRecord, dueAt: number): Promise<void> {
    const payload: StepJob = { enrollmentId: enrollment.id, step: enrollment.step, dueAt };
    await this.jobs.enqueue({ type: STEP_JOB, payload, key: stepJobKey(enrollment.id), replace: true, runAt: dueAt, companyId: enrollment.companyId });
  }

  async #end(enrollment: EnrollmentRecord, state: Exclude<EnrollmentState, "waiting">, reason?: string): Promise<void> {
    const { jobAt, ...ended } = enrollment;
    await this.enrollments.upsert({ ...ended, state, ...(reason !== undefined ? { reason } : {}), updatedAt: this.clock.now() });
    if (state !== "completed") await this.#logFor(enrollment, state, reason);
    // A job still queued for it (an exit while it waits) has nothing left to do.
    if (jobAt !== undefined) await this.jobs.cancel(stepJobKey(enrollment.id));
  }

  #logFor(enrollment: EnrollmentRecord, kind: "sent" | "skipped" | "deferred" | "exited", reason?: string): Promise<void> {
    return this.log.add({ companyId: enrollment.companyId, journeyId: enrollment.journeyId, profileId: enrollment.profileId, kind, ...(reason !== undefined ? { reason } : {}) });
  }
}

/** The journey's first step that is not a wait, and when it is due: after the waits before it. */
function leadingWaits(steps: readonly JourneyStep[], now: number): { step: number; at: number } {
  let step = 0;
  let at = now;
  for (; step < steps.length && steps[step]!.type === "wait"; step++) at += durationMs((steps[step] as { duration: string }).duration)!;
  return { step, at };
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
