import { randomInt, randomUUID } from "node:crypto";
import {
  CLOCK,
  DELETE_SUBJECT_DATA,
  EVENTS,
  inject,
  injectable,
  JOBS,
  notFound,
  OUTBOX,
  STORAGE,
  UniqueConstraintError,
  type Clock,
  type Collection,
  type DeleteSubjectData,
  type EventBus,
  type JobContext,
  type JobOutcome,
  type Jobs,
  type Outbox,
  type Patch,
  type Storage,
} from "../../src/index.ts";
import { SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import type { PrivacyPluginOptions } from "./privacy-plugin.ts";
import { AFFILIATES, PRIVACY_REQUESTS, type AffiliateRecord, type PrivacyRequest, type PrivacyRequestOrigin } from "./records.ts";
import { parsePrivacyRequest, type PrivacyRequestInput } from "./schemas.ts";
import { PRIVACY_SETTINGS } from "./tokens.ts";
import { maskEmail, maskPhone } from "./wire.ts";

/** Interface §8: a request is processed within thirty days. */
export const MAX_PROCESSING_DELAY_MS = 30 * 24 * 60 * 60_000;
export const PRIVACY_JOB = "privacy.process";
/** Numbers tried by a request whose next number other requests keep taking first. */
const NUMBERING_ATTEMPTS = 5;

/** A processing delay must keep the interface's promise: from 0 (at once) to thirty days. */
export function assertProcessingDelay(ms: number): void {
  if (!(ms >= 0 && ms <= MAX_PROCESSING_DELAY_MS)) {
    throw new RangeError(`the privacy processing delay must be between 0 and ${MAX_PROCESSING_DELAY_MS} ms (thirty days), got ${ms}`);
  }
}

/** What `privacy.request.processed` carries. */
export interface PrivacyRequestProcessed {
  companyId: string;
  requestId: string;
  /** Records deleted over every plugin and the outbox. */
  removedRecords: number;
  at: number;
}

declare module "../../src/events/event-bus.ts" {
  interface ReachkitEvents {
    /** A privacy request's subject data is deleted and the request is marked processed. */
    "privacy.request.processed": PrivacyRequestProcessed;
  }
}

/** The payload of the processing job: the request's id alone, never the subject. */
export interface PrivacyJob {
  requestId: string;
}

/**
 * Privacy deletion requests (interface 4.11, 4.12, 3.2): recorded, then
 * processed by a durable job that deletes everything every plugin and the
 * outbox hold about the subject at that company, and masks the request.
 */
@injectable()
export class PrivacyRequests {
  readonly #requests: Collection<PrivacyRequest>;
  readonly #affiliates: Collection<AffiliateRecord>;

  /** How long after the request the processing job runs (0: at once; at most thirty days). */
  private readonly processingDelayMs: number;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(EVENTS) private readonly events: EventBus,
    /** Finds the subscribers holding the subject's phone or email. */
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: Pick<SubscriptionsService, "findSubscriber">,
    /** Runs every plugin's deletion hook. */
    @inject(DELETE_SUBJECT_DATA) private readonly deleteSubjectData: DeleteSubjectData,
    @inject(PRIVACY_SETTINGS) settings: Required<PrivacyPluginOptions>,
  ) {
    assertProcessingDelay(settings.processingDelayMs);
    this.processingDelayMs = settings.processingDelayMs;
    this.#requests = storage.collection(PRIVACY_REQUESTS);
    this.#affiliates = storage.collection(AFFILIATES);
  }

  /** Validates (400 naming the fields), records the request and queues its processing. */
  async create(companyId: string, request: PrivacyRequestInput, origin: PrivacyRequestOrigin = "in_process"): Promise<PrivacyRequest> {
    const input = parsePrivacyRequest(request);
    const { storage, clock, jobs, processingDelayMs } = this;
    return storage.transaction(async () => {
      const now = clock.now();
      const request: PrivacyRequest = {
        id: randomUUID(),
        number: 0,
        companyId,
        type: "DELETE",
        origin,
        ...input,
        processed: false,
        requestedAt: now,
        dueAt: now + processingDelayMs,
      };
      await this.#insertNumbered(request);
      const payload: PrivacyJob = { requestId: request.id };
      await jobs.enqueue({ type: PRIVACY_JOB, payload, runAt: request.dueAt, key: `privacy:${request.id}`, companyId });
      return request;
    });
  }

  /** A request of the company, by its id or its integer (legacy) id; 404 for anything else, another company's included. */
  async get(companyId: string, id: string): Promise<PrivacyRequest> {
    const request = /^\d{1,15}$/.test(id) ? await this.#requests.findOne({ companyId, number: Number(id) }) : await this.#requests.get(id);
    if (request?.companyId !== companyId) throw notFound("no privacy request of this company has this id");
    return request;
  }

  /** The company's requests, oldest first. */
  async list(companyId: string, limit = 1000): Promise<PrivacyRequest[]> {
    return (await this.#requests.find({ where: { companyId }, orderBy: [{ field: "requestedAt" }], limit })).items;
  }

  /** The company's integer id in legacy answers, drawn at random on first use. */
  async affiliateUserId(companyId: string): Promise<number> {
    return this.storage.transaction(async () => {
      const known = await this.#affiliates.get(companyId);
      if (known) return known.affiliateUserId;
      let affiliateUserId: number;
      do affiliateUserId = randomInt(1, 2 ** 31);
      while (await this.#affiliates.findOne({ affiliateUserId }));
      try {
        await this.#affiliates.insert({ id: companyId, affiliateUserId });
      } catch (error) {
        // Drawn at the same time by another transaction (side by side on PostgreSQL), which committed first.
        const drawn = error instanceof UniqueConstraintError ? await this.#affiliates.get(companyId) : undefined;
        if (drawn === undefined) throw error;
        return drawn.affiliateUserId;
      }
      return affiliateUserId;
    });
  }

  /**
   * The job. Idempotent, and interruptible between its steps (a stopping kit
   * aborts it; it runs again after the restart): find every phone and email the
   * subject is known by, run every plugin's deletion hook for each, delete the
   * outbox messages to each phone, then mask the request and mark it processed.
   */
  async process(payload: PrivacyJob, context: JobContext): Promise<JobOutcome | undefined> {
    const { clock, outbox, events } = this;
    const request = await this.#requests.get(payload.requestId);
    if (!request || request.processed) return;
    const interrupted = () => {
      if (context.signal.aborted) throw new Error("the kit is stopping; the privacy request is processed after the restart");
    };
    interrupted();
    if (request.subjects === undefined) {
      await this.#update(request, { processingStartedAt: request.processingStartedAt ?? clock.now(), subjects: await this.#subjectsOf(request) });
    }
    const subjects = request.subjects ?? [];
    let removed = request.removedRecords ?? 0;
    for (const subject of subjects) removed += await this.deleteSubjectData({ companyId: request.companyId, ...subject });
    await this.#update(request, { removedRecords: removed });
    interrupted();
    // The outbox keeps texts by phone and emails by address.
    for (const recipient of new Set(subjects.flatMap((subject) => [subject.phone, subject.email].filter((address) => address !== undefined)))) {
      removed += await outbox.deleteForRecipient(request.companyId, recipient);
    }
    const now = clock.now();
    // The event in the same transaction as the mark: its in-transaction listeners (webhooks) commit with it.
    await this.storage.transaction(async () => {
      await this.#update(request, {
        processed: true,
        processingEndedAt: now,
        removedRecords: removed,
        subjectPhone: request.subjectPhone === undefined ? undefined : maskPhone(request.subjectPhone),
        subjectEmail: request.subjectEmail === undefined ? undefined : maskEmail(request.subjectEmail),
        clientUserId: undefined,
        subjects: undefined,
      });
      await events.emit("privacy.request.processed", { companyId: request.companyId, requestId: request.id, removedRecords: removed, at: now });
    });
    return { requestId: request.id, companyId: request.companyId, removedRecords: removed };
  }

  /** The given phone and email, and the addresses of the subscribers holding either: all data about them goes. */
  async #subjectsOf(request: PrivacyRequest): Promise<Array<{ phone?: string; email?: string }>> {
    const given = definedAddresses({ phone: request.subjectPhone, email: request.subjectEmail });
    const found = await Promise.all([
      request.subjectPhone !== undefined ? this.subscriptions.findSubscriber(request.companyId, { phone: request.subjectPhone }) : undefined,
      request.subjectEmail !== undefined ? this.subscriptions.findSubscriber(request.companyId, { email: request.subjectEmail }) : undefined,
    ]);
    const subjects = [given, ...found.flatMap((subscriber) => (subscriber ? [definedAddresses({ phone: subscriber.phone, email: subscriber.email })] : []))];
    return [...new Map(subjects.map((subject) => [`${subject.phone ?? ""} ${subject.email ?? ""}`, subject])).values()];
  }

  async #update(request: PrivacyRequest, patch: Patch<PrivacyRequest>): Promise<void> {
    Object.assign(request, await this.#requests.update(request.id, patch));
  }

  /**
   * Inserts the request under the company's next legacy number. Where transactions run side by side
   * (PostgreSQL), another request may take that number first: the unique (companyId, number) index refuses
   * the second once the first commits, and it takes the next one.
   */
  async #insertNumbered(request: PrivacyRequest): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const last = await this.#requests.findOne({ companyId: request.companyId }, [{ field: "number", direction: "desc" }]);
      request.number = (last?.number ?? 0) + 1;
      try {
        await this.#requests.insert(request);
        return;
      } catch (error) {
        if (!(error instanceof UniqueConstraintError) || !error.fields.includes("number") || attempt >= NUMBERING_ATTEMPTS) throw error;
      }
    }
  }
}

/** The addresses that are given, without undefined keys (stored and compared as such). */
function definedAddresses(subject: { phone?: string; email?: string }): { phone?: string; email?: string } {
  return {
    ...(subject.phone !== undefined ? { phone: subject.phone } : {}),
    ...(subject.email !== undefined ? { email: subject.email } : {}),
  };
}
