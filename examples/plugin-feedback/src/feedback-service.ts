import {
  CLOCK,
  EVENTS,
  JOBS,
  OUTBOX,
  STORAGE,
  inject,
  injectable,
  notFound,
  sortableId,
  type Clock,
  type Collection,
  type DataSubject,
  type EventBus,
  type JobOutcome,
  type Jobs,
  type Outbox,
  type Storage,
} from "reachkit";
import { FEEDBACK_COLLECTION, THANK_JOB, type Feedback, type ThankJob } from "./records.js";
import { FEEDBACK_SETTINGS, type FeedbackSettings } from "./tokens.js";

export interface FeedbackInput {
  phone: string;
  rating: number;
  comment?: string;
}

/** Stores feedback, thanks the customer by text in a durable job, and says so with `feedback.thanked`. */
@injectable()
export class FeedbackService {
  private readonly entries: Collection<Feedback>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(EVENTS) private readonly events: EventBus,
    @inject(FEEDBACK_SETTINGS) private readonly settings: FeedbackSettings,
  ) {
    this.entries = storage.collection<Feedback>(FEEDBACK_COLLECTION);
  }

  /** Stores the feedback and queues its thank-you in one transaction: neither is kept without the other. */
  async receive(companyId: string, input: FeedbackInput): Promise<Feedback> {
    const now = this.clock.now();
    const entry: Feedback = {
      id: sortableId(now),
      companyId,
      phone: input.phone,
      rating: input.rating,
      comment: input.comment ?? null,
      status: "received",
      receivedAt: new Date(now).toISOString(),
      thankedAt: null,
    };
    await this.storage.transaction(async () => {
      await this.entries.insert(entry);
      await this.jobs.enqueue<ThankJob>({ type: THANK_JOB, payload: { companyId, feedbackId: entry.id }, key: `feedback-thanks:${entry.id}`, companyId });
    });
    return entry;
  }

  /** One company's feedback by id; another company's answers 404, as if it did not exist. */
  async get(companyId: string, id: string): Promise<Feedback> {
    const entry = await this.entries.get(id);
    if (entry === undefined || entry.companyId !== companyId) throw notFound("no feedback of this company has this id");
    return entry;
  }

  /** The job's handler. A job may run again after a crash: the idempotency key keeps it to one text. */
  async thank({ companyId, feedbackId }: ThankJob): Promise<JobOutcome> {
    const entry = await this.entries.get(feedbackId);
    if (entry === undefined || entry.status === "thanked") return { thanked: false };
    await this.outbox.send({ companyId, to: entry.phone, body: this.settings.thankYouText, kind: "feedback_thanks", idempotencyKey: `feedback-thanks:${feedbackId}` });
    await this.entries.update(feedbackId, { status: "thanked", thankedAt: new Date(this.clock.now()).toISOString() });
    await this.events.emit("feedback.thanked", { companyId, feedbackId, rating: entry.rating });
    return { thanked: true, rating: entry.rating };
  }

  /** Privacy requests: everything stored about the subject's phone at that company. */
  deleteSubject(subject: DataSubject): Promise<number> {
    if (subject.phone === undefined) return Promise.resolve(0);
    return this.entries.deleteWhere({ companyId: subject.companyId, phone: subject.phone });
  }
}
