import { confirmRequestKind, noticeLocale, welcomeKind } from "./notice-templates.ts";
import type { Notice, Notices } from "./notices.ts";
import { identifiersOf, mergeIdentifiers, subscribedChannels } from "./opt-in-fields.ts";
import type { OptInJob } from "./opt-ins.ts";
import type { Subscriber, SubscriptionChannel } from "./records.ts";
import type { SubscriptionEmails } from "./subscription-emails.ts";
import { subscriptionEvent, type PendingEvent } from "./subscription-events.ts";
import type { NewSubscriptionFields, ChangeInput, SubscriptionStore } from "./subscription-store.ts";
import type { SubscriberProfiles } from "./tokens.ts";
import { addressOf } from "./users.ts";

/** A job of a batch, and whether it is its first run (nothing of an earlier run can be stored). */
export interface OptInRun {
  job: OptInJob;
  firstRun: boolean;
}

/** The change record key of a job's opt-in on one channel: a job that runs twice records and texts once. */
export const optInChangeId = (job: OptInJob, channel: SubscriptionChannel) => `${job.requestId}:${channel}:${job.type}`;

/**
 * The batch cut where a job names a phone or email (of its company) that a job before it in the same run
 * names: within a run no job's writes change what another's reads find, so the run's reads are made once
 * for all of it and its fresh opt-ins written together, while each address's opt-ins keep their order.
 */
export function runsOfDistinctAddresses(runs: readonly OptInRun[]): OptInRun[][] {
  const cut: OptInRun[][] = [];
  let seen = new Set<string>();
  for (const run of runs) {
    const { companyId, phone, email } = { companyId: run.job.companyId, ...run.job.user };
    const keys = [phone !== undefined ? `${companyId} phone ${phone}` : undefined, email !== undefined ? `${companyId} email ${email}` : undefined].filter((key) => key !== undefined);
    if (cut.length === 0 || keys.some((key) => seen.has(key))) {
      cut.push([]);
      seen = new Set();
    }
    cut.at(-1)!.push(run);
    for (const key of keys) seen.add(key);
  }
  return cut;
}

/**
 * Fresh opt-ins written together: on its job's first run, an opt-in whose phone and email no subscriber
 * holds and that has no subscription of its type makes one subscriber, a subscription and change record
 * per channel and the channel's first notice, as `OptIns.process` would one after the other. For a batch
 * of them (the job runner's batchHandler): one read of each kind per company for the batch's addresses,
 * one write per table, and each company's texts in one `Outbox.sendMany` (one company read, its drain
 * armed once), where each opt-in alone read and wrote each row and text by itself.
 */
export class FreshOptIns {
  constructor(
    private readonly store: SubscriptionStore,
    private readonly profiles: SubscriberProfiles,
    private readonly notices: Notices,
    private readonly emails: SubscriptionEmails,
  ) {}

  /** Which jobs of a run of distinct addresses are fresh opt-ins: four reads per company. */
  async freshOf(runs: readonly OptInRun[]): Promise<Set<OptInJob>> {
    const taken = new Set<string>();
    for (const [companyId, jobs] of byCompany(runs.filter((run) => run.firstRun).map((run) => run.job))) {
      const phones = jobs.flatMap((job) => (job.user.phone !== undefined ? [job.user.phone] : []));
      const emails = jobs.flatMap((job) => (job.user.email !== undefined ? [job.user.email] : []));
      for (const subscriber of await this.store.subscribersHolding(companyId, "phone", phones)) taken.add(`${companyId} phone ${subscriber.phone}`);
      for (const subscriber of await this.store.subscribersHolding(companyId, "email", emails)) taken.add(`${companyId} email ${subscriber.email}`);
      for (const [channel, addresses] of [["TEXT", phones], ["EMAIL", emails]] as const) {
        for (const subscription of await this.store.subscriptionsAt(companyId, channel, addresses)) taken.add(`${companyId} ${channel} ${subscription.address} ${subscription.type}`);
      }
    }
    const fresh = new Set<OptInJob>();
    for (const { job, firstRun } of runs) {
      const { companyId, user } = job;
      const held = (user.phone !== undefined && taken.has(`${companyId} phone ${user.phone}`)) || (user.email !== undefined && taken.has(`${companyId} email ${user.email}`));
      const subscribed = subscribedChannels(user, job.channels).some((channel) => taken.has(`${companyId} ${channel} ${addressOf(user, channel)} ${job.type}`));
      if (firstRun && !held && !subscribed) fresh.add(job);
    }
    return fresh;
  }

  /** Writes the fresh opt-ins `jobs` (of `freshOf`, in job order); each job's events go to `eventsOf(job)`. */
  async write(jobs: readonly OptInJob[], now: number, eventsOf: (job: OptInJob) => PendingEvent[]): Promise<void> {
    // In the job's transaction, each: a link that fails fails the batch, which runs again one job at a time.
    for (const job of jobs) await this.profiles.link(job.companyId, identifiersOf(job.user, job.externalIdentifiers), { withinTransaction: true });
    const subscribers = await this.store.createSubscribers(
      jobs.map(({ companyId, user, externalIdentifiers, locale }) => ({
        companyId,
        phone: user.phone,
        email: user.email,
        externalIdentifiers: mergeIdentifiers(undefined, externalIdentifiers),
        locale,
        firstName: user.firstName,
        lastName: user.lastName,
        updatedAt: now,
        createdAt: now,
      })),
    );
    const created: Array<{ job: OptInJob; fields: NewSubscriptionFields; change: ChangeInput & { to: "pending" | "active" } }> = [];
    jobs.forEach((job, i) => {
      for (const channel of subscribedChannels(job.user, job.channels)) created.push({ job, ...this.#subscription(job, channel, subscribers[i]!, now) });
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

  /** A new subscription of the job on `channel` held by `owner`, and its opt-in change (`OptIns`' first opt-in of an address). */
  #subscription(job: OptInJob, channel: SubscriptionChannel, owner: Subscriber, now: number) {
    // A text is confirmed by a Y reply, an email (when its sign-up unit asks) by the link of a confirmation email.
    const confirmFirst = !job.singleOptIn && (channel === "TEXT" || job.emailDoubleOptIn === true);
    const fields: NewSubscriptionFields = { companyId: job.companyId, subscriberId: owner.id, type: job.type, channel, address: addressOf(job.user, channel), signUpUnitId: job.signUpUnitId };
    const change = {
      key: optInChangeId(job, channel),
      action: "opt_in" as const,
      to: confirmFirst ? ("pending" as const) : ("active" as const),
      source: job.source,
      at: now,
      signUpUnitId: job.signUpUnitId,
      ...(job.externalIdentifiers ? { externalIdentifiers: job.externalIdentifiers } : {}),
      locale: job.locale,
    };
    return { fields, change };
  }
}

function byCompany(jobs: readonly OptInJob[]): Map<string, OptInJob[]> {
  const grouped = new Map<string, OptInJob[]>();
  for (const job of jobs) grouped.set(job.companyId, [...(grouped.get(job.companyId) ?? []), job]);
  return grouped;
}
