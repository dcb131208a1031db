import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Doc } from "../../ports/storage.ts";
import { assertUnique, ids, rejection, WHERE_PEOPLE, type Job, type Person, type WithStorage } from "./shared.ts";

/** A document of any fields: the patches below write every kind of JSON value. */
interface Loose extends Doc {
  [field: string]: string | number | boolean | null | object | undefined;
}

export function updateTests(withStorage: WithStorage): void {
  describe("updates", () => {
    it("patches shallowly and returns the new document; undefined for a missing id", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a", name: "Ann", age: 30, address: { city: "Oslo" } });
        const updated = await people.update("a", { age: 31, address: { street: "Main" } });
        assert.deepEqual(updated, { id: "a", name: "Ann", age: 31, address: { street: "Main" } });
        assert.deepEqual(await people.get("a"), updated);
        assert.equal(await people.update("missing", { age: 1 }), undefined);
        assert.equal(await people.get("missing"), undefined);
      }));

    it("removes fields patched with undefined", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.insert({ id: "a", name: "Ann", email: "ann@example.com" });
        const updated = await people.update("a", { email: undefined });
        assert.deepEqual(updated, { id: "a", name: "Ann" });
        assert.equal(Object.hasOwn((await people.get("a"))!, "email"), false);
        // The unique value is free again.
        await people.insert({ id: "b", email: "ann@example.com" });
      }));

    it("conditional update: applies when the document matches, otherwise changes nothing", () =>
      withStorage(async (storage) => {
        const jobs = storage.collection<Job>("jobs");
        await jobs.insert({ id: "j", status: "done", attempts: 1 });
        assert.equal(await jobs.update("j", { status: "running" }, { where: { status: "queued" } }), undefined);
        assert.deepEqual(await jobs.get("j"), { id: "j", status: "done", attempts: 1 });
        const updated = await jobs.update("j", { attempts: 2 }, { where: { status: "done", attempts: { lt: 2 } } });
        assert.deepEqual(updated, { id: "j", status: "done", attempts: 2 });
      }));

    it("two concurrent claims of one job: exactly one wins", () =>
      withStorage(async (storage) => {
        const jobs = storage.collection<Job>("jobs");
        await jobs.insert({ id: "j", status: "queued" });
        const claim = (worker: string) =>
          jobs.update("j", { status: "running", owner: worker }, { where: { status: "queued" } });
        const results = await Promise.all([claim("w1"), claim("w2")]);
        const winners = results.filter((r) => r !== undefined);
        assert.equal(winners.length, 1);
        assert.deepEqual(await jobs.get("j"), winners[0]);
      }));

    it("updateWhere and deleteWhere return how many documents they touched", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        assert.equal(await people.updateWhere({ team: "red" }, { team: "crimson", active: undefined }), 2);
        assert.deepEqual(await ids(people.find({ where: { team: "crimson" } })), ["a", "c"]);
        assert.equal(Object.hasOwn((await people.get("a"))!, "active"), false);
        assert.equal(await people.updateWhere({ team: "red" }, { team: "x" }), 0);

        assert.equal(await people.deleteWhere({ team: "blue" }), 2);
        assert.equal(await people.deleteWhere({ team: "blue" }), 0);
        assert.deepEqual(await ids(people.find()), ["a", "c", "d"]);
      }));

    it("updateWhere stores every kind of value as written, and removes fields patched with undefined", () =>
      withStorage(async (storage) => {
        const counters = storage.collection<Loose>("counters");
        await counters.insert({ id: "a", keep: "k", gone: 1, flag: false, text: "old" });
        await counters.insert({ id: "b", keep: "k", gone: { deep: true } });
        const patch = {
          flag: true,
          off: false,
          nothing: null,
          nested: { list: [1, "two", { three: null }, false], empty: {}, none: [] },
          text: `quotes " ' \\ ' é 😀 \u2028 \n\t end`,
          number: 12.5,
          negative: -3,
          large: 1e21,
          gone: undefined,
        };
        assert.equal(await counters.updateWhere({ keep: "k" }, patch), 2);
        const { gone: _removed, ...written } = patch;
        assert.deepEqual(await counters.get("a"), { id: "a", keep: "k", ...written });
        assert.deepEqual(await counters.get("b"), { id: "b", keep: "k", ...written });
        assert.equal(Object.hasOwn((await counters.get("a"))!, "gone"), false);
        assert.deepEqual(await ids(counters.find({ where: { flag: true, nothing: null, number: 12.5 } })), ["a", "b"]);
      }));

    it("updateWhere of indexed fields: the documents are found by their new values, not their old ones", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        assert.equal(await people.updateWhere({ team: "blue" }, { team: "navy", age: 44, email: undefined }), 2);
        assert.deepEqual(await ids(people.find({ where: { team: "navy", age: { gte: 44 } } })), ["b", "e"]);
        assert.deepEqual(await ids(people.find({ where: { team: "blue" } })), []);
        assert.deepEqual(await ids(people.find({ where: { team: "red" } })), ["a", "c"]);

        const mixed = storage.collection<Loose>("mixed");
        await mixed.upsertMany([{ id: "m1", v: 1 }, { id: "m2", v: 1 }, { id: "m3", v: 2 }]);
        assert.equal(await mixed.updateWhere({ v: 1 }, { v: true }), 2);
        assert.deepEqual(await ids(mixed.find({ where: { v: true } })), ["m1", "m2"]);
        assert.equal(await mixed.updateWhere({ v: true }, { v: "it's \"quoted\"" }), 2);
        assert.deepEqual(await ids(mixed.find({ where: { v: "it's \"quoted\"" } })), ["m1", "m2"]);
        assert.equal(await mixed.updateWhere({ id: "m3" }, { v: undefined }), 1);
        assert.deepEqual(await ids(mixed.find({ where: { v: { exists: false } } })), ["m3"]);
        assert.deepEqual(await ids(mixed.find({ where: { v: 2 } })), []);
      }));

    it("updateWhere sets and removes fields whose names hold dots, brackets, quotes or backslashes, each as one field", () =>
      withStorage(async (storage) => {
        const counters = storage.collection<Loose>("counters");
        await counters.insert({ id: "a", "a.b": 1, a: { b: 2 }, "c[0]": 3, c: [4] });
        const patch = JSON.parse(
          '{"a.b": "dot", "c[0]": "bracket", "say \\"hi\\"": "quote", "back\\\\slash": "backslash", "it\'s": "apostrophe", "é 😀": "unicode", "$": "dollar", "__proto__": {"x": 1}}',
        ) as Loose;
        assert.equal(await counters.updateWhere({ id: "a" }, patch), 1);
        const stored = (await counters.get("a"))!;
        assert.equal(Object.getPrototypeOf(stored), Object.prototype);
        assert.deepEqual(Object.fromEntries(Object.entries(stored)), { id: "a", a: { b: 2 }, c: [4], ...Object.fromEntries(Object.entries(patch)) });
        assert.equal(await counters.updateWhere({ id: "a" }, { "a.b": undefined, 'say "hi"': undefined, ["__proto__"]: undefined }), 1);
        const { "a.b": _dot, 'say "hi"': _quote, __proto__: _proto, ...rest } = Object.fromEntries(Object.entries(stored));
        assert.deepEqual(Object.fromEntries(Object.entries((await counters.get("a"))!)), rest);
      }));

    it("updateWhere is all or nothing: a unique violation on its second document leaves the first as it was", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        assertUnique(await rejection(people.updateWhere({ team: "blue" }, { email: "same@example.com", name: "Same" })), "people", ["email"]);
        assertUnique(await rejection(people.updateWhere({ id: "b" }, { email: "ann@example.com" })), "people", ["email"]);
        assert.deepEqual(await people.find({ where: { team: "blue" } }).then((page) => page.items), WHERE_PEOPLE.filter((person) => person.team === "blue"));
        assert.equal(await people.count({ email: "same@example.com" }), 0);
      }));

    it("update stores every kind of value and field name as written, and answers the document as stored", () =>
      withStorage(async (storage) => {
        const counters = storage.collection<Loose>("counters");
        await counters.insert({ id: "a", keep: "k", gone: 1, flag: false, "a.b": 1, a: { b: 2 } });
        const patch: Record<string, string | number | boolean | null | object> = {
          flag: true,
          nothing: null,
          nested: { list: [1, "two", { three: null }, false], empty: {} },
          text: `quotes " ' \\ é 😀 \u2028 end`,
          large: 1e21,
          "a.b": "dot",
          'say "hi"': "quote",
          ["__proto__"]: { x: 1 },
        };
        const updated = await counters.update("a", { ...patch, gone: undefined }, { where: { keep: "k" } });
        const stored = (await counters.get("a"))!;
        assert.deepEqual(updated, stored);
        assert.equal(Object.getPrototypeOf(stored), Object.prototype);
        assert.deepEqual(Object.fromEntries(Object.entries(stored)), { id: "a", keep: "k", a: { b: 2 }, ...Object.fromEntries(Object.entries(patch)) });
        assert.deepEqual(await ids(counters.find({ where: { flag: true, nothing: null, large: 1e21 } })), ["a"]);
      }));

    it("a patch of scalars and arrays replaces what its fields held, keeps the nulls inside its arrays, and a null it names is stored", () =>
      withStorage(async (storage) => {
        const counters = storage.collection<Loose>("counters");
        const held = { keep: "k", held: { deep: { deeper: 1 } }, list: [1, 2, 3], gone: "x", "a.b": 1, a: { b: 2 } };
        await counters.insert({ id: "a", ...held });
        await counters.insert({ id: "b", ...held });
        const patch: Record<string, string | number | boolean | unknown[] | undefined> = {
          held: [null, { x: null }, "two"],
          list: [4],
          gone: undefined,
          "a.b": "dot",
          'say "hi"': "quote",
          ["__proto__"]: "p",
          text: "{ not an object }",
          count: 3,
          flag: false,
        };
        const updated = await counters.update("a", patch);
        assert.equal(await counters.updateWhere({ id: "b" }, patch), 1);
        const { gone: _removed, ...written } = patch;
        for (const id of ["a", "b"]) {
          const stored = (await counters.get(id))!;
          assert.equal(Object.hasOwn(stored, "gone"), false);
          assert.deepEqual(Object.fromEntries(Object.entries(stored)), { id, keep: "k", a: { b: 2 }, ...written });
        }
        assert.deepEqual(updated, await counters.get("a"));
        assert.deepEqual(await ids(counters.find({ where: { count: 3, flag: false } })), ["a", "b"]);
        assert.equal(await counters.updateWhere({ keep: "k" }, { count: null, list: undefined }), 2);
        assert.deepEqual(await ids(counters.find({ where: { count: null, list: { exists: false } } })), ["a", "b"]);
        assert.equal((await counters.get("a"))!.count, null);
      }));

    it("update of indexed fields: the document is found by its new values; a unique violation leaves it as it was", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        assert.deepEqual(await people.update("b", { team: "navy", age: 44 }, { where: { team: "blue" } }), { ...WHERE_PEOPLE.find((person) => person.id === "b")!, team: "navy", age: 44 });
        assert.deepEqual(await ids(people.find({ where: { team: "navy", age: { gte: 44 } } })), ["b"]);
        assert.deepEqual(await ids(people.find({ where: { team: "blue" } })), ["e"]);
        assert.equal(await people.update("b", { team: "x" }, { where: { team: "blue" } }), undefined);
        assertUnique(await rejection(people.update("b", { email: "ann@example.com", name: "Same" })), "people", ["email"]);
        assert.equal((await people.get("b"))!.name, WHERE_PEOPLE.find((person) => person.id === "b")!.name);
        await assert.rejects(people.update("b", { id: "z" }), /id/);
        assert.equal(await people.get("z"), undefined);
      }));

    it("updateWhere refuses a patch that changes the documents' id, and changes nothing", () =>
      withStorage(async (storage) => {
        const people = storage.collection<Person>("people");
        await people.upsertMany(WHERE_PEOPLE);
        await assert.rejects(people.updateWhere({ team: "red" }, { id: "z", name: "Zed" }), /id/);
        assert.deepEqual(await ids(people.find({ where: { name: "Zed" } })), []);
        assert.equal(await people.get("z"), undefined);
      }));
  });
}
