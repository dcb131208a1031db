import { inject, injectable, type DataSubject, type OutboxMessage } from "../../src/index.ts";
import type { AddedSubscriber, LegacySubscribers, RemovedSubscriber } from "./legacy-subscribers.ts";
import type { MessagePrefixes } from "./message-prefixes.ts";
import type { LegacySignUp } from "./records.ts";
import {
  parseArchivedMessage,
  parseTransactionalMessage,
  type AddSubscriberRequest,
  type ArchivedMessageRequest,
  type RemoveSubscriberRequest,
  type TransactionalMessageRequest,
} from "./schemas.ts";
import { LEGACY_SUBSCRIBERS, MESSAGE_PREFIXES_SERVICE, TRANSACTIONAL_MESSAGES } from "./tokens.ts";
import type { TransactionalMessages } from "./transactional-messages.ts";

/**
 * The legacy subscriber and message endpoints in process: the routes call
 * exactly these methods, and so can a host app (`kit.plugin("legacy")`).
 * Requests are validated here whatever their static type (a bad one throws the
 * route's 400 `HttpError` naming the field), so both kinds of caller share one code path.
 */
@injectable()
export class LegacyService {
  /** @internal The kit's container builds it (`LEGACY_SERVICE`). */
  constructor(
    /** The text every transactional message of a company starts with. */
    @inject(MESSAGE_PREFIXES_SERVICE) readonly prefixes: MessagePrefixes,
    @inject(LEGACY_SUBSCRIBERS) private readonly subscribers: LegacySubscribers,
    @inject(TRANSACTIONAL_MESSAGES) private readonly messages: TransactionalMessages,
  ) {}

  /** `POST /1/add-subscribers` (interface 4.7): a single opt-in with the welcome text; `created` says 201 or 200. */
  addSubscriber(companyId: string, request: AddSubscriberRequest): Promise<AddedSubscriber> {
    return this.subscribers.add(companyId, request);
  }

  /** `POST /1/subscribers/unsubscribe` (interface 4.8): 400 no such subscriber, 409 already opted out. */
  removeSubscriber(companyId: string, request: RemoveSubscriberRequest): Promise<RemovedSubscriber> {
    return this.subscribers.remove(companyId, request);
  }

  /** `POST /1/messages` (interface 4.10): queues the message, or throws the 400 saying why not. */
  sendTransactional(companyId: string, request: TransactionalMessageRequest): Promise<OutboxMessage> {
    return this.messages.send(companyId, parseTransactionalMessage(request), "transactional");
  }

  /** The archived `POST /v1/messages` (interface 4.9): as `sendTransactional`, but 404 for a bad or unknown number. */
  sendArchived(companyId: string, request: ArchivedMessageRequest): Promise<OutboxMessage> {
    return this.messages.send(companyId, parseArchivedMessage(request), "archived");
  }

  /** What each add-subscriber call of a phone carried (visitor, creative, metadata), oldest first. */
  signUps(companyId: string, phone: string): Promise<LegacySignUp[]> {
    return this.subscribers.signUpsOf(companyId, phone);
  }

  /** The plugin's privacy hook: the sign-up records of the subject's phone or email. */
  deleteSubjectData(subject: DataSubject): Promise<number> {
    return this.subscribers.deleteSubjectData(subject);
  }
}
