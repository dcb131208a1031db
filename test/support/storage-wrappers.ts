import type { Collection, Doc, Storage } from "../../src/ports/storage.ts";

/** `storage` with some of its methods replaced by `overrides`; every other call goes to it unchanged. */
export function wrapStorage(storage: Storage, overrides: Partial<Storage>): Storage {
  return {
    name: storage.name,
    ...(storage.transactionsRunConcurrently === undefined ? {} : { transactionsRunConcurrently: storage.transactionsRunConcurrently }),
    ensureCollections: (specs) => storage.ensureCollections(specs),
    collection: (name) => storage.collection(name),
    transaction: (fn) => storage.transaction(fn),
    ...(storage.afterCommit ? { afterCommit: (work: () => unknown) => storage.afterCommit!(work) } : {}),
    close: () => storage.close(),
    ...overrides,
  };
}

/**
 * `storage` whose collections answer `method` through `replace`, which gets
 * the collection's own method (bound) and the collection's name, and returns
 * the method to use instead: a slow read, a write that fails on demand, a
 * claim lost to another process.
 */
export function withCollectionMethod<M extends keyof Collection<Doc>>(
  storage: Storage,
  method: M,
  replace: (original: Collection<Doc>[M], collection: string) => Collection<Doc>[M],
): Storage {
  return wrapStorage(storage, {
    collection<T extends Doc>(name: string): Collection<T> {
      const handle = storage.collection<Doc>(name);
      const replaced = replace((handle[method] as (...args: unknown[]) => unknown).bind(handle) as Collection<Doc>[M], name);
      return new Proxy(handle, {
        get(target, property) {
          if (property === method) return replaced;
          const value = Reflect.get(target, property) as unknown;
          return typeof value === "function" ? value.bind(target) : value;
        },
      }) as unknown as Collection<T>;
    },
  });
}
