import { randomUUID } from "node:crypto";
import {
  CLOCK,
  inject,
  injectable,
  invalidFields,
  notFound,
  STORAGE,
  UniqueConstraintError,
  type Clock,
  type Collection,
  type Storage,
} from "../../src/index.ts";
import type { AppointmentTypes } from "./appointment-types.ts";
import { macrosOf } from "./macros.ts";
import { APPOINTMENT_MESSAGES, MESSAGE_TYPES, type AppointmentMessage, type MessageType } from "./records.ts";
import { parseMessageInput, parseMessagePatch } from "./schemas.ts";
import { APPOINTMENT_TYPES_SERVICE } from "./tokens.ts";

/** An appointment message as the wire shows it (interface 2.8). */
export interface AppointmentMessageView {
  uuid: string;
  eventType: { uuid: string };
  messageType: MessageType;
  text: string;
  macros: string[];
}

export const messageView = (record: AppointmentMessage): AppointmentMessageView => ({
  uuid: record.id,
  eventType: { uuid: record.eventTypeId },
  messageType: record.messageType,
  text: record.text,
  macros: record.macros,
});

/**
 * The texts of appointment types: one per type × messageType. A second create
 * for the same pair answers 400 naming `messageType` and the uuid to update instead.
 */
@injectable()
export class AppointmentMessages {
  readonly #messages: Collection<AppointmentMessage>;

  constructor(
    @inject(STORAGE) private readonly storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
    @inject(APPOINTMENT_TYPES_SERVICE) private readonly types: AppointmentTypes,
  ) {
    this.#messages = storage.collection(APPOINTMENT_MESSAGES);
  }

  async create(companyId: string, input: unknown): Promise<AppointmentMessageView> {
    const valid = parseMessageInput(input);
    return this.storage.transaction(async () => {
      await this.types.referenced(companyId, valid.eventType.uuid);
      await this.#refuseTaken(companyId, valid.eventType.uuid, valid.messageType);
      const now = this.clock.now();
      const record: AppointmentMessage = {
        id: randomUUID(),
        companyId,
        eventTypeId: valid.eventType.uuid,
        messageType: valid.messageType,
        text: valid.text,
        macros: macrosOf(valid.text),
        createdAt: now,
        updatedAt: now,
      };
      return messageView(await this.#insert(record));
    });
  }

  /** 404 unless the company has this message. */
  async get(companyId: string, uuid: string): Promise<AppointmentMessageView> {
    return messageView(await this.#owned(companyId, uuid));
  }

  /**
   * Changes any subset of eventType, messageType and text; `macros` follow the
   * text. Reminders already made keep their sends: each send reads the text of
   * its moment.
   */
  async update(companyId: string, uuid: string, patch: unknown): Promise<AppointmentMessageView> {
    const valid = parseMessagePatch(patch);
    return this.storage.transaction(async () => {
      const current = await this.#owned(companyId, uuid);
      const eventTypeId = valid.eventType?.uuid ?? current.eventTypeId;
      const messageType = valid.messageType ?? current.messageType;
      if (eventTypeId !== current.eventTypeId) await this.types.referenced(companyId, eventTypeId);
      if (eventTypeId !== current.eventTypeId || messageType !== current.messageType) await this.#refuseTaken(companyId, eventTypeId, messageType);
      const text = valid.text ?? current.text;
      const next: AppointmentMessage = { ...current, eventTypeId, messageType, text, macros: macrosOf(text), updatedAt: this.clock.now() };
      try {
        await this.#messages.upsert(next);
      } catch (error) {
        throw this.#takenError(error, next) ?? error;
      }
      return messageView(next);
    });
  }

  /** @internal The messages of a type, in message-type order. */
  async ofType(companyId: string, eventTypeId: string): Promise<AppointmentMessage[]> {
    const { items } = await this.#messages.find({ where: { companyId, eventTypeId } });
    return items.sort((a, b) => MESSAGE_TYPES.indexOf(a.messageType) - MESSAGE_TYPES.indexOf(b.messageType));
  }

  /** @internal The message a step sends, if the type has one. */
  forStep(companyId: string, eventTypeId: string, messageType: MessageType): Promise<AppointmentMessage | undefined> {
    return this.#messages.findOne({ companyId, eventTypeId, messageType });
  }

  async #owned(companyId: string, uuid: string): Promise<AppointmentMessage> {
    const record = uuid === "" ? undefined : await this.#messages.get(uuid);
    if (!record || record.companyId !== companyId) throw notFound(`no appointment message ${uuid}`);
    return record;
  }

  async #refuseTaken(companyId: string, eventTypeId: string, messageType: MessageType): Promise<void> {
    const existing = await this.forStep(companyId, eventTypeId, messageType);
    if (existing) throw takenError(existing.id, messageType);
  }

  async #insert(record: AppointmentMessage): Promise<AppointmentMessage> {
    try {
      return await this.#messages.insert(record);
    } catch (error) {
      throw this.#takenError(error, record) ?? error;
    }
  }

  /** A unique-key race lost to another request: the same 400 as the check before it. */
  #takenError(error: unknown, record: AppointmentMessage): Error | undefined {
    return error instanceof UniqueConstraintError && error.fields.includes("messageType") ? takenError(undefined, record.messageType) : undefined;
  }
}

function takenError(existingId: string | undefined, messageType: MessageType) {
  const which = existingId ? ` (${existingId}): update it with PUT /events/types/messages/${existingId}` : "";
  return invalidFields([{ path: "messageType", message: `this appointment type already has a ${messageType} message${which}` }]);
}
