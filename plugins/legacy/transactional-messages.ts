import { ACCOUNTS, HttpError, inject, injectable, LINK_SHORTENER, OUTBOX, type Accounts, type Company, type LinkShortener, type Outbox, type OutboxMessage } from "../../src/index.ts";
import { readPhoneNumber, SUBSCRIPTIONS_SERVICE, type SubscriptionsService } from "../subscriptions/index.ts";
import type { LegacyPluginOptions } from "./legacy-plugin.ts";
import { renderPrefix, type MessagePrefixes } from "./message-prefixes.ts";
import { MAX_MESSAGE_LENGTH, type MessageInput } from "./schemas.ts";
import { LEGACY_SETTINGS, MESSAGE_PREFIXES_SERVICE } from "./tokens.ts";

/**
 * The regions whose numbers receive messages (interface §8: US, Canada, UK), as
 * libphonenumber-js finds them from the number: the United States with its
 * territories (PR, VI, GU, MP, AS: US numbers under US rules), Canada, and the
 * United Kingdom with the Crown dependencies numbered in its +44 plan (GG, JE,
 * IM). Other +1 countries (Jamaica, the Bahamas...) are refused.
 */
export const MESSAGE_REGIONS: readonly string[] = ["US", "PR", "VI", "GU", "MP", "AS", "CA", "GB", "GG", "JE", "IM"];

/** The outbox `kind` of these messages. */
export const TRANSACTIONAL_KIND = "transactional";

/** `POST /1/messages` answers 400 for every refusal; the archived `POST /v1/messages` 404 for a bad or unknown number. */
export type MessageEndpoint = "transactional" | "archived";

/**
 * Transactional SMS/MMS to a company's active subscribers (interface 4.9,
 * 4.10): the number is sanitised and its country checked, the company prefix
 * is prepended, and the outbox suppresses the same text to the same number
 * within its duplicate window.
 */
@injectable()
export class TransactionalMessages {
  private readonly regions: readonly string[];

  constructor(
    @inject(SUBSCRIPTIONS_SERVICE) private readonly subscriptions: SubscriptionsService,
    @inject(ACCOUNTS) private readonly accounts: Accounts,
    @inject(OUTBOX) private readonly outbox: Outbox,
    @inject(MESSAGE_PREFIXES_SERVICE) private readonly prefixes: MessagePrefixes,
    @inject(LINK_SHORTENER) private readonly links: LinkShortener,
    @inject(LEGACY_SETTINGS) settings: Required<LegacyPluginOptions>,
  ) {
    this.regions = settings.messageRegions;
  }

  /** Queues the message in the outbox, or throws the HttpError that says why it is not sent. */
  async send(companyId: string, input: MessageInput, endpoint: MessageEndpoint): Promise<OutboxMessage> {
    const to = this.#recipient(input.to, endpoint);
    const eligibilities = await this.subscriptions.eligibility(companyId, { phone: to });
    if (!eligibilities.some(({ subscription, eligibility }) => subscription.channel === "TEXT" && eligibility.isEligible)) {
      throw refusal(endpoint === "archived" ? 404 : 400, "not_subscribed", "no active, opted-in subscriber of this company has this number");
    }
    const company = await this.accounts.getCompany(companyId);
    const text = await this.#text(companyId, company, to, input);
    const message = await this.outbox.send({
      companyId,
      // As just read: the outbox's read of the sender number is spared.
      ...(company !== undefined ? { company } : {}),
      to,
      body: text,
      ...(input.mediaUrl !== undefined ? { mediaUrl: input.mediaUrl } : {}),
      kind: TRANSACTIONAL_KIND,
      suppressDuplicates: true,
      ...(input.messageId !== undefined ? { tags: { messageId: input.messageId } } : {}),
    });
    if (message.status === "suppressed") {
      throw new HttpError(400, "duplicate_message", "the same message went to this number a moment ago; it is not sent again", [
        { path: "body", message: "sent to this number within the duplicate window already" },
      ]);
    }
    return message;
  }

  /** E.164 of a number of an allowed region; a number that is no number answers 404 on the archived endpoint. */
  #recipient(given: string, endpoint: MessageEndpoint): string {
    const phone = readPhoneNumber(given);
    const invalidStatus = endpoint === "archived" ? 404 : 400;
    if (!phone) throw refusal(invalidStatus, "invalid_phone", "is not a phone number");
    if (phone.region === undefined) throw refusal(invalidStatus, "invalid_phone", `${phone.e164} is not an assigned number of any country`);
    if (!this.regions.includes(phone.region)) {
      throw refusal(400, "unsupported_country", `${phone.e164} is a number of ${phone.region}; messages go only to numbers of ${this.regions.join(", ")}`);
    }
    return phone.e164;
  }

  /** The company prefix, the body, then the link: at most MAX_MESSAGE_LENGTH characters. */
  async #text(companyId: string, company: Company | undefined, to: string, input: MessageInput): Promise<string> {
    const { template } = await this.prefixes.template(companyId);
    const firstName = template.includes("{firstName}") ? (await this.subscriptions.findSubscriber(companyId, { phone: to }))?.firstName : undefined;
    // A tracked short link where the campaigns plugin runs (one per number and URL), else the link as given.
    const link = input.link === undefined ? undefined : await this.links.shortenText(companyId, input.link, { source: "message", address: to, channel: "sms" });
    const text = `${renderPrefix(template, { company: company?.name ?? "", firstName })}${input.body}${link !== undefined ? ` ${link}` : ""}`;
    if (text.length > MAX_MESSAGE_LENGTH) {
      throw new HttpError(400, "message_too_long", `with the prefix and link the message has ${text.length} characters; at most ${MAX_MESSAGE_LENGTH}`, [
        { path: "body", message: `the text as sent must be at most ${MAX_MESSAGE_LENGTH} characters` },
      ]);
    }
    return text;
  }
}

/** A refusal about the `to` field. */
function refusal(status: 400 | 404, code: string, message: string): HttpError {
  return new HttpError(status, code, `to: ${message}`, [{ path: "to", message }]);
}
