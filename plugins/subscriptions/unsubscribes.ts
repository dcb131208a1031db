import { CLOCK, EVENTS, inject, injectable, JOBS, retryConcurrentChanges, sortableId, STORAGE, type Clock, type EventBus, type Jobs, type Storage } from "../../src/index.ts";
import { noticeLocale } from "./notice-templates.ts";
import type { Notices } from "./notices.ts";
import type { ChangeSource, Subscription, SubscriptionKind } from "./records.ts";
import { parseUnsubscribeRequest, type UnsubscribeRequest, type UserRef } from "./schemas.ts";
import { emitAll, subscriptionEvent, type PendingEvent } from "./subscription-events.ts";
import type { SubscriptionStore } from "./subscription-store.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import { NOTICES, SUBSCRIPTION_STORE, SUBSCRIPTIONS_SETTINGS } from "./tokens.ts";
import { addressOf, channelsOf } from "./users.ts";

export type UnsubscribeStatus = "NEWLY_UNSUBSCRIBED" | "PREVIOUSLY_UNSUBSCRIBED";

/** What an accepted unsubscribe answers at once; the work itself runs as a durable job. */
export interface UnsubscribeAccepted {
  requestId: string;
  jobId: string;
  user: UserRef;
  subscriptionResponses: Array<{ subscription: SubscriptionKind; subscriptionUnsubscribeStatus: UnsubscribeStatus }>;
}

export interface UnsubscribeOptions {
  /** Recorded with every change (default "in_process"; the v1 routes pass "api"). */
  source?: ChangeSource;
}

/** What `unsubscribeNow` answers: the unsubscribe is done by the time it returns. */
export type UnsubscribeApplied = Omit<UnsubscribeAccepted, "jobId">;

/** The payload of an unsubscribe job. */
export interface UnsubscribeJob {
  requestId: string;
  companyId: string;
  user: UserRef;
  /** Only these; absent or empty: every subscription of the user's phone and email. */
  subscriptions?: SubscriptionKind[];
  notification: { language?: string; disabled: boolean };
  source: ChangeSource;
}

export const UNSUBSCRIBE_JOB = "subscriptions.unsubscribe";

interface Target {
  kind: SubscriptionKind;
  subscription?: Subscription;
}

/**
 * Unsubscribe (interface 4.6): an email touches only EMAIL subscriptions, a
 * phone only TEXT ones; an empty list means all. Already unsubscribed: the
 * attempt is recorded and, for TEXT, the notice says so.
 */
@injectable()
export class Unsubscribes {
  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SUBSCRIPTION_STORE) private readonly store: SubscriptionStore,
    @inject(JOBS) private readonly jobs: Jobs,
    @inject(NOTICES) private readonly notices: Notices,
    @inject(EVENTS) private readonly events: EventBus,
    /** repeatTextWindowMs: a repeated unsubscribe is answered by text at most once per phone and kind within it. */
    @inject(SUBSCRIPTIONS_SETTINGS) private readonly settings: Required<SubscriptionsPluginOptions>,
  ) {}

  async accept(companyId: string, request: UnsubscribeRequest, options: UnsubscribeOptions = {}): Promise<UnsubscribeAccepted> {
    const { payload, answer } = await this.#prepare(companyId, request, options);
    const job = await this.jobs.enqueue({ type: UNSUBSCRIBE_JOB, payload, companyId });
    return { ...answer, jobId: job.id };
  }

  /** `accept` and `process` in one transaction, in this call. */
  async applyNow(companyId: string, request: UnsubscribeRequest, options: UnsubscribeOptions = {}): Promise<UnsubscribeApplied> {
    // Again on what is stored now when a subscription moved under it (SubscriptionStore.change).
    return retryConcurrentChanges(() =>
      this.storage.transaction(async () => {
        const events: PendingEvent[] = [];
        const prepared = await this.#prepare(companyId, request, options);
        await this.#apply(prepared.payload, events);
        await emitAll(this.events, events);
        return prepared.answer;
      }),
    );
  }

  async #prepare(companyId: string, request: UnsubscribeRequest, options: UnsubscribeOptions): Promise<{ payload: UnsubscribeJob; answer: UnsubscribeApplied }> {
    const body = parseUnsubscribeRequest(request);
    const user: UserRef = {};
    if (body.user.phone !== undefined) user.phone = body.user.phone;
    if (body.user.email !== undefined) user.email = body.user.email;
    const listed = body.subscriptions && body.subscriptions.length > 0 ? uniqueKinds(body.subscriptions) : undefined;
    const targets = await this.#targets(companyId, user, listed);
    const requestId = sortableId(this.clock.now());
    const payload: UnsubscribeJob = {
      requestId,
      companyId,
      user,
      ...(listed ? { subscriptions: listed } : {}),
      notification: { language: body.notification?.language, disabled: body.notification?.disabled ?? false },
      source: options.source ?? "in_process",
    };
    const answer: UnsubscribeApplied = {
      requestId,
      user,
      subscriptionResponses: targets.map(({ kind, subscription }) => ({
        subscription: kind,
        subscriptionUnsubscribeStatus: subscription && subscription.state !== "unsubscribed" ? "NEWLY_UNSUBSCRIBED" : "PREVIOUSLY_UNSUBSCRIBED",
      })),
    };
    return { payload, answer };
  }

  /** The job: unsubscribes (or re-records) each target in one transaction, then queues the text. */
  async process(job: UnsubscribeJob): Promise<void> {
    const events: PendingEvent[] = [];
    await this.storage.transaction(async () => {
      await this.#apply(job, events);
      await emitAll(this.events, events);
    });
  }

  /** The job's work, inside the caller's transaction; the caller emits the events in it. */
  async #apply(job: UnsubscribeJob, events: PendingEvent[]): Promise<void> {
    const now = this.clock.now();
    let textTouched = false;
    let textNewly = false;
    for (const { kind, subscription } of await this.#targets(job.companyId, job.user, job.subscriptions)) {
      const change = { key: `${job.requestId}:${kind.channel}:${kind.type}`, source: job.source, at: now };
      if (await this.store.recorded(change.key)) continue; // done by an earlier run of this job
      const address = addressOf(job.user, kind.channel);
      if (!subscription) {
        await this.store.recordWithoutSubscription(job.companyId, kind.channel, address, kind.type, { ...change, action: "unsubscribe_repeated" });
        continue; // never subscribed: nothing to tell them
      }
      const newly = subscription.state !== "unsubscribed";
      if (newly) {
        const changed = await this.store.change(subscription, { ...change, action: "unsubscribed", to: "unsubscribed" });
        events.push(subscriptionEvent("subscription.unsubscribed", changed, subscription.state, now));
      } else {
        await this.store.change(subscription, { ...change, action: "unsubscribe_repeated" });
      }
      if (kind.channel === "TEXT") {
        textTouched = true;
        textNewly ||= newly;
      }
    }
    if (textTouched && !job.notification.disabled) {
      const subscriber = await this.store.subscriberByPhone(job.companyId, job.user.phone!);
      await this.notices.send({
        companyId: job.companyId,
        to: job.user.phone!,
        kind: textNewly ? "unsubscribed" : "already_unsubscribed",
        locale: noticeLocale(job.notification.language ?? subscriber?.locale),
        idempotencyKey: `${job.requestId}:TEXT`,
        // The attempt is recorded and answered (interface 4.6 rule 4), but a burst of them sends one text.
        ...(textNewly ? {} : { onePerKindWithinMs: this.settings.repeatTextWindowMs }),
      });
    }
  }

  /** The subscriptions a request is about: all of the user's, or the listed kinds on the user's channels (rule 3). */
  async #targets(companyId: string, user: UserRef, listed: readonly SubscriptionKind[] | undefined): Promise<Target[]> {
    const existing = await this.store.subscriptionsOf(companyId, user);
    if (!listed) return existing.map((subscription) => ({ kind: { type: subscription.type, channel: subscription.channel }, subscription }));
    const channels = channelsOf(user);
    return listed
      .filter((kind) => channels.includes(kind.channel))
      .map((kind) => ({ kind, subscription: existing.find((s) => s.type === kind.type && s.channel === kind.channel) }));
  }
}

function uniqueKinds(kinds: readonly SubscriptionKind[]): SubscriptionKind[] {
  const seen = new Map<string, SubscriptionKind>();
  for (const kind of kinds) seen.set(`${kind.channel}:${kind.type}`, { type: kind.type, channel: kind.channel });
  return [...seen.values()];
}
