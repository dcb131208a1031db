import { randomUUID } from "node:crypto";
import { CLOCK, inject, injectable, invalidFields, notFound, STORAGE, type Clock, type Collection, type Storage } from "../../src/index.ts";
import { APPOINTMENT_TYPES, type AppointmentType } from "./records.ts";
import { parseTypeInput } from "./schemas.ts";

/** An appointment type as the wire shows it (`POST /events/types` → `{uuid, type}`). */
export interface AppointmentTypeView {
  uuid: string;
  type: string;
}

export const typeView = (record: AppointmentType): AppointmentTypeView => ({ uuid: record.id, type: record.type });

/** Appointment types of a company: what messages and reminders name as `eventType.uuid`. */
@injectable()
export class AppointmentTypes {
  readonly #types: Collection<AppointmentType>;

  constructor(
    @inject(STORAGE) storage: Storage,
    @inject(CLOCK) private readonly clock: Clock,
  ) {
    this.#types = storage.collection(APPOINTMENT_TYPES);
  }

  /** Creates a type (each call a new one, even with a name already used). 400 naming `type` when invalid. */
  async create(companyId: string, input: unknown): Promise<AppointmentTypeView> {
    const { type } = parseTypeInput(input);
    const now = this.clock.now();
    return typeView(await this.#types.insert({ id: randomUUID(), companyId, type: type.trim(), createdAt: now, updatedAt: now }));
  }

  /** 404 unless the company has this type. */
  async get(companyId: string, uuid: string): Promise<AppointmentTypeView> {
    const record = await this.find(companyId, uuid);
    if (!record) throw notFound(`no appointment type ${uuid}`);
    return typeView(record);
  }

  /** Every type of the company, oldest first. */
  async list(companyId: string): Promise<AppointmentTypeView[]> {
    const page = await this.#types.find({ where: { companyId }, orderBy: [{ field: "createdAt" }], limit: 10_000 });
    return page.items.map(typeView);
  }

  /** @internal The type a request names, or a 400 naming `eventType.uuid` (another company's type is unknown too). */
  async referenced(companyId: string, uuid: string): Promise<AppointmentType> {
    const record = await this.find(companyId, uuid);
    if (!record) throw invalidFields([{ path: "eventType.uuid", message: `no appointment type ${uuid}` }]);
    return record;
  }

  /** @internal */
  async find(companyId: string, uuid: string): Promise<AppointmentType | undefined> {
    const record = uuid === "" ? undefined : await this.#types.get(uuid);
    return record?.companyId === companyId ? record : undefined;
  }
}
