import { inject, injectable, invalidFields, STORAGE, type Collection, type Storage } from "../../src/index.ts";
import { EVENT_KEYS, type EventKeyRecord } from "./records.ts";
import { MAX_PROPERTY_KEYS } from "./schemas.ts";

/** Event types whose keys are remembered in memory; beyond it the memory starts again. */
const REMEMBERED_TYPES = 10_000;

/**
 * The property keys each custom event type has used, at most 200 per type
 * and company (the reference's limit). Keys are remembered once stored, so an
 * event whose keys its type has had before costs no read.
 */
@injectable()
export class EventPropertyKeys {
  private readonly keys: Collection<EventKeyRecord>;
  private readonly known = new Map<string, Set<string>>();

  constructor(@inject(STORAGE) storage: Storage) {
    this.keys = storage.collection(EVENT_KEYS);
  }

  /** The keys the type has not had yet; 400 naming the first key that would take it past the limit. Stores nothing. */
  async unseen(companyId: string, type: string, keys: readonly string[]): Promise<string[]> {
    const memoryKey = `${companyId}\u0000${type}`;
    const remembered = this.known.get(memoryKey);
    if (remembered && keys.every((key) => remembered.has(key))) return [];
    const stored = (await this.keys.find({ where: { companyId, type }, limit: MAX_PROPERTY_KEYS + keys.length })).items.map((record) => record.key);
    const known = this.#remember(memoryKey, stored);
    const unseen = keys.filter((key) => !known.has(key));
    if (known.size + unseen.length > MAX_PROPERTY_KEYS) {
      const first = unseen[Math.max(0, MAX_PROPERTY_KEYS - known.size)]!;
      throw invalidFields([{ path: `properties.${first}`, message: `the event type already has ${known.size} property keys; at most ${MAX_PROPERTY_KEYS} per event type` }]);
    }
    return unseen;
  }

  /** Records keys of a type (those `unseen` answered, once the event is accepted). */
  async add(companyId: string, type: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.keys.upsertMany(keys.map((key) => ({ id: `${companyId}:${JSON.stringify([type, key])}`, companyId, type, key })));
    this.#remember(`${companyId}\u0000${type}`, keys);
  }

  #remember(memoryKey: string, keys: readonly string[]): Set<string> {
    let known = this.known.get(memoryKey);
    if (!known) {
      if (this.known.size >= REMEMBERED_TYPES) this.known.clear();
      this.known.set(memoryKey, (known = new Set()));
    }
    for (const key of keys) known.add(key);
    return known;
  }
}
