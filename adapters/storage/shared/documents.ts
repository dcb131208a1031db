import { JsonText, type CollectionSpec, type Doc } from "../../../src/index.ts";

/**
 * Document, name and spec rules that every Storage adapter applies the same
 * way. Internal to the adapters: not exported from their index files.
 */

/** A document as an adapter handles it internally: any JSON object with a string id. */
export type StoredDoc = Doc & Record<string, unknown>;

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Collection names become SQL table names, so only plain lower-case identifiers are accepted. */
export function assertCollectionName(name: string): void {
  if (typeof name !== "string" || !COLLECTION_NAME.test(name)) {
    throw new Error(`invalid collection name ${JSON.stringify(name)}: expected ${COLLECTION_NAME}`);
  }
}

/** Field names end up inside SQL text (JSON paths), so only plain identifiers are accepted. */
export function assertFieldName(field: string): void {
  if (validFieldNames.has(field)) return;
  if (typeof field !== "string" || !FIELD_NAME.test(field)) {
    throw new Error(`invalid field name ${JSON.stringify(field)}: expected ${FIELD_NAME}`);
  }
  // Queries name the same few fields over and over: each is checked once.
  if (validFieldNames.size >= 10_000) validFieldNames.clear();
  validFieldNames.add(field);
}

const validFieldNames = new Set<string>();

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function assertId(id: unknown): asserts id is string {
  if (typeof id !== "string" || id.length === 0) throw new TypeError("a document id must be a non-empty string");
}

export function assertLockKey(key: unknown): asserts key is string {
  if (typeof key !== "string" || key.length === 0) throw new TypeError("a lock key must be a non-empty string");
}

/** Validates a document and returns its id and the JSON text that gets stored. */
export function serializeDocument(doc: unknown): { id: string; json: string } {
  if (!isPlainObject(doc)) throw new TypeError("a document must be a JSON object");
  const id = doc.id;
  assertId(id);
  return { id, json: documentJson(doc) };
}

/** JSON.stringify, except that fields given as JsonText are written as their text (after the others). */
function documentJson(doc: Record<string, unknown>): string {
  let others: Record<string, unknown> | undefined;
  let texts = "";
  for (const key in doc) {
    if (doc[key] instanceof JsonText) {
      others = {};
      break;
    }
  }
  if (others === undefined) return JSON.stringify(doc);
  for (const key in doc) {
    const value = doc[key];
    if (value instanceof JsonText) texts += `,${JSON.stringify(key)}:${value.text}`;
    // Plain assignment would set the prototype instead of a field.
    else if (key === "__proto__") Object.defineProperty(others, key, { value, writable: true, enumerable: true, configurable: true });
    else others[key] = value;
  }
  // `others` keeps the id, so its JSON is "{...}" with at least one field.
  return `${JSON.stringify(others).slice(0, -1)}${texts}}`;
}

/**
 * Applies a shallow patch to `target` in place and returns it: `undefined`
 * removes a field, and the id is the key, so it cannot change. Callers pass a
 * private copy of the stored document.
 */
export function applyPatch(target: StoredDoc, patch: unknown, id: string): StoredDoc {
  if (!isPlainObject(patch)) throw new TypeError("a patch must be an object");
  const doc: Record<string, unknown> = target;
  for (const [key, value] of Object.entries(patch)) {
    if (key === "id") {
      if (value !== id) throw new Error("a patch cannot change a document's id");
    } else if (value === undefined) {
      delete doc[key];
    } else if (key === "__proto__") {
      // Plain assignment would set the prototype instead of a field.
      Object.defineProperty(doc, key, { value, writable: true, enumerable: true, configurable: true });
    } else {
      doc[key] = value;
    }
  }
  return target;
}

/**
 * The declaration of `name`, or the error every operation on an undeclared
 * collection rejects with. Handles can be taken before `ensureCollections()`
 * runs (services take them in constructors), so this is checked per call.
 */
export function requireDeclared<V>(declarations: ReadonlyMap<string, V>, name: string): V {
  const declaration = declarations.get(name);
  if (declaration === undefined) {
    throw new Error(`collection "${name}" is not declared: pass it to ensureCollections() first`);
  }
  return declaration;
}

/**
 * One handle per collection name, made on first use. Only the name's syntax is
 * checked here; each operation checks the declaration (see requireDeclared).
 */
export class Handles<H> {
  readonly #handles = new Map<string, H>();
  readonly #create: (name: string) => H;

  constructor(create: (name: string) => H) {
    this.#create = create;
  }

  get(name: string): H {
    assertCollectionName(name);
    let handle = this.#handles.get(name);
    if (handle === undefined) {
      handle = this.#create(name);
      this.#handles.set(name, handle);
    }
    return handle;
  }
}

export interface IndexDeclaration {
  fields: readonly string[];
  unique: boolean;
  /** Documents with one of the fields absent or null are left out (`IndexSpec.sparse`). */
  sparse: boolean;
}

/**
 * The start of an index's name, which tells its kind: the name then spells the whole declaration (with the
 * collection and fields), so an index whose declaration changed gets a new name, and the old one is dropped
 * as no longer declared.
 */
export function indexPrefix(index: { unique: boolean; sparse: boolean }): string {
  return `${index.unique ? "ux" : "ix"}${index.sparse ? "s" : ""}`;
}

/**
 * Whether an index is one that ensureCollections made (and drops once no longer declared): named
 * `<indexPrefix>_<start>`; `start`, when given, is how the engine's names go on for the collection.
 */
export function isDeclaredIndexName(index: string, start = ""): boolean {
  const lower = index.toLowerCase();
  return INDEX_PREFIXES.some((prefix) => lower.startsWith(`${prefix}_${start.toLowerCase()}`));
}

const INDEX_PREFIXES = [false, true].flatMap((unique) => [false, true].map((sparse) => indexPrefix({ unique, sparse })));

/** A declared index with the name its engine knows it by (the name a violated unique key reports). */
export interface NamedIndex extends IndexDeclaration {
  name: string;
}

export interface CollectionDeclaration {
  name: string;
  indexes: IndexDeclaration[];
  largeDocuments: boolean;
  /** Each field once, in order of first mention. */
  fieldsReadAlone: string[];
}

/**
 * Validates `ensureCollections()` input before anything changes, and merges
 * repeated names (each later entry adds indexes; an index listed twice counts once).
 */
export function parseSpecs(specs: readonly CollectionSpec[]): CollectionDeclaration[] {
  if (!Array.isArray(specs)) throw new Error("ensureCollections expects an array of collection specs");
  const byName = new Map<string, { name: string; indexes: Map<string, IndexDeclaration>; largeDocuments: boolean; fieldsReadAlone: Set<string> }>();
  for (const spec of specs) {
    assertCollectionName(spec?.name);
    const collection = byName.get(spec.name) ?? { name: spec.name, indexes: new Map(), largeDocuments: false, fieldsReadAlone: new Set() };
    byName.set(spec.name, collection);
    if (spec.largeDocuments === true) collection.largeDocuments = true;
    if (spec.fieldsReadAlone !== undefined) {
      if (!Array.isArray(spec.fieldsReadAlone)) throw new Error(`collection ${spec.name}: fieldsReadAlone must be an array of field names`);
      spec.fieldsReadAlone.forEach(assertFieldName);
      for (const field of spec.fieldsReadAlone) if (field !== "id") collection.fieldsReadAlone.add(field);
    }
    for (const index of spec.indexes ?? []) {
      if (!Array.isArray(index?.fields) || index.fields.length === 0) {
        throw new Error(`collection ${spec.name}: an index needs at least one field`);
      }
      index.fields.forEach(assertFieldName);
      const unique = index.unique === true;
      const sparse = index.sparse === true;
      const signature = `${indexPrefix({ unique, sparse })}:${index.fields.join(",")}`;
      if (!collection.indexes.has(signature)) collection.indexes.set(signature, { fields: [...index.fields], unique, sparse });
    }
  }
  return [...byName.values()].map(({ name, indexes, largeDocuments, fieldsReadAlone }) => ({ name, indexes: [...indexes.values()], largeDocuments, fieldsReadAlone: [...fieldsReadAlone] }));
}
