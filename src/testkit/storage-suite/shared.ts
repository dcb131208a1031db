import assert from "node:assert/strict";
import { UniqueConstraintError, type CollectionSpec, type Doc, type Storage } from "../../ports/storage.ts";

// Fixtures and helpers used by more than one topic; those a single topic
// needs live in its own file.

/** Runs `body` against a fresh, empty storage with every collection of {@link SPECS} declared. */
export type WithStorage = (body: (storage: Storage) => Promise<void>) => Promise<void>;

export interface Person extends Doc {
  name?: string | null;
  age?: number | null;
  email?: string | null;
  team?: string;
  active?: boolean;
  tags?: string[];
  address?: { city?: string; street?: string };
}

export interface Job extends Doc {
  status: string;
  owner?: string;
  attempts?: number;
}

export const PEOPLE_INDEXES = [{ fields: ["email"], unique: true }, { fields: ["team", "age"] }] as const;

export const SPECS: CollectionSpec[] = [
  { name: "people", indexes: PEOPLE_INDEXES },
  { name: "pairs", indexes: [{ fields: ["a", "b"], unique: true }] },
  { name: "jobs", indexes: [{ fields: ["status"] }] },
  { name: "counters" },
  { name: "mixed", indexes: [{ fields: ["v"] }] },
  // `note` read alone: every test of "rows" writes its column too.
  { name: "rows", indexes: [{ fields: ["score"] }, { fields: ["group", "score"] }], fieldsReadAlone: ["note"] },
];

export const WHERE_PEOPLE: Person[] = [
  { id: "a", name: "Ann", age: 30, email: "ann@example.com", team: "red", active: true },
  { id: "b", name: "Bob", age: null, team: "blue", active: false },
  { id: "c", name: "Cid", team: "red" },
  { id: "d", name: "Dee", age: 10, email: null, team: "green", active: true },
  { id: "e", name: "Eve", age: 20, team: "blue", active: false },
];

export async function ids<T extends Doc>(page: Promise<{ items: T[] }>): Promise<string[]> {
  return (await page).items.map((item) => item.id);
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected the call to reject");
}

export function assertUnique(error: unknown, collection: string, fields: readonly string[]): void {
  assert.ok(error instanceof UniqueConstraintError, `expected a UniqueConstraintError, got ${String(error)}`);
  assert.equal(error.collection, collection);
  assert.deepEqual([...error.fields], fields);
}

/** The next turn of the event loop. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A promise resolved or rejected from outside. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
