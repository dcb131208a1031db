import { CLOCK, EVENTS, inject, injectable, JOBS, retryConcurrentChanges, STORAGE, type Clock, type BatchedJob, type DataSubject, type EventBus, type JobDefinition, type JobHandler, type Jobs, type OutboxMessage, type Storage } from "../../src/index.ts";
import type { EmailLinkClaims } from "./email-links.ts";
import { eligibilityOf, NOT_SUBSCRIBED, type Eligibility, type SubscriptionEligibility } from "./eligibility.ts";
import type { InboundResult, InboundText, InboundTexts } from "./inbound-texts.ts";
import type { NoticeTemplates } from "./notice-templates.ts";
import { OPT_IN_BATCH_SIZE, OPT_IN_JOB, type OptIns, type OptInAccepted, type OptInApplied, type OptInJob, type OptInOptions } from "./opt-ins.ts";
import type { Subscriber, Subscription, SubscriptionChange, SubscriptionKind } from "./records.ts";
import type { OptInRequest, UnsubscribeRequest, UserRef } from "./schemas.ts";
import { normalizeSenderNumber, type SenderNumbers } from "./sender-numbers.ts";
import type { SignUpUnits } from "./sign-up-units.ts";
import type { SubscriberDirectory } from "./subscriber-directory.ts";
import type { SubscriberEmail, SubscriptionEmails } from "./subscription-emails.ts";
import { emitAll, subscriptionEvent, type PendingEvent } from "./subscription-events.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import {
  INBOUND_TEXTS,
  NOTICE_TEMPLATES,
  OPT_INS,
  SENDER_NUMBERS_SERVICE,
  SIGN_UP_UNITS_SERVICE,
  SUBSCRIBER_DIRECTORY,
  SUBSCRIPTION_EMAILS,
  SUBSCRIPTION_STORE,
  UNSUBSCRIBES,
} from "./tokens.ts";
import {
  UNSUBSCRIBE_JOB,
  type Unsubscribes,
  type UnsubscribeAccepted,
  type UnsubscribeApplied,
  type UnsubscribeJob,
  type UnsubscribeOptions,
} from "./unsubscribes.ts";

/** A company's sender number and the webhook path its SMS provider calls, as `reachkit init` prints them. */
export interface ProvisionedMessaging {
  senderNumber: string;
  inboundWebhookPath: string;
}

/**
 * The subscriptions domain, in process: the v1 routes, the inbound webhook and
 * the GraphQL plugin call exactly these methods, and so can a host app
 * (`kit.plugin("subscriptions")`) or another plugin (the `SUBSCRIPTIONS_SERVICE` token).
 *
 * Phones are E.164 (`+` and digits); emails are compared in lower case. Every
 * method is scoped by the company id it is given.
 */
@injectable()
export class SubscriptionsService {
  readonly #storage: Storage;
  readonly #jobs: Jobs;
  readonly #store: SubscriptionStore;
  readonly #optIns: OptIns;
  readonly #unsubscribes: Unsubscribes;
  readonly #inbound: InboundTexts;
  readonly #emails: SubscriptionEmails;
  readonly #clock: Clock;
  readonly #events: EventBus;

  /** @internal The kit's container builds it (`SUBSCRIPTIONS_SERVICE`). */
  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(JOBS) jobs: Jobs,
    @inject(SIGN_UP_UNITS_SERVICE) readonly signUpUnits: SignUpUnits,
    @inject(SENDER_NUMBERS_SERVICE) readonly senderNumbers: SenderNumbers,
    /** The wording of every text this plugin sends, per company and locale. */
    @inject(NOTICE_TEMPLATES) readonly templates: NoticeTemplates,
    @inject(SUBSCRIPTION_STORE) store: SubscriptionStore,
    @inject(OPT_INS) optIns: OptIns,
    @inject(UNSUBSCRIBES) unsubscribes: Unsubscribes,
    @inject(INBOUND_TEXTS) inbound: InboundTexts,
    /** Pages of subscribers and counts of changes per day, for people reading them (the console). */
    @inject(SUBSCRIBER_DIRECTORY) readonly directory: SubscriberDirectory,
    @inject(SUBSCRIPTION_EMAILS) emails: SubscriptionEmails,
    @inject(CLOCK) clock: Clock,
    @inject(EVENTS) events: EventBus,
  ) {
    this.#storage = storage;
    this.#jobs = jobs;
    this.#store = store;
    this.#optIns = optIns;
    this.#unsubscribes = unsubscribes;
    this.#inbound = inbound;
    this.#emails = emails;
    this.#clock = clock;
    this.#events = events;
  }

  /**
   * Opts a user in (interface 4.4; the code path of `POST /v1/subscriptions`).
   * Validates like the route (an invalid request throws the route's 400
   * `HttpError` naming the fields), answers which subscriptions already exist,
   * and queues the work as a durable job: the subscription, its texts and the
   * events happen when the job runs.
   */
  optIn(companyId: string, request: OptInRequest, options?: OptInOptions): Promise<OptInAccepted> {
    return this.#optIns.accept(companyId, request, options);
  }

  /**
   * `optIn` done in this call rather than by a job: subscriber, subscriptions,
   * change records and texts are committed together before it returns, and the
   * answer says whether the subscriber is new (the legacy add-subscriber's 201).
   */
  optInNow(companyId: string, request: OptInRequest, options?: OptInOptions): Promise<OptInApplied> {
    return this.#optIns.applyNow(companyId, request, options);
  }

  /** Unsubscribes a user (interface 4.6; the code path of `POST /v1/subscriptions/unsubscribe`), as a durable job. */
  unsubscribe(companyId: string, request: UnsubscribeRequest, options?: UnsubscribeOptions): Promise<UnsubscribeAccepted> {
    return this.#unsubscribes.accept(companyId, request, options);
  }

  /** `unsubscribe` done in this call rather than by a job (the legacy remove-subscriber answers the outcome). */
  unsubscribeNow(companyId: string, request: UnsubscribeRequest, options?: UnsubscribeOptions): Promise<UnsubscribeApplied> {
    return this.#unsubscribes.applyNow(companyId, request, options);
  }

  /**
   * Queues an email to a subscriber of one type, with `List-Unsubscribe` and
   * `List-Unsubscribe-Post` (RFC 8058) whose one-click link leaves that type.
   * Undefined, and nothing queued, unless the address's subscription of that
   * type is active.
   */
  async sendEmail(companyId: string, email: SubscriberEmail): Promise<OutboxMessage | undefined> {
    const to = email.to.trim().toLowerCase();
    const subscription = await this.#store.subscription(companyId, "EMAIL", to, email.type);
    if (subscription?.state !== "active") return undefined;
    return this.#emails.send(companyId, { ...email, to });
  }

  /**
   * Opens the pending email subscription a confirmation link speaks for
   * (double opt-in). `gone`: there is none any more (unsubscribed, or erased).
   */
  async confirmEmail(claims: EmailLinkClaims): Promise<"confirmed" | "already_confirmed" | "gone"> {
    const { companyId, email, type } = claims;
    let events: PendingEvent[] = [];
    // Again on what is stored now when the subscription moved under it (SubscriptionStore.change).
    const outcome = await retryConcurrentChanges(() => this.#storage.transaction(async () => {
      events = [];
      const subscription = await this.#store.subscription(companyId, "EMAIL", email, type);
      if (subscription?.state === "active") return "already_confirmed";
      if (subscription?.state !== "pending") return "gone";
      const now = this.#clock.now();
      const key = `email-confirm:${subscription.id}:${subscription.subscribedAt}`;
      const confirmed = await this.#store.change(subscription, { key, source: "email_link", at: now, action: "confirmed", to: "active" });
      events.push(subscriptionEvent("subscription.confirmed", confirmed, "pending", now));
      return "confirmed" as const;
    }));
    await emitAll(this.#events, events);
    return outcome;
  }

  /** Unsubscribes the address a one-click link speaks for from its type, in this call (RFC 8058: at once). */
  unsubscribeEmail(claims: EmailLinkClaims): Promise<UnsubscribeApplied> {
    return this.#unsubscribes.applyNow(claims.companyId, { user: { email: claims.email }, subscriptions: [{ type: claims.type, channel: "EMAIL" }] }, { source: "email_one_click" });
  }

  /** The eligibility of every subscription of the phone (TEXT) and the email (EMAIL): `GET /v1/subscriptions`. */
  async eligibility(companyId: string, user: UserRef): Promise<SubscriptionEligibility[]> {
    return (await this.#store.subscriptionsOf(companyId, lookupRef(user))).map(eligibilityOf);
  }

  /** `eligibility` of many users in one lookup (the GraphQL plugin batches its aliases through it). */
  async eligibilityOfMany(companyId: string, users: readonly UserRef[]): Promise<SubscriptionEligibility[][]> {
    return (await this.#store.subscriptionsOfMany(companyId, users.map(lookupRef))).map((subscriptions) => subscriptions.map(eligibilityOf));
  }

  /** The eligibility of one type × channel; `NOT_SUBSCRIBED` when the user has no such subscription. */
  async isEligible(companyId: string, user: UserRef, kind: SubscriptionKind): Promise<Eligibility> {
    const ref = lookupRef(user);
    const address = kind.channel === "TEXT" ? ref.phone : ref.email;
    if (address === undefined) return { ...NOT_SUBSCRIBED };
    const subscription = await this.#store.subscription(companyId, kind.channel, address, kind.type);
    return subscription ? eligibilityOf(subscription).eligibility : { ...NOT_SUBSCRIBED };
  }

  /** The subscriber holding the phone, else the one holding the email. */
  findSubscriber(companyId: string, user: UserRef): Promise<Subscriber | undefined> {
    return this.#store.findSubscriber(companyId, lookupRef(user));
  }

  /** The subscriptions of the phone and the email, with their state and when each change happened. */
  subscriptions(companyId: string, user: UserRef): Promise<Subscription[]> {
    return this.#store.subscriptionsOf(companyId, lookupRef(user));
  }

  /** Every recorded attempt and change about the phone and the email, oldest first. */
  changes(companyId: string, user: UserRef): Promise<SubscriptionChange[]> {
    return this.#store.changesOf(companyId, lookupRef(user));
  }

  /** Handles a subscriber's text to a sender number: the company is the one whose number is `to`. */
  async handleInbound(text: InboundText): Promise<InboundResult> {
    const companyId = await this.senderNumbers.companyOf(text.to);
    if (companyId === undefined) return { changed: 0 };
    return this.#inbound.handle(companyId, { ...text, from: normalizeSenderNumber(text.from) });
  }

  /** Gives a new company a sender number and its inbound webhook path (`reachkit init`). */
  async provision(companyId: string): Promise<ProvisionedMessaging> {
    const senderNumber = await this.senderNumbers.assign(companyId);
    return { senderNumber, inboundWebhookPath: this.senderNumbers.webhookPath(companyId) };
  }

  /**
   * Deletes everything this plugin stores about a subject of one company: the
   * subscribers holding the phone or email (with all their subscriptions and
   * change records), any other subscription or record of those addresses, and
   * the opt-in and unsubscribe jobs carrying them, queued or finished. Returns how many records.
   */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    const { companyId } = subject;
    const user = lookupRef({ phone: subject.phone, email: subject.email });
    if (user.phone === undefined && user.email === undefined) return 0;
    const store = this.#store;
    return this.#storage.transaction(async () => {
      let removed = 0;
      const owners = new Set<string>();
      if (user.phone !== undefined) owners.add((await store.subscriberByPhone(companyId, user.phone))?.id ?? "");
      if (user.email !== undefined) owners.add((await store.subscriberByEmail(companyId, user.email))?.id ?? "");
      owners.delete("");
      for (const subscriberId of owners) {
        removed += await store.subscriptions.deleteWhere({ companyId, subscriberId });
        removed += await store.changes.deleteWhere({ companyId, subscriberId });
        if (await store.subscribers.delete(subscriberId)) removed++;
      }
      for (const [channel, address] of [["TEXT", user.phone], ["EMAIL", user.email]] as const) {
        if (address === undefined) continue;
        removed += await store.subscriptions.deleteWhere({ companyId, channel, address });
        removed += await store.changes.deleteWhere({ companyId, address });
      }
      return removed + (await this.#deleteJobs(companyId, user));
    });
  }

  /** @internal The plugin registers these as its durable job handlers. */
  jobHandlers(): Record<typeof OPT_IN_JOB | typeof UNSUBSCRIBE_JOB, JobHandler<never> | JobDefinition<never>> {
    return {
      // A first attempt: no earlier run committed anything (an attempt given back was rolled back whole).
      [OPT_IN_JOB]: {
        handler: (payload: OptInJob, context) => this.#optIns.process(payload, { firstRun: context.attempt === 1 }),
        batchHandler: (jobs: readonly BatchedJob<OptInJob>[]) => this.#optIns.processMany(jobs.map(({ payload, attempt }) => ({ job: payload, firstRun: attempt === 1 }))),
        batchSize: OPT_IN_BATCH_SIZE,
      },
      [UNSUBSCRIBE_JOB]: (payload: UnsubscribeJob) => this.#unsubscribes.process(payload),
    };
  }

  /** Opt-in and unsubscribe jobs carry the user in their payload: queued ones, and finished ones kept as history. */
  async #deleteJobs(companyId: string, user: UserRef): Promise<number> {
    const jobs = this.#jobs;
    const ids: string[] = [];
    for (const type of [OPT_IN_JOB, UNSUBSCRIBE_JOB]) {
      for (const job of await jobs.list({ companyId, type, limit: 100_000 })) {
        if (job.status === "running") continue; // its runner owns it; deleting under it would not stop it
        const about = (job.payload as { user: UserRef }).user;
        if ((user.phone !== undefined && about.phone === user.phone) || (user.email !== undefined && about.email === user.email)) ids.push(job.id);
      }
    }
    return ids.length > 0 ? jobs.deleteWhere({ id: { in: ids } }) : 0;
  }
}

/** Lookups compare emails in lower case; nothing else is rewritten (a malformed phone simply matches nothing). */
function lookupRef(user: UserRef): UserRef {
  const ref: UserRef = {};
  if (user.phone !== undefined) ref.phone = user.phone.trim();
  if (user.email !== undefined) ref.email = user.email.trim().toLowerCase();
  return ref;
}
