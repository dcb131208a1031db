import {
  CLOCK,
  EVENTS,
  inject,
  injectable,
  invalidFields,
  JOBS,
  retryConcurrentChanges,
  sortableId,
  STORAGE,
  type Clock,
  type EventBus,
  type Jobs,
  type Storage,
} from "../../src/index.ts";
import { confirmRequestKind, noticeLocale, welcomeKind, type NoticeKind } from "./notice-templates.ts";
import type { Notices } from "./notices.ts";
import type { ChangeSource, ExternalIdentifiers, Locale, Subscriber, SubscriptionChannel, SubscriptionKind } from "./records.ts";
import { byCompany, changeOf, optInChangeId, runsOfDistinctAddresses, targetOf, type OptInBatch, type OptInRun } from "./opt-in-batch.ts";
import { changesSubscriber, identifiersOf, profileOf, subscribedChannels } from "./opt-in-fields.ts";
import { parseOptInRequest, type OptInRequest, type UserRef, type ValidOptInRequest } from "./schemas.ts";
import type { SignUpUnit, SignUpUnits, SubscriptionType } from "./sign-up-units.ts";
import type { SubscriptionEmails } from "./subscription-emails.ts";
import { emitAll, subscriptionEvent, type PendingEvent } from "./subscription-events.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import { NOTICES, OPT_IN_BATCH, SIGN_UP_UNITS_SERVICE, SUBSCRIBER_PROFILES, SUBSCRIPTION_EMAILS, SUBSCRIPTION_STORE, SUBSCRIPTIONS_SETTINGS, type SubscriberProfiles } from "./tokens.ts";
import { addressOf } from "./users.ts";

export type CreationStatus = "NEWLY_CREATED" | "PREVIOUSLY_CREATED";

/** The user as the opt-in gave it, normalised (email lower case). */
export type OptInUser = UserRef & { firstName?: string; lastName?: string };

/** What an accepted opt-in answers at once; the work itself runs as a durable job. */
export interface OptInAccepted {
  /** Names the opt-in in the change records and the outbox idempotency keys. */
  requestId: string;
  jobId: string;
  user: OptInUser;
  externalIdentifiers?: ExternalIdentifiers;
  /** NEWLY_CREATED: the subscription does not exist (or was unsubscribed) and will be created. */
  subscriptionResponses: Array<{ subscription: SubscriptionKind; subscriptionCreationStatus: CreationStatus }>;
}

export interface OptInOptions {
  /** Recorded with every change (default "in_process"; the v1 route passes "api"). */
  source?: ChangeSource;
  /**
   * The channels that get a subscription (default: every channel the user gives
   * an address for). The user's other addresses are only kept on the subscriber:
   * the legacy add-subscriber attaches an email to a text subscriber this way.
   */
  channels?: readonly SubscriptionChannel[];
}

/** What `optInNow` answers: the opt-in is done by the time it returns. */
export interface OptInApplied extends Omit<OptInAccepted, "jobId"> {
  /** The subscriber holding the user's phone (else email) afterwards. */
  subscriber: Subscriber;
  /** No subscriber held the phone (or, without a phone, the email) before. */
  subscriberCreated: boolean;
}

/** The payload of an opt-in job: everything the work needs, already validated. */
export interface OptInJob {
  requestId: string;
  companyId: string;
  signUpUnitId: string;
  type: SubscriptionType;
  user: OptInUser;
  externalIdentifiers?: ExternalIdentifiers;
  locale: Locale;
  singleOptIn: boolean;
  /** The sign-up unit asks email opt-ins to confirm by a link (absent: it does not). */
  emailDoubleOptIn?: boolean;
  source: ChangeSource;
  /** Only these channels get a subscription (absent: all of the user's). */
  channels?: SubscriptionChannel[];
}

export const OPT_IN_JOB = "subscriptions.opt-in";
/**
 * Opt-in jobs due one after another run this many at a time in one transaction (JobDefinition.batchSize),
 * through one call of `processMany`: one commit instead of three or more per opt-in. Processing a backlog
 * of 20,000 took about a seventh less CPU per opt-in in batches of 64 than of 32, and no less in batches
 * of 128 or 256 (each job then in a savepoint of its own); a batch holds the storage until it commits
 * (20 to 30 ms for 64), so requests wait for it.
 */
export const OPT_IN_BATCH_SIZE = 64;

/**
 * Opt-in (interface 4.4). `accept` validates, resolves the sign-up unit, says
 * which subscriptions exist and queues a job; `process` (the job) creates or
 * renews them in one transaction and queues the texts, keyed so that a job
 * that runs twice changes and sends nothing twice.
 */
@injectable()
export class OptIns {
  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SUBSCRIPTION_STORE) private readonly store: SubscriptionStore,
    @inject(SIGN_UP_UNITS_SERVICE) private readonly signUpUnits: SignUpUnits,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(NOTICES) private readonly notices: Notices,
    @inject(EVENTS) private readonly events: EventBus,
    /** The profiles service when the kit has one (a subscriber is a profile with consent), else nothing. */
    @inject(SUBSCRIBER_PROFILES) private readonly profiles: SubscriberProfiles,
    /** repeatTextWindowMs: a repeated opt-in is answered by text at most once per phone and kind within it. */
    @inject(SUBSCRIPTIONS_SETTINGS) private readonly settings: Required<SubscriptionsPluginOptions>,
    @inject(SUBSCRIPTION_EMAILS) private readonly emails: SubscriptionEmails,
    @inject(OPT_IN_BATCH) private readonly batch: OptInBatch,
  ) {}

  async accept(companyId: string, request: OptInRequest, options: OptInOptions = {}): Promise<OptInAccepted> {
    const { payload, answer } = await this.#prepare(companyId, request, options);
    const job = await this.jobs.enqueue({ type: OPT_IN_JOB, payload, companyId });
    return { ...answer, jobId: job.id };
  }

  /** `accept` and `process` in one transaction, in this call: the caller learns whether the subscriber is new. */
  async applyNow(companyId: string, request: OptInRequest, options: OptInOptions = {}): Promise<OptInApplied> {
    // Again on what is stored now when a subscription moved under it (SubscriptionStore.change).
    const applied = await retryConcurrentChanges(() => this.storage.transaction(async (): Promise<OptInApplied> => {
      const events: PendingEvent[] = [];
      const { payload, answer } = await this.#prepare(companyId, request, options);
      const before = await this.store.findSubscriber(companyId, payload.user);
      // requestId is new: nothing was recorded under it.
      await this.#apply(payload, events, true);
      const subscriber = (await this.store.findSubscriber(companyId, payload.user))!;
      await emitAll(this.events, events);
      return { ...answer, subscriber, subscriberCreated: before?.id !== subscriber.id };
    }));
    return applied;
  }

  /** Validates, resolves the sign-up unit and says which subscriptions exist: the answer and the job's payload. */
  async #prepare(companyId: string, request: OptInRequest, options: OptInOptions): Promise<{ payload: OptInJob; answer: Omit<OptInAccepted, "jobId"> }> {
    const body = parseOptInRequest(request);
    const unit = await this.#signUpUnit(companyId, body);
    const channels = options.channels ? [...new Set(options.channels)] : undefined;
    const subscribed = subscribedChannels(body.user, channels);
    if (subscribed.length === 0) throw invalidFields([{ path: "user", message: `needs an address on ${channels!.join(" or ")}` }]);
    const subscriptionResponses = await Promise.all(
      subscribed.map(async (channel) => {
        const existing = await this.store.subscription(companyId, channel, addressOf(body.user, channel), unit.type);
        const subscriptionCreationStatus: CreationStatus = existing && existing.state !== "unsubscribed" ? "PREVIOUSLY_CREATED" : "NEWLY_CREATED";
        return { subscription: { type: unit.type, channel }, subscriptionCreationStatus };
      }),
    );
    // Time-ordered like the records it names (see SubscriptionStore): the change keys and outbox keys made from it go to the end of their indexes.
    const requestId = sortableId(this.clock.now());
    const payload: OptInJob = {
      requestId,
      companyId,
      signUpUnitId: unit.id,
      type: unit.type,
      user: body.user,
      ...(body.externalIdentifiers ? { externalIdentifiers: body.externalIdentifiers } : {}),
      locale: body.locale ?? { language: unit.language, country: unit.country },
      singleOptIn: body.singleOptIn ?? false,
      ...(unit.emailDoubleOptIn ? { emailDoubleOptIn: true } : {}),
      source: options.source ?? "in_process",
      ...(channels ? { channels } : {}),
    };
    const answer = {
      requestId,
      user: body.user,
      ...(body.externalIdentifiers ? { externalIdentifiers: body.externalIdentifiers } : {}),
      subscriptionResponses,
    };
    return { payload, answer };
  }

  /**
   * The job: creates, renews or re-records each subscription, and queues its text. Atomic through the
   * job runner, which runs each job of a batched type (OPT_IN_BATCH_SIZE) in a transaction or savepoint
   * of its own with its done mark, so a transaction here would only add a savepoint per opt-in.
   */
  async process(job: OptInJob, run: { firstRun?: boolean } = {}): Promise<void> {
    const events: PendingEvent[] = [];
    await this.#apply(job, events, run.firstRun ?? false);
    await emitAll(this.events, events);
  }

  /**
   * The jobs of a batch (the job runner's batchHandler, inside its transaction), with what `process` does
   * for each, in order for each address: in runs of jobs of distinct addresses, each run's fresh opt-ins
   * and repeats written together (OptInBatch), its other jobs one after another; each job's identifiers
   * linked in job order, and each run's events emitted in job order.
   */
  async processMany(runs: readonly OptInRun[]): Promise<void> {
    for (const run of runsOfDistinctAddresses(runs)) {
      const now = this.clock.now();
      const events = new Map<OptInJob, PendingEvent[]>(run.map(({ job }) => [job, []]));
      const plan = await this.batch.plan(run, now);
      // The written-together jobs' identifiers, linked together between the jobs processed alone (which link their own).
      let toLink: OptInJob[] = [];
      const linkTogether = async () => {
        // In the batch's transaction: a link that fails fails the batch, which runs again one job at a time.
        for (const [companyId, jobs] of byCompany(toLink)) await this.profiles.linkMany(companyId, jobs.map((job) => identifiersOf(job.user, job.externalIdentifiers)));
        toLink = [];
      };
      for (const { job, firstRun } of run) {
        if (!plan.alone.has(job)) {
          toLink.push(job);
          continue;
        }
        await linkTogether();
        await this.#apply(job, events.get(job)!, firstRun);
      }
      await linkTogether();
      await this.batch.write(plan, now, (job) => events.get(job)!);
      await emitAll(this.events, [...events.values()].flat());
    }
  }

  /**
   * The job's work, inside the caller's transaction; the caller emits the events in it. `firstRun`: no
   * earlier run of this job committed anything (its first attempt), so its change records need no lookup.
   */
  async #apply(job: OptInJob, events: PendingEvent[], firstRun: boolean): Promise<void> {
    const now = this.clock.now();
    const changeId = (channel: SubscriptionChannel) => optInChangeId(job, channel);
    const todo: SubscriptionChannel[] = [];
    for (const channel of subscribedChannels(job.user, job.channels)) if (firstRun || !(await this.store.recorded(changeId(channel)))) todo.push(channel);
    if (todo.length === 0) return; // an earlier run of this job did it all
    // In the job's transaction: a link that fails fails the job, which runs again.
    await this.profiles.link(job.companyId, identifiersOf(job.user, job.externalIdentifiers));
    const owners = await this.#owners(job, now);
    for (const channel of todo) {
      const { notice, repeated } = await this.#optIn(job, channel, owners[channel]!, now, events);
      if (channel === "TEXT") {
        await this.notices.send({
          companyId: job.companyId,
          to: job.user.phone!,
          kind: notice,
          locale: noticeLocale(job.locale),
          idempotencyKey: changeId(channel),
          // The attempt is recorded and answered (interface 4.4 rule 3), but a burst of them sends one text.
          ...(repeated ? { onePerKindWithinMs: this.settings.repeatTextWindowMs } : {}),
        });
      } else if (notice === confirmRequestKind(job.type)) {
        await this.emails.sendConfirmation(job.companyId, job.user.email!, job.type, changeId(channel));
      }
    }
  }

  /** Applies one channel's opt-in; returns the notice it calls for (sent for TEXT only), and whether it repeats an earlier one. */
  async #optIn(
    job: OptInJob,
    channel: SubscriptionChannel,
    owner: Subscriber,
    now: number,
    events: PendingEvent[],
  ): Promise<{ notice: NoticeKind; repeated: boolean }> {
    const address = addressOf(job.user, channel);
    const existing = await this.store.subscription(job.companyId, channel, address, job.type);
    const change = changeOf(job, channel, now);
    const target = targetOf(job, channel);
    const firstNotice = target === "pending" ? confirmRequestKind(job.type) : welcomeKind(job.type);
    if (!existing) {
      const created = await this.store.createSubscription(
        { companyId: job.companyId, subscriberId: owner.id, type: job.type, channel, address, signUpUnitId: job.signUpUnitId },
        { ...change, action: "opt_in", to: target },
      );
      events.push(subscriptionEvent("subscription.created", created, undefined, now));
      return { notice: firstNotice, repeated: false };
    }
    if (existing.state === "unsubscribed") {
      const renewed = await this.store.change(
        existing,
        { ...change, action: "opt_in", to: target },
        { subscribedAt: now, signUpUnitId: job.signUpUnitId, subscriberId: owner.id },
      );
      events.push(subscriptionEvent("subscription.created", renewed, "unsubscribed", now));
      return { notice: firstNotice, repeated: false };
    }
    if (existing.state === "pending" && target === "active") {
      const confirmed = await this.store.change(existing, { ...change, action: "confirmed", to: "active" }, { signUpUnitId: job.signUpUnitId });
      events.push(subscriptionEvent("subscription.confirmed", confirmed, "pending", now));
      return { notice: welcomeKind(job.type), repeated: false };
    }
    await this.store.change(existing, { ...change, action: "opt_in_repeated" });
    // Still waiting for the Y: ask again rather than claim they are subscribed.
    return { notice: existing.state === "pending" ? confirmRequestKind(job.type) : "already_subscribed", repeated: true };
  }

  async #signUpUnit(companyId: string, body: ValidOptInRequest): Promise<SignUpUnit> {
    if (body.signUpSourceId !== undefined) {
      const unit = await this.signUpUnits.get(companyId, body.signUpSourceId);
      if (!unit) throw invalidFields([{ path: "signUpSourceId", message: "no API sign-up unit of this company has this id" }]);
      return unit;
    }
    // The schema guarantees both when signUpSourceId is absent (rule 1).
    const type = body.subscriptionType!;
    const locale = body.locale!;
    const matches = await this.signUpUnits.match(companyId, type, locale.language, locale.country);
    if (matches.length === 1) return matches[0]!;
    const which = `${type} ${locale.language}-${locale.country}`;
    throw invalidFields([
      {
        path: "locale",
        message:
          matches.length === 0
            ? `no API sign-up unit matches ${which}`
            : `${matches.length} API sign-up units match ${which}; give signUpSourceId to choose one`,
      },
    ]);
  }

  /**
   * The subscriber that owns each channel's subscription: the one holding the
   * phone (TEXT) and the one holding the email (EMAIL), created when missing;
   * one subscriber gets both when neither address belongs to someone else.
   */
  async #owners(job: OptInJob, now: number): Promise<Partial<Record<SubscriptionChannel, Subscriber>>> {
    const { companyId, user } = job;
    const byPhone = user.phone !== undefined ? await this.store.subscriberByPhone(companyId, user.phone) : undefined;
    const byEmail = user.email !== undefined ? await this.store.subscriberByEmail(companyId, user.email) : undefined;
    const profile = (subscriber?: Subscriber) => profileOf(job, subscriber, now);
    const create = (address: UserRef) => this.store.createSubscriber({ companyId, ...address, ...profile(), createdAt: now });
    let base = byPhone ?? byEmail;
    if (!base) {
      base = await create({ phone: user.phone, email: user.email });
    } else {
      const adopt: UserRef = {};
      if (user.phone !== undefined && !byPhone && base.phone === undefined) adopt.phone = user.phone;
      if (user.email !== undefined && !byEmail && base.email === undefined) adopt.email = user.email;
      const patch = { ...profile(base), ...adopt };
      // A repeat that brings nothing new (the common case) leaves the row alone: its updatedAt says when it last changed.
      if (changesSubscriber(base, patch)) base = (await this.store.updateSubscriber(base.id, patch)) ?? base;
    }
    const owners: Partial<Record<SubscriptionChannel, Subscriber>> = {};
    const channels = subscribedChannels(user, job.channels);
    if (channels.includes("TEXT")) owners.TEXT = byPhone ?? (base.phone === user.phone ? base : await create({ phone: user.phone }));
    if (channels.includes("EMAIL")) owners.EMAIL = byEmail ?? (base.email === user.email ? base : await create({ email: user.email }));
    return owners;
  }
}
