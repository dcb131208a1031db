import { randomUUID } from "node:crypto";
import { CLOCK, inject, injectable, STORAGE, type Clock, type Collection, type CollectionSpec, type Storage } from "../../src/index.ts";

/** CHECKOUT_ABANDONED is in the reference's enumerations, and two of its clients send it in unsubscribe lists. */
export const SUBSCRIPTION_TYPES = ["MARKETING", "TRANSACTIONAL", "CHECKOUT_ABANDONED"] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];

/** An API sign-up unit: where programmatic opt-ins come from (`signUpSourceId`), with its type and locale. */
export interface SignUpUnit {
  id: string;
  companyId: string;
  name: string;
  type: SubscriptionType;
  /** Two-letter language code, lower case. */
  language: string;
  /** Two-letter country code, upper case. */
  country: string;
  /**
   * Email opt-ins through this unit stay pending until the subscriber opens
   * the link of a confirmation email (double opt-in). Absent: off.
   */
  emailDoubleOptIn?: boolean;
  createdAt: number;
}

export const SIGN_UP_UNITS = "subscriptions_sign_up_units";

export const signUpUnitsCollection: CollectionSpec = {
  name: SIGN_UP_UNITS,
  indexes: [{ fields: ["companyId", "type", "language", "country"] }],
};

export interface NewSignUpUnit {
  companyId: string;
  type: SubscriptionType;
  language: string;
  country: string;
  name?: string;
  /** Default false. */
  emailDoubleOptIn?: boolean;
}

@injectable()
export class SignUpUnits {
  readonly #units: Collection<SignUpUnit>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.#units = storage.collection(SIGN_UP_UNITS);
  }

  async create(input: NewSignUpUnit): Promise<SignUpUnit> {
    if (!/^[a-z]{2}$/i.test(input.language)) throw new Error("language must be a two-letter code");
    if (!/^[a-z]{2}$/i.test(input.country)) throw new Error("country must be a two-letter code");
    const language = input.language.toLowerCase();
    const country = input.country.toUpperCase();
    return this.#units.insert({
      id: randomUUID(),
      companyId: input.companyId,
      name: input.name ?? `API ${input.type.toLowerCase()} (${language}-${country})`,
      type: input.type,
      language,
      country,
      ...(input.emailDoubleOptIn ? { emailDoubleOptIn: true } : {}),
      createdAt: this.clock.now(),
    });
  }

  /** Turns the double opt-in of email sign-ups through this unit on or off; undefined when the company has no such unit. */
  async setEmailDoubleOptIn(companyId: string, id: string, enabled: boolean): Promise<SignUpUnit | undefined> {
    return this.#units.update(id, { emailDoubleOptIn: enabled }, { where: { companyId } });
  }

  /** The unit with this id, only if it belongs to the company. */
  async get(companyId: string, id: string): Promise<SignUpUnit | undefined> {
    const unit = await this.#units.get(id);
    return unit?.companyId === companyId ? unit : undefined;
  }

  /** Every unit of a company matching a type and locale (opt-in needs exactly one). */
  async match(companyId: string, type: SubscriptionType, language: string, country: string): Promise<SignUpUnit[]> {
    const page = await this.#units.find({
      where: { companyId, type, language: language.toLowerCase(), country: country.toUpperCase() },
    });
    return page.items;
  }

  async list(companyId: string): Promise<SignUpUnit[]> {
    return (await this.#units.find({ where: { companyId }, orderBy: [{ field: "createdAt" }] })).items;
  }
}
