import assert from "node:assert/strict";
import { join } from "node:path";
import { afterEach, describe, it } from "node:test";
import Database from "better-sqlite3";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import { WriteThread } from "../../../adapters/storage/sqlite/write-thread.ts";
import type { Doc, IdPatch, Storage } from "../../../src/ports/storage.ts";
import { statementsOf } from "../../support/sqlite-statements.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

interface Row extends Doc {
  score: number;
  note?: string;
}

const directory = temporaryDirectory("sqlite-write-thread");
let files = 0;
const detached = { detached: true } as const;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

let open: Storage | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

/** A storage on a new file with `count` rows, and the thread already started (its first write waits for it). */
async function storageWithRows(count: number, options: { writeThread?: boolean } = {}) {
  const filename = join(directory, `db-${++files}.sqlite`);
  const storage = sqliteStorage({ filename, ...options });
  open = storage;
  await storage.ensureCollections([{ name: "rows", indexes: [{ fields: ["score"] }] }]);
  const rows = storage.collection<Row>("rows");
  await rows.upsertMany(Array.from({ length: count }, (_, index) => ({ id: `r${index}`, score: 0 })));
  await rows.updateEach([{ id: "r0", patch: { score: 0 } }], detached);
  return { filename, storage, rows };
}

const everyRow = (count: number, score: (index: number) => number): Array<IdPatch<Row>> =>
  Array.from({ length: count }, (_, index) => ({ id: `r${index}`, patch: { score: score(index), note: "patched" } }));

describe("sqliteStorage's write thread", () => {
  it("writes detached writes off the event loop: none of their statements runs there, and another connection reads their rows once they resolve", async () => {
    const { filename, rows } = await storageWithRows(100);
    const executed = await statementsOf(() => rows.updateEach(everyRow(100, (index) => index + 1), detached));
    assert.deepEqual(executed.filter((sql) => sql.startsWith("UPDATE")), []);
    const other = new Database(filename, { readonly: true });
    try {
      assert.equal(other.prepare(`SELECT count(*) FROM "rows" WHERE json_extract(doc, '$.note') = 'patched'`).pluck().get(), 100);
    } finally {
      other.close();
    }
  });

  it("with writeThread: false, detached writes are the storage's own connection's", async () => {
    const { rows } = await storageWithRows(10, { writeThread: false });
    const executed = await statementsOf(() => rows.updateEach(everyRow(10, (index) => index + 1), detached));
    assert.equal(executed.filter((sql) => sql.startsWith('UPDATE "rows"')).length, 1);
    assert.equal((await rows.get("r9"))?.score, 10);
  });

  it("lets reads through while it writes, and holds the storage's own writes back until it is done", async () => {
    const { rows, storage } = await storageWithRows(20_000);
    const order: string[] = [];
    const big = rows.updateEach(everyRow(20_000, (index) => index + 1), detached).then(() => order.push("detached write"));
    await nextTurn();
    // Asked while the thread writes (the group was sent during the turn that just ended).
    const read = rows.get("r19999").then((row) => order.push(`read ${row?.score}`));
    let turnsWaited = 0;
    let waiting = true;
    const counting = (async () => {
      while (waiting) {
        await nextTurn();
        turnsWaited++;
      }
    })();
    const transaction = storage
      .transaction(async () => {
        waiting = false;
        order.push(`transaction ${(await rows.get("r19999"))?.score}`);
      })
      .then(() => counting);
    await Promise.all([big, read, transaction]);
    // The read saw the rows as they were; the transaction began after the commit, and the event loop turned while it waited.
    assert.deepEqual(order, ["read 0", "detached write", "transaction 20000"]);
    assert.ok(turnsWaited >= 1, `${turnsWaited} turns while the transaction waited`);
  });

  it("a read begun after a detached write resolved sees it, even where the turn's read batch began before the commit", async () => {
    const { rows } = await storageWithRows(10);
    // Reads from timers: each opens the turn's read batch before the thread's answer comes (in the poll phase).
    const reader = setInterval(() => void rows.get("r9"), 0);
    try {
      for (let round = 1; round <= 200; round++) {
        await rows.updateEach([{ id: "r1", patch: { score: round } }], detached);
        assert.equal((await rows.get("r1"))?.score, round);
      }
    } finally {
      clearInterval(reader);
    }
  });

  it("a thread that cannot open its database fails the writes it holds and says it failed; stop() still ends", async () => {
    const host = { aside: <R>(work: () => Promise<R>) => work(), committedElsewhere: () => {} };
    const thread = new WriteThread(join(directory, "no-such-folder", "db.sqlite"), host, undefined);
    assert.equal(thread.failed, false);
    await assert.rejects(thread.write([{ sql: "SELECT 1", params: [] }]), /unable to open database file|directory does not exist/);
    assert.equal(thread.failed, true);
    await assert.rejects(thread.write([{ sql: "SELECT 1", params: [] }]));
    await thread.stop();
  });

  it("close waits for the detached writes asked before it: they are in the file; one asked after rejects", async () => {
    const { filename, storage, rows } = await storageWithRows(100);
    const written = rows.updateEach(everyRow(100, () => 7), detached);
    await storage.close();
    assert.equal(await written, 100);
    await assert.rejects(rows.updateEach([{ id: "r1", patch: { score: 8 } }], detached), /closed/);
    const reopened = sqliteStorage({ filename });
    open = reopened;
    await reopened.ensureCollections([{ name: "rows", indexes: [{ fields: ["score"] }] }]);
    assert.equal(await reopened.collection<Row>("rows").count({ score: 7 }), 100);
  });
});
