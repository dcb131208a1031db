import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { sqliteStorage } from "../../adapters/storage/sqlite/index.ts";
import { BatchWrite, GroupCommit, type Doc, type Storage } from "../../src/index.ts";
import { projectModule, runModuleScript } from "../support/module-script.ts";
import { statementsOf } from "../support/sqlite-statements.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";
import { wrapStorage } from "../support/storage-wrappers.ts";

interface Item extends Doc {
  name: string;
}

/**
 * A SQLite storage that counts its outermost transactions (the commits) and every transaction asked of it (nested
 * ones, savepoints, included); `transactionsRunConcurrently` as PostgreSQL's when asked.
 */
async function countingStorage(options: { transactionsRunConcurrently?: boolean } = {}): Promise<{ storage: Storage; commits: () => number; transactions: () => number }> {
  const inner = sqliteStorage({ filename: ":memory:" });
  await inner.ensureCollections([{ name: "items", indexes: [] }]);
  let commits = 0;
  let transactions = 0;
  let depth = 0;
  const storage = wrapStorage(inner, {
    ...(options.transactionsRunConcurrently ? { transactionsRunConcurrently: true } : {}),
    async transaction(fn) {
      transactions++;
      if (depth++ === 0) commits++;
      try {
        return await inner.transaction(fn);
      } finally {
        depth--;
      }
    },
  });
  return { storage, commits: () => commits, transactions: () => transactions };
}

const insert = (storage: Storage, name: string) => () => storage.collection<Item>("items").insert({ id: name, name });

/** A few turns of the event loop (real ones: only setTimeout is mocked in the gathering tests). */
async function turns(count = 5): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

/** Whether `promise` has settled by now. */
function settledYet(promise: Promise<unknown>): () => boolean {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

describe("GroupCommit", () => {
  it("commits the writes asked in one turn together; a write that throws rolls back alone and its caller gets its error", async () => {
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage);
    const failing = async () => {
      await insert(storage, "b")();
      throw new Error("b's listener failed");
    };
    // Three callers of one turn, each in a callback of its own (as requests are): microtasks run between them.
    const asked = (write: () => Promise<unknown>) => new Promise<unknown>((resolve, reject) => setImmediate(() => group.run(write).then(resolve, reject)));
    const results = await Promise.allSettled([asked(insert(storage, "a")), asked(failing), asked(insert(storage, "c"))]);
    assert.deepEqual(
      results.map((result) => result.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    assert.equal((results[1] as PromiseRejectedResult).reason.message, "b's listener failed");
    const stored = await storage.collection<Item>("items").find({});
    assert.deepEqual(stored.items.map((item) => item.name).sort(), ["a", "c"]);
    assert.equal(commits(), 1);
    await storage.close();
  });

  it("writes asked while a group commits form the next group, in one commit", async () => {
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage);
    let later: Promise<unknown>[] = [];
    await group.run(async () => {
      // Asked while the first group's transaction is open.
      later = [group.run(insert(storage, "b")), group.run(insert(storage, "c"))];
      return insert(storage, "a")();
    });
    await Promise.all(later);
    assert.equal((await storage.collection<Item>("items").find({})).items.length, 3);
    assert.equal(commits(), 2);
    await storage.close();
  });
  it("while participants are under way, their group commits as soon as each has written, before the turn ends", async () => {
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage);
    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    const committedInTurn: boolean[] = [];
    const participant = (name: string) =>
      group.participate(async () => {
        await Promise.resolve();
        await group.run(insert(storage, name));
        committedInTurn.push(!turnEnded);
      });
    await Promise.all([participant("a"), participant("b"), participant("c")]);
    assert.deepEqual(committedInTurn, [true, true, true]);
    assert.equal(commits(), 1);
    await storage.close();
  });

  it("a participant that ends without writing lets the others' group commit at once", async () => {
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage);
    let turnEnded = false;
    setImmediate(() => (turnEnded = true));
    let committedInTurn: boolean | undefined;
    // Under way first, so the writer's group waits for it; it ends a few microtasks later without writing.
    const leaver = group.participate(async () => {
      await Promise.resolve();
      await Promise.resolve();
    });
    const writer = group.participate(async () => {
      await group.run(insert(storage, "a"));
      committedInTurn = !turnEnded;
    });
    await Promise.all([writer, leaver]);
    assert.equal(committedInTurn, true);
    assert.deepEqual((await storage.collection<Item>("items").find({})).items.map((item) => item.name), ["a"]);
    assert.equal(commits(), 1);
    await storage.close();
  });

  it("writes the items of a batch asked in one group with one call, beside the group's other writes; when that call throws, each item alone, and only the item at fault fails", async () => {
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage);
    const calls: string[][] = [];
    const batch = new BatchWrite<string, string>(async (names) => {
      calls.push([...names]);
      for (const name of names) {
        if (name === "bad") throw new Error("a bad item");
        await insert(storage, name)();
      }
      return names.map((name) => `wrote ${name}`);
    });
    const good = await Promise.all([group.runBatched(batch, "a"), group.run(insert(storage, "b")), group.runBatched(batch, "c")]);
    assert.deepEqual([good[0], good[2]], ["wrote a", "wrote c"]);
    assert.deepEqual(calls, [["a", "c"]]);
    assert.equal(commits(), 1);

    calls.length = 0;
    const results = await Promise.allSettled(["d", "bad", "e"].map((name) => group.runBatched(batch, name)));
    assert.deepEqual(
      results.map((result) => (result.status === "fulfilled" ? result.value : (result.reason as Error).message)),
      ["wrote d", "a bad item", "wrote e"],
    );
    assert.deepEqual(calls, [["d", "bad", "e"], ["d"], ["bad"], ["e"]]);
    const stored = await storage.collection<Item>("items").find({});
    assert.deepEqual(stored.items.map((item) => item.name).sort(), ["a", "b", "c", "d", "e"]);
    await storage.close();
  });

  it("without savepoints, a group's writes share its transaction with no nested one; a write that throws fails its caller alone", async () => {
    const { storage, transactions } = await countingStorage();
    const group = new GroupCommit(storage, { savepoints: false });
    await insert(storage, "taken")();
    const before = transactions();
    // The second write is one statement that fails (its id is taken): nothing of it is stored.
    const results = await Promise.allSettled([group.run(insert(storage, "a")), group.run(insert(storage, "taken")), group.run(insert(storage, "c"))]);
    assert.deepEqual(
      results.map((result) => result.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    const stored = await storage.collection<Item>("items").find({});
    assert.deepEqual(stored.items.map((item) => item.name).sort(), ["a", "c", "taken"]);
    // With savepoints they would be four: the shared one and a nested one for each write.
    assert.equal(transactions() - before, 1);
    await storage.close();
  });

  it("without savepoints, a batch write shares the group's transaction with no nested one either", async () => {
    const { storage, transactions } = await countingStorage();
    const group = new GroupCommit(storage, { savepoints: false });
    const items = storage.collection<Item>("items");
    // One storage call, atomic on its own, as the webhooks' outcomes (updateEach).
    const batch = new BatchWrite<string, void>(async (names) => {
      await items.upsertMany(names.map((name) => ({ id: name, name })));
      return names.map(() => undefined);
    });
    const before = transactions();
    await Promise.all([group.runBatched(batch, "a"), group.run(insert(storage, "b")), group.runBatched(batch, "c")]);
    // With the batch's savepoint they would be two.
    assert.equal(transactions() - before, 1);
    assert.deepEqual((await items.find({})).items.map((item) => item.name).sort(), ["a", "b", "c"]);
    await storage.close();
  });

  it("on a storage whose transactions run side by side, each write commits in a transaction of its own; one that throws fails alone", async () => {
    // As PostgreSQL: a group would make the writes wait for each other on one connection.
    const { storage, transactions } = await countingStorage({ transactionsRunConcurrently: true });
    const group = new GroupCommit(storage);
    const failing = async () => {
      await insert(storage, "b")();
      throw new Error("b's listener failed");
    };
    const results = await Promise.allSettled([group.run(insert(storage, "a")), group.run(failing), group.run(insert(storage, "c"))]);
    assert.deepEqual(
      results.map((result) => result.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    const stored = await storage.collection<Item>("items").find({});
    assert.deepEqual(stored.items.map((item) => item.name).sort(), ["a", "c"]);
    // Grouped, they would be four: the shared one and a nested one for each write.
    assert.equal(transactions(), 3);
    await storage.close();
  });
});

describe("GroupCommit gathering (gatherMs)", () => {
  it("commits the writes asked within gatherMs of the group's first one, turns apart, in one commit, once gatherMs has passed", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage, { savepoints: false, gatherMs: 5 });
    const executed = await statementsOf(async () => {
      const first = group.run(insert(storage, "a"));
      const firstSettled = settledYet(first);
      await turns();
      const second = group.run(insert(storage, "b"));
      await turns();
      t.mock.timers.tick(4);
      await turns();
      // Its callers wait: nothing is committed before the group's time is out.
      assert.equal(firstSettled(), false);
      assert.equal(commits(), 0);
      t.mock.timers.tick(1);
      await Promise.all([first, second]);
    });
    assert.equal(commits(), 1);
    // What SQLite ran: one transaction for both writes, no savepoint.
    assert.deepEqual(
      executed.map((sql) => sql.split(" ").slice(0, 2).join(" ")),
      ["BEGIN IMMEDIATE", "INSERT INTO", "INSERT INTO", "COMMIT"],
    );
    assert.deepEqual((await storage.collection<Item>("items").find({})).items.map((item) => item.name).sort(), ["a", "b"]);
    await storage.close();
  });

  it("a gathering group that reaches maxGroupSize commits at once; the writes after it gather in the next group", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage, { savepoints: false, gatherMs: 1_000, maxGroupSize: 3 });
    const full: Promise<unknown>[] = [];
    for (const name of ["a", "b", "c"]) {
      full.push(group.run(insert(storage, name)));
      await turns(1);
    }
    // No timer advanced: the third write completed the group.
    await Promise.all(full);
    assert.equal(commits(), 1);
    const next = group.run(insert(storage, "d"));
    const nextSettled = settledYet(next);
    await turns();
    assert.equal(nextSettled(), false);
    t.mock.timers.tick(1_000);
    await next;
    assert.equal(commits(), 2);
    await storage.close();
  });

  it("writes asked while a gathered group commits are committed right after it, without gathering again", async (t) => {
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const { storage, commits } = await countingStorage();
    const group = new GroupCommit(storage, { savepoints: false, gatherMs: 1_000 });
    let later: Promise<unknown> | undefined;
    const first = group.run(async () => {
      later = group.run(insert(storage, "b"));
      return insert(storage, "a")();
    });
    t.mock.timers.tick(1_000);
    await first;
    const laterSettled = settledYet(later!);
    await turns();
    // No timer advanced since: the second group did not wait for one.
    assert.equal(laterSettled(), true);
    assert.equal(commits(), 2);
    await storage.close();
  });

  it("rejects a gatherMs below 0 and a maxGroupSize below 1", async () => {
    const { storage } = await countingStorage();
    assert.throws(() => new GroupCommit(storage, { gatherMs: -1 }), /gatherMs must be a finite number of at least 0/);
    assert.throws(() => new GroupCommit(storage, { gatherMs: 5, maxGroupSize: 0 }), /maxGroupSize must be a whole number of at least 1/);
    await storage.close();
  });

  it("a gathering group keeps the process alive until it committed: a process with nothing else left to do stores its writes before it exits", async () => {
    const filename = join(temporaryDirectory("gather"), "gather.db");
    // The write is asked and nothing awaits it: only the group's timer is left in the event loop.
    const child = runModuleScript(`
      import { sqliteStorage } from ${projectModule("adapters/storage/sqlite/index.ts")};
      import { GroupCommit } from ${projectModule("src/index.ts")};
      const storage = sqliteStorage({ filename: ${JSON.stringify(filename)}, backgroundCheckpoints: false });
      await storage.ensureCollections([{ name: "items", indexes: [] }]);
      new GroupCommit(storage, { savepoints: false, gatherMs: 200 }).run(() => storage.collection("items").insert({ id: "a", name: "a" }));
    `);
    assert.equal(child.status, 0, child.stderr);
    const storage = sqliteStorage({ filename });
    await storage.ensureCollections([{ name: "items", indexes: [] }]);
    assert.deepEqual(await storage.collection<Item>("items").get("a"), { id: "a", name: "a" });
    await storage.close();
  });
});
