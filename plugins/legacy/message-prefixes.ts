import { CLOCK, fillPlaceholders, inject, injectable, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { MESSAGE_PREFIXES, type MessagePrefixRecord } from "./records.ts";

/** What the reference service prepends: the merchant's display name (wire-compat). */
export const DEFAULT_MESSAGE_PREFIX = "{company}: ";
export const MAX_MESSAGE_PREFIX_LENGTH = 100;

/** Placeholders of a prefix template. */
export interface PrefixValues {
  /** The company's display name. */
  company: string;
  /** The subscriber's first name; empty when unknown. */
  firstName?: string;
}

/**
 * Fills `{company}` and `{firstName}`. Without a first name the placeholder
 * goes, and so does the space it leaves before punctuation ("Hi {firstName}, " → "Hi, ").
 */
export function renderPrefix(template: string, values: PrefixValues): string {
  const filled = fillPlaceholders(template, { company: values.company, firstName: values.firstName ?? "" });
  return values.firstName ? filled : filled.replace(/ +([,.!?:;])/g, "$1").replace(/ {2,}/g, " ");
}

/** The text every transactional message starts with, per company. */
@injectable()
export class MessagePrefixes {
  readonly #prefixes: Collection<MessagePrefixRecord>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.#prefixes = storage.collection(MESSAGE_PREFIXES);
  }

  /** The company's template, or the default. */
  async template(companyId: string): Promise<{ template: string; custom: boolean }> {
    const record = await this.#prefixes.get(companyId);
    return record ? { template: record.template, custom: true } : { template: DEFAULT_MESSAGE_PREFIX, custom: false };
  }

  /** Sets the company's template (`{company}` and `{firstName}` are filled in; trailing spaces are kept). */
  async set(companyId: string, template: string): Promise<MessagePrefixRecord> {
    if (template.length > MAX_MESSAGE_PREFIX_LENGTH) throw new RangeError(`a message prefix has at most ${MAX_MESSAGE_PREFIX_LENGTH} characters`);
    return this.#prefixes.upsert({ id: companyId, companyId, template, updatedAt: this.clock.now() });
  }

  /** Back to the default; false when the company had none of its own. */
  reset(companyId: string): Promise<boolean> {
    return this.#prefixes.delete(companyId);
  }
}
