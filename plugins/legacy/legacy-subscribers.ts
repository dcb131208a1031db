import { randomUUID } from "node:crypto";
import {
  CLOCK,
  conflict,
  HttpError,
  inject,
  injectable,
  invalidFields,
  STORAGE,
  type Clock,
  type Collection,
  type DataSubject,
  type Storage,
} from "../../src/index.ts";
import { readPhoneNumber, SUBSCRIPTIONS_SERVICE, type Subscriber, type SubscriptionsService } from "../subscriptions/index.ts";
import { SIGN_UPS, type LegacySignUp } from "./records.ts";
import { parseAddSubscriber, parseRemoveSubscriber, type AddSubscriberRequest, type RemoveSubscriberRequest } from "./schemas.ts";

/** The `source` of the subscription changes these routes make. */
export const LEGACY_SOURCE = "legacy_api";

/** A subscriber as the legacy routes describe it. */
export interface LegacySubscriberView {
  id: string;
  /** E.164. */
  phone: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  /** The TEXT subscriptions of the phone and their state. */
  subscriptions: Array<{ type: string; channel: string; state: string }>;
}

export interface AddedSubscriber extends LegacySubscriberView {
  /** A new subscriber (201) or an existing one (200). */
  created: boolean;
  visitorId?: string;
  creativeId?: string;
}

export interface RemovedSubscriber extends LegacySubscriberView {
  /** The "you are unsubscribed" text was queued. */
  optOutMessageSent: boolean;
}

/**
 * The legacy add and remove subscriber (interface 4.7, 4.8), on the
 * subscriptions service: a single opt-in to the company's MARKETING sign-up
 * unit with its welcome text (the legal disclosure), done in the call so the
 * status says whether the subscriber is new; an opt-out that keeps the subscriber.
 */
@injectable()
export class LegacySubscribers {
  readonly #signUps: Collection<LegacySignUp>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
  ) {
    this.#signUps = storage.collection(SIGN_UPS);
  }

  async add(companyId: string, body: AddSubscriberRequest): Promise<AddedSubscriber> {
    const input = parseAddSubscriber(body);
    const phone = phoneOf(input.phone);
    const unit = (await this.subscriptions.signUpUnits.list(companyId)).find((candidate) => candidate.type === "MARKETING");
    if (!unit) {
      throw new HttpError(400, "no_sign_up_unit", "this company has no MARKETING API sign-up unit for legacy sign-ups (reachkit signup-units create)");
    }
    const user = { phone, email: input.email, firstName: input.firstName, lastName: input.lastName };
    return this.storage.transaction(async () => {
      const applied = await this.subscriptions.optInNow(
        companyId,
        { user: withoutUndefined(user), signUpSourceId: unit.id, singleOptIn: true },
        { source: LEGACY_SOURCE, channels: ["TEXT"] },
      );
      const signUp: LegacySignUp = withoutUndefined({
        id: randomUUID(),
        companyId,
        subscriberId: applied.subscriber.id,
        phone,
        email: input.email,
        visitorId: input.visitorId,
        creativeId: input.creativeId,
        metadata: input.metadata,
        created: applied.subscriberCreated,
        at: this.clock.now(),
      });
      await this.#signUps.insert(signUp);
      const view = await this.#view(companyId, applied.subscriber);
      return withoutUndefined({ ...view, created: applied.subscriberCreated, visitorId: input.visitorId, creativeId: input.creativeId });
    });
  }

  async remove(companyId: string, body: RemoveSubscriberRequest): Promise<RemovedSubscriber> {
    const input = parseRemoveSubscriber(body);
    const phone = phoneOf(input.phone);
    const subscriber = await this.subscriptions.findSubscriber(companyId, { phone });
    if (subscriber?.phone !== phone) {
      throw new HttpError(400, "no_subscriber", "no subscriber of this company has this phone", [{ path: "phone", message: "no subscriber has this phone" }]);
    }
    const alreadyOut = () => conflict("the subscriber is already opted out");
    const before = await this.subscriptions.subscriptions(companyId, { phone });
    if (!before.some((subscription) => subscription.state !== "unsubscribed")) throw alreadyOut();
    const applied = await this.subscriptions.unsubscribeNow(
      companyId,
      { user: { phone }, notification: { disabled: !input.sendOptOutMessage } },
      { source: LEGACY_SOURCE },
    );
    // Another call opted them out between the check and the change.
    if (!applied.subscriptionResponses.some((response) => response.subscriptionUnsubscribeStatus === "NEWLY_UNSUBSCRIBED")) throw alreadyOut();
    return { ...(await this.#view(companyId, subscriber)), optOutMessageSent: input.sendOptOutMessage };
  }

  /** Every sign-up record of the subject's phone or email at the company (privacy requests). */
  async deleteSubjectData(subject: DataSubject): Promise<number> {
    let removed = 0;
    if (subject.phone !== undefined) removed += await this.#signUps.deleteWhere({ companyId: subject.companyId, phone: subject.phone });
    if (subject.email !== undefined) removed += await this.#signUps.deleteWhere({ companyId: subject.companyId, email: subject.email.toLowerCase() });
    return removed;
  }

  /** The sign-up records of a phone at a company, oldest first. */
  async signUpsOf(companyId: string, phone: string): Promise<LegacySignUp[]> {
    return (await this.#signUps.find({ where: { companyId, phone }, orderBy: [{ field: "at" }] })).items;
  }

  async #view(companyId: string, subscriber: Subscriber): Promise<LegacySubscriberView> {
    const subscriptions = await this.subscriptions.subscriptions(companyId, { phone: subscriber.phone! });
    return withoutUndefined({
      id: subscriber.id,
      phone: subscriber.phone!,
      email: subscriber.email,
      firstName: subscriber.firstName,
      lastName: subscriber.lastName,
      subscriptions: subscriptions.map(({ type, channel, state }) => ({ type, channel, state })),
    });
  }
}

/** E.164 of a phone as legacy callers write it, or the 400 naming the field. */
function phoneOf(given: string): string {
  const phone = readPhoneNumber(given);
  if (!phone) throw invalidFields([{ path: "phone", message: "is not a phone number (e.g. +15555555555 or (555) 555-5555)" }]);
  return phone.e164;
}

/** Drops the keys whose value is undefined, so stored documents and answers carry no empty fields. */
function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as T;
}
