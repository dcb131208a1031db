import { inject, injectable } from "../../src/index.ts";
import { confirmRequestKind, noticeLocale, welcomeKind } from "./notice-templates.ts";
import type { Notice, Notices } from "./notices.ts";
import { changesSubscriber, profileOf, subscribedChannels } from "./opt-in-fields.ts";
import type { OptInJob } from "./opt-ins.ts";
import type { Subscriber, Subscription, SubscriptionChannel, SubscriptionState } from "./records.ts";
import type { SubscriptionEmails } from "./subscription-emails.ts";
import { subscriptionEvent, type PendingEvent } from "./subscription-events.ts";
import type { ChangeInput, NewSubscriptionFields, SubscriptionStore } from "./subscription-store.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import { NOTICES, SUBSCRIPTION_EMAILS, SUBSCRIPTION_STORE, SUBSCRIPTIONS_SETTINGS } from "./tokens.ts";
import { addressOf } from "./users.ts";

/** A job of a batch, and whether it is its first run (nothing of an earlier run can be stored). */
export interface OptInRun {
  job: OptInJob;
  firstRun: boolean;
}

/** The change record key of a job's opt-in on one channel: a job that runs twice records and texts once. */
export const optInChangeId = (job: OptInJob, channel: SubscriptionChannel) => `${job.requestId}:${channel}:${job.type}`;

const addressKeys = ({ companyId, user }: OptInJob) => [
  ...(user.phone !== undefined ? [`${companyId} phone ${user.phone}`] : []),
  ...(user.email !== undefined ? [`${companyId} email ${user.email}`] : []),
];
const subscriptionKey = (companyId: string, channel: SubscriptionChannel, address: string, type: string) => `${companyId} ${channel} ${address} ${type}`;

/**
 * The batch cut where a job names a phone or email (of its company) that a job before it in the same run
 * names: within a run no job's writes change what another's reads find, so the run's reads are made once
 * for all of it and its opt-ins written together, while each address's opt-ins keep their order.
 */
export function runsOfDistinctAddresses(runs: readonly OptInRun[]): OptInRun[][] {
  const cut: OptInRun[][] = [];
  let seen = new Set<string>();
  for (const run of runs) {
    const keys = addressKeys(run.job);
    if (cut.length === 0 || keys.some((key) => seen.has(key))) {
      cut.push([]);
      seen = new Set();
    }
    cut.at(-1)!.push(run);
    for (const key of keys) seen.add(key);
  }
  return cut;
}

/** A repeated opt-in: the subscription of each of its channels, unchanged by it. */
interface Repeat {
  job: OptInJob;
  subscriptions: Subscription[];
}

/** How a run's jobs are processed: written together (fresh opt-ins, repeats), or one after another as alone. */
export interface RunPlan {
  fresh: OptInJob[];
  repeats: Repeat[];
  alone: Set<OptInJob>;
}

/**
 * Opt-ins of a run of distinct addresses (the job runner's batchHandler) written together, as
 * `OptIns.process` would write each, one after the other:
 * - fresh (first run, no subscriber holds the phone or email, no subscription of its type): one subscriber,
 *   a subscription and change record per channel, and the channel's first notice;
 * - repeats (first run, one subscriber holds every address and the opt-in brings it nothing new, each
 *   channel's subscription pending or active and staying so): an `opt_in_repeated` change record per
 *   channel, and its text within the repeat window.
 * One read of subscribers by phone, by email, and of subscriptions per channel, per company; each table's
 * rows in one write; each company's texts in one `Outbox.sendMany` (its company and wordings read once).
 * Every other job (a renewal, a confirmation, a new address for a known subscriber, a job run again) is
 * left to `OptIns.process`.
 */
@injectable()
export class OptInBatch {
  constructor(
    @inject(SUBSCRIPTION_STORE) private readonly store: SubscriptionStore,
    @inject(NOTICES) private readonly notices: Notices,
    @inject(SUBSCRIPTION_EMAILS) private readonly emails: SubscriptionEmails,
    /** repeatTextWindowMs: a repeat's text goes out at most once per phone and kind within it. */
    @inject(SUBSCRIPTIONS_SETTINGS) private readonly settings: Required<SubscriptionsPluginOptions>,
  ) {}

  /** Reads the subscribers and subscriptions of the run's addresses, and sorts its jobs. */
  async plan(runs: readonly OptInRun[], now: number): Promise<RunPlan> {
    const subscribers = new Map<string, Subscriber>();
    const subscriptions = new Map<string, Subscription>();
    // Every job's, those run again included: the subscribers they may change hold back the repeats of them.
    for (const [companyId, jobs] of byCompany(runs.map((run) => run.job))) {
      const phones = jobs.flatMap((job) => (job.user.phone !== undefined ? [job.user.phone] : []));
      const emails = jobs.flatMap((job) => (job.user.email !== undefined ? [job.user.email] : []));
      for (const subscriber of await this.store.subscribersHolding(companyId, "phone", phones)) subscribers.set(`${companyId} phone ${subscriber.phone}`, subscriber);
      for (const subscriber of await this.store.subscribersHolding(companyId, "email", emails)) subscribers.set(`${companyId} email ${subscriber.email}`, subscriber);
      for (const [channel, addresses] of [["TEXT", phones], ["EMAIL", emails]] as const) {
        for (const subscription of await this.store.subscriptionsAt(companyId, channel, addresses)) {
          subscriptions.set(subscriptionKey(companyId, channel, subscription.address, subscription.type), subscription);
        }
      }
    }
    const plan: RunPlan = { fresh: [], repeats: [], alone: new Set() };
    /** The subscribers that jobs processed alone may change: a repeat of theirs is processed alone after them. */
    const touched = new Set<string>();
    const repeats: Array<Repeat & { holder: Subscriber }> = [];
    for (const { job, firstRun } of runs) {
      const holders = addressKeys(job).map((key) => subscribers.get(key));
      const channels = subscribedChannels(job.user, job.channels);
      const found = channels.map((channel) => subscriptions.get(subscriptionKey(job.companyId, channel, addressOf(job.user, channel), job.type)));
      const holder = holders[0];
      if (firstRun && holders.every((each) => each === undefined) && found.every((each) => each === undefined)) {
        plan.fresh.push(job);
      } else if (firstRun && holder && holders.every((each) => each === holder) && !changesSubscriber(holder, profileOf(job, holder, now)) && found.every((each, i) => each && staysAsItIs(job, channels[i]!, each))) {
        repeats.push({ job, subscriptions: found as Subscription[], holder });
      } else {
        plan.alone.add(job);
        for (const each of holders) if (each) touched.add(each.id);
      }
    }
    for (const repeat of repeats) {
      if (touched.has(repeat.holder.id)) plan.alone.add(repeat.job);
      else plan.repeats.push(repeat);
    }
    return plan;
  }

  /** Writes the plan's fresh opt-ins and repeats (in job order); each job's events go to `eventsOf(job)`. */
  async write(plan: RunPlan, now: number, eventsOf: (job: OptInJob) => PendingEvent[]): Promise<void> {
    await this.#writeFresh(plan.fresh, now, eventsOf);
    await this.#writeRepeats(plan.repeats, now);
  }

  async #writeFresh(jobs: readonly OptInJob[], now: number, eventsOf: (job: OptInJob) => PendingEvent[]): Promise<void> {
    if (jobs.length === 0) return;
    const subscribers = await this.store.createSubscribers(
      jobs.map((job) => ({ companyId: job.companyId, phone: job.user.phone, email: job.user.email, ...profileOf(job, undefined, now), createdAt: now })),
    );
    const created: Array<{ job: OptInJob; fields: NewSubscriptionFields; change: ChangeInput & { to: SubscriptionState } }> = [];
    jobs.forEach((job, i) => {
      for (const channel of subscribedChannels(job.user, job.channels)) {
        const fields = { companyId: job.companyId, subscriberId: subscribers[i]!.id, type: job.type, channel, address: addressOf(job.user, channel), signUpUnitId: job.signUpUnitId };
        created.push({ job, fields, change: { ...changeOf(job, channel, now), action: "opt_in", to: targetOf(job, channel) } });
      }
    });
    const subscriptions = await this.store.createSubscriptions(created);
    const texts: Notice[] = [];
    for (const [i, { job, change }] of created.entries()) {
      const subscription = subscriptions[i]!;
      eventsOf(job).push(subscriptionEvent("subscription.created", subscription, undefined, now));
      if (subscription.channel === "TEXT") {
        const kind = change.to === "pending" ? confirmRequestKind(job.type) : welcomeKind(job.type);
        texts.push({ companyId: job.companyId, to: subscription.address, kind, locale: noticeLocale(job.locale), idempotencyKey: change.key });
      } else if (change.to === "pending") {
        await this.emails.sendConfirmation(job.companyId, subscription.address, job.type, change.key);
      }
    }
    await this.notices.sendMany(texts);
  }

  async #writeRepeats(repeats: readonly Repeat[], now: number): Promise<void> {
    if (repeats.length === 0) return;
    const recorded = repeats.flatMap(({ job, subscriptions }) => subscriptions.map((subscription) => ({ job, subscription, change: { ...changeOf(job, subscription.channel, now), action: "opt_in_repeated" as const } })));
    await this.store.recordChanges(recorded);
    const texts: Notice[] = [];
    for (const { job, subscription, change } of recorded) {
      // Still waiting for the Y: ask again rather than claim they are subscribed.
      const kind = subscription.state === "pending" ? confirmRequestKind(job.type) : "already_subscribed";
      if (subscription.channel === "TEXT") {
        // The attempt is recorded and answered (interface 4.4 rule 3), but a burst of them sends one text.
        texts.push({ companyId: job.companyId, to: subscription.address, kind, locale: noticeLocale(job.locale), idempotencyKey: change.key, onePerKindWithinMs: this.settings.repeatTextWindowMs });
      } else if (subscription.state === "pending") {
        await this.emails.sendConfirmation(job.companyId, subscription.address, job.type, change.key);
      }
    }
    await this.notices.sendMany(texts);
  }
}

/** The state an opt-in moves a channel's subscription to: a text is confirmed by a Y reply, an email (when its sign-up unit asks) by a link. */
export function targetOf(job: OptInJob, channel: SubscriptionChannel): "pending" | "active" {
  return !job.singleOptIn && (channel === "TEXT" || job.emailDoubleOptIn === true) ? "pending" : "active";
}

/** What every change record of an opt-in on `channel` says, besides its action and state. */
export function changeOf(job: OptInJob, channel: SubscriptionChannel, now: number): Omit<ChangeInput, "action"> {
  return {
    key: optInChangeId(job, channel),
    source: job.source,
    at: now,
    signUpUnitId: job.signUpUnitId,
    ...(job.externalIdentifiers ? { externalIdentifiers: job.externalIdentifiers } : {}),
    locale: job.locale,
  };
}

/** Whether an opt-in leaves this subscription as it is (only recorded): pending or active, and not a single opt-in confirming a pending one. */
function staysAsItIs(job: OptInJob, channel: SubscriptionChannel, subscription: Subscription): boolean {
  return subscription.state === "active" || (subscription.state === "pending" && targetOf(job, channel) === "pending");
}

/** Jobs by their company, in order. */
export function byCompany(jobs: readonly OptInJob[]): Map<string, OptInJob[]> {
  const grouped = new Map<string, OptInJob[]>();
  for (const job of jobs) grouped.set(job.companyId, [...(grouped.get(job.companyId) ?? []), job]);
  return grouped;
}
