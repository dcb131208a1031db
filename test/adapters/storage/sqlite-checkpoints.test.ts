import assert from "node:assert/strict";
import { copyFileSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { join } from "node:path";
import { describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { BackgroundCheckpoints } from "../../../adapters/storage/sqlite/checkpointer.ts";
import { sqliteStorage } from "../../../adapters/storage/sqlite/index.ts";
import type { Doc } from "../../../src/ports/storage.ts";
import { projectModule, runModuleScript } from "../../support/module-script.ts";
import { temporaryDirectory } from "../../support/temp-dir.ts";

const directory = temporaryDirectory("sqlite-checkpoints");
let files = 0;
const newFile = () => join(directory, `db-${++files}.sqlite`);

interface Note extends Doc {
  body: string;
}

const notes = (from: number, count: number): Note[] =>
  Array.from({ length: count }, (_, index) => ({ id: `note-${from + index}`, body: "x".repeat(2_000) }));

/** The notes the database file holds on its own, without its WAL: what checkpoints copied there. */
function notesInFile(file: string): number {
  const copy = `${file}.copy-${Date.now()}`;
  copyFileSync(file, copy);
  try {
    const db = new Database(copy, { readonly: true });
    try {
      return db.prepare("SELECT count(*) FROM notes").pluck().get() as number;
    } finally {
      db.close();
    }
  } catch {
    return -1; // copied halfway through a checkpoint, or before the table reached the file
  } finally {
    rmSync(copy, { force: true });
  }
}

async function eventually(check: () => boolean): Promise<boolean> {
  for (let tries = 0; tries < 100; tries++) {
    if (check()) return true;
    await sleep(50);
  }
  return false;
}

/**
 * A storage on a new file holding 2,600 notes: about 5 MB in five upserts (past the 4 MB after
 * which the checkpoint worker starts), then 100 notes, about 50 pages, far below any automatic
 * checkpoint of the writer's.
 */
async function storageWithNotes(options: { backgroundCheckpoints?: boolean } = {}) {
  const file = newFile();
  const storage = sqliteStorage({ filename: file, ...options });
  await storage.ensureCollections([{ name: "notes" }]);
  const collection = storage.collection<Note>("notes");
  for (let batch = 0; batch < 5; batch++) await collection.upsertMany(notes(batch * 500, 500));
  await collection.upsertMany(notes(2_500, 100));
  return { file, storage };
}

describe("sqliteStorage background checkpoints", () => {
  it("copy committed writes into the database file without a commit of the writer's doing it, and stop with close(): the WAL is removed", async () => {
    const { file, storage } = await storageWithNotes();
    assert.ok(await eventually(() => notesInFile(file) === 2_600), "the database file holds every note");
    // The worker is running (it copied the last notes): close() must end its connection before the writer's, the last.
    await storage.close();
    assert.equal(existsSync(`${file}-wal`), false);
  });

  it("run in a worker that loads none of the process's own --import modules (a TypeScript loader costs the worker's start more than it does)", () => {
    const file = newFile();
    const marker = join(directory, `worker-loaded-${files}.txt`);
    const preload = join(directory, `preload-${files}.mjs`);
    // Loaded by every thread that inherits the process's flags: it says so when a worker thread loads it.
    writeFileSync(preload, `import { isMainThread } from "node:worker_threads"; import { writeFileSync } from "node:fs"; if (!isMainThread) writeFileSync(${JSON.stringify(marker)}, "loaded");`);
    const script = `
      import { sqliteStorage } from ${projectModule("adapters/storage/sqlite/index.ts")};
      const storage = sqliteStorage({ filename: ${JSON.stringify(file)} });
      await storage.ensureCollections([{ name: "notes" }]);
      const notes = storage.collection("notes");
      // About 5 MB: past the 4 MB after which the worker starts; then a wait for its first copies.
      for (let batch = 0; batch < 5; batch++) await notes.upsertMany(Array.from({ length: 500 }, (_, index) => ({ id: "note-" + (batch * 500 + index), body: "x".repeat(2_000) })));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await storage.close();
    `;
    const child = runModuleScript(script, ["--import", pathToFileURL(preload).href]);
    assert.equal(child.status, 0, child.stderr);
    assert.equal(notesInFile(file), 2_500);
    assert.equal(existsSync(marker), false, "the checkpoint worker loaded the process's --import modules");
  });

  it("can be turned off: then the writer checkpoints at its commits, as SQLite does by default", async () => {
    const { file, storage } = await storageWithNotes({ backgroundCheckpoints: false });
    await sleep(500);
    assert.ok(notesInFile(file) < 2_600, "the last notes are still only in the WAL");
    await storage.close();
    assert.equal(notesInFile(file), 2_600);
  });

  it("that fail give the writer SQLite's own automatic checkpoint back", async () => {
    const writer = new Database(newFile());
    writer.pragma("journal_mode = WAL");
    const autocheckpoint = () => writer.pragma("wal_autocheckpoint", { simple: true });
    // The worker's connection cannot open this file: the worker fails as soon as it starts.
    const checkpoints = new BackgroundCheckpoints(writer, join(directory, "no-such-directory", "db.sqlite"));
    checkpoints.noteWritten(5 * 1024 * 1024);
    assert.equal(autocheckpoint(), 10_000, "a wider bound while the worker checkpoints");
    assert.ok(await eventually(() => autocheckpoint() === 1_000), "SQLite's default once the worker has failed");
    await checkpoints.stop();
    writer.close();
  });
});
