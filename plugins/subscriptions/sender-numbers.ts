import { randomInt } from "node:crypto";
import {
  ACCOUNTS,
  CLOCK,
  inject,
  injectable,
  safeEqual,
  SECRET,
  sign,
  STORAGE,
  UniqueConstraintError,
  type Accounts,
  type Clock,
  type Collection,
  type Storage,
} from "../../src/index.ts";
import { SENDER_NUMBERS, type SenderNumberRecord } from "./records.ts";
import type { SubscriptionsPluginOptions } from "./subscriptions-plugin.ts";
import { SUBSCRIPTIONS_SETTINGS } from "./tokens.ts";

/** An E.164 number, or a short code of 5 or 6 digits. */
const SENDER_NUMBER = /^(\+[1-9]\d{6,14}|\d{5,6})$/;
/** The inbound webhook route; a company's secret path adds its token. */
export const INBOUND_PATH = "/sms/inbound";

/** The sender number belongs to another company: inbound texts are routed by it, so it must be unique. */
export class SenderNumberTakenError extends Error {
  constructor(readonly number: string) {
    super(`the sender number ${number} belongs to another company`);
    this.name = "SenderNumberTakenError";
  }
}

/** Providers differ on the leading "+": "15551234567" and "+15551234567" are one number. */
export function normalizeSenderNumber(text: string): string {
  const compact = text.replace(/[\s()-]/g, "");
  return /^\d{7,15}$/.test(compact) ? `+${compact}` : compact;
}

/** A fictitious North American number (555 exchange) for companies that have not set theirs. */
export const fictitiousSenderNumber = (): string => `+1555${String(randomInt(0, 10_000_000)).padStart(7, "0")}`;

/**
 * Each company's sender number (stored on the company, which the outbox sends
 * from) and the index that routes an inbound text to the company whose number
 * it was sent to. Also the secret path of the inbound webhook.
 */
@injectable()
export class SenderNumbers {
  readonly #numbers: Collection<SenderNumberRecord>;
  private readonly allocate: () => string;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(SECRET) private readonly secret: string,
    @inject(SUBSCRIPTIONS_SETTINGS) options: Required<SubscriptionsPluginOptions>,
  ) {
    this.#numbers = storage.collection(SENDER_NUMBERS);
    this.allocate = options.allocateSenderNumber;
  }

  /** Sets a company's sender number; throws {@link SenderNumberTakenError} when another company has it. */
  async set(companyId: string, number: string): Promise<string> {
    const normalized = normalizeSenderNumber(number);
    if (!SENDER_NUMBER.test(normalized)) throw new RangeError("a sender number is E.164 (+ and digits) or a short code of 5 or 6 digits");
    return this.storage.transaction(async () => {
      if (!(await this.accounts.getCompany(companyId))) throw new RangeError(`no company ${companyId}`);
      const owner = await this.companyOf(normalized);
      if (owner !== undefined && owner !== companyId) throw new SenderNumberTakenError(normalized);
      await this.#numbers.deleteWhere({ companyId });
      await this.#numbers.delete(normalized); // a deleted company's, if any
      await this.#numbers.insert({ id: normalized, companyId, createdAt: this.clock.now() });
      await this.accounts.updateCompany(companyId, { senderNumber: normalized });
      return normalized;
    });
  }

  /** Gives a new company a free number from the allocator (a fictitious one by default). */
  async assign(companyId: string): Promise<string> {
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        return await this.set(companyId, this.allocate());
      } catch (error) {
        if (!(error instanceof SenderNumberTakenError) && !(error instanceof UniqueConstraintError)) throw error;
      }
    }
    throw new Error("could not find a free sender number; set one with `reachkit sender-number set`");
  }

  /** The company whose sender number this is. */
  async companyOf(number: string): Promise<string | undefined> {
    const normalized = normalizeSenderNumber(number);
    // No company can hold what is not a sender number ("", "abc"): and "" is no document id.
    if (!SENDER_NUMBER.test(normalized)) return undefined;
    const indexed = await this.#numbers.get(normalized);
    if (indexed && (await this.accounts.getCompany(indexed.companyId))) return indexed.companyId;
    // A number set directly on the company (Accounts.updateCompany) still routes.
    const companies = await this.accounts.listCompanies();
    return companies.find((company) => company.senderNumber === normalized)?.id;
  }

  /** The path, secret token included, that an SMS provider that does not sign its requests must call. */
  webhookPath(companyId: string): string {
    return `${INBOUND_PATH}/${this.#token(companyId)}`;
  }

  /** Constant-time check of a webhook path token against the company's. */
  verifyToken(companyId: string, token: string): boolean {
    return safeEqual(token, this.#token(companyId));
  }

  #token(companyId: string): string {
    return sign(this.secret, "reachkit.sms-inbound", companyId);
  }
}
